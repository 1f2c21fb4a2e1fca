package carrier

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// telnyxTestKey is the API key of the tests' configurations.
const telnyxTestKey = "KEY0123_secret_telnyx"

// telnyxReq is a request a telnyxServer received.
type telnyxReq struct {
	Method, Path, Auth string
	Body               map[string]any
	Raw                string
}

// telnyxServer is an httptest server answering every request with the
// status and body reply chooses, recording what it got.
type telnyxServer struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []telnyxReq
}

func newTelnyxServer(t *testing.T, reply func(r telnyxReq) (int, string)) *telnyxServer {
	t.Helper()
	s := &telnyxServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		q := telnyxReq{Method: r.Method, Path: r.URL.Path, Auth: r.Header.Get("Authorization"), Raw: string(raw)}
		if len(raw) > 0 {
			if err := json.Unmarshal(raw, &q.Body); err != nil {
				t.Errorf("request body is not JSON: %q", raw)
			}
			if ct := r.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q, want application/json", ct)
			}
		}
		s.mu.Lock()
		s.reqs = append(s.reqs, q)
		s.mu.Unlock()
		status, body := reply(q)
		if status == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", "3")
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *telnyxServer) requests() []telnyxReq {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]telnyxReq(nil), s.reqs...)
}

// telnyxCarrier builds a Telnyx carrier against base with extra credentials.
func telnyxCarrier(t *testing.T, base string, extra map[string]any) *telnyx {
	t.Helper()
	creds := map[string]any{"api_key": telnyxTestKey, "connection_id": "1494404757140276705"}
	for k, v := range extra {
		creds[k] = v
	}
	c, err := New(Telnyx, creds, Options{BaseURLs: map[string]string{Telnyx: base}, Now: func() time.Time { return telnyxVectorTime }})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c.(*telnyx)
}

const telnyxDialOK = `{"data":{"call_control_id":"v3:abc","call_leg_id":"leg","call_session_id":"sess","is_alive":false,"record_type":"call"}}`

func TestTelnyxPlaceWireFormat(t *testing.T) {
	agent := &Answer{AttemptID: 42, AgentURL: "wss://agent.example/ws?tenant=a", OptOutToken: testOptOutToken, OptOutURL: testOptOutURL,
		AgentEventsURL: testEventsURL, Context: map[string]string{"first_name": "Ann & Bo", "attempt_id": "ignored", "city": "Zürich",
			"opt_out_token": "spoof", "opt_out_url": "spoof", "token": "spoof", "agent_events_url": "spoof"}}
	tests := []struct {
		name   string
		creds  map[string]any
		call   Call
		want   map[string]any // fields that must be present with these values
		absent []string
	}{
		{name: "greeting call", call: Call{AttemptID: 42, To: "+14155550123", From: "+14155550100",
			StatusURL: "https://svc.example/api/v1/telephony/telnyx/status/42?t=tok", RingTimeout: 60 * time.Second, TimeLimit: time.Hour},
			want: map[string]any{"connection_id": "1494404757140276705", "to": "+14155550123", "from": "+14155550100",
				"timeout_secs": 60.0, "time_limit_secs": 3600.0, "webhook_url": "https://svc.example/api/v1/telephony/telnyx/status/42?t=tok",
				"webhook_url_method": "POST", "client_state": base64.StdEncoding.EncodeToString([]byte(`{"attempt_id":42}`)),
				"command_id": "outdial-attempt-42"},
			absent: []string{"answering_machine_detection", "stream_url", "stream_track", "answer_url"}},
		{name: "bare digits get a plus, timeouts clamp", call: Call{AttemptID: 7, To: "14155550123", From: "14155550100",
			RingTimeout: 2 * time.Second, TimeLimit: 10 * time.Hour},
			want:   map[string]any{"to": "+14155550123", "from": "+14155550100", "timeout_secs": 5.0, "time_limit_secs": 14400.0},
			absent: []string{"webhook_url", "webhook_url_method"}},
		{name: "sip uri kept, long ring clamps", call: Call{AttemptID: 7, To: "sip:100@pbx.example", From: "+14155550100", RingTimeout: 700 * time.Second},
			want: map[string]any{"to": "sip:100@pbx.example", "timeout_secs": 600.0}, absent: []string{"time_limit_secs"}},
		{name: "machine detection from the configuration", creds: map[string]any{"machine_detection": true},
			call: Call{AttemptID: 1, To: "+14155550123", From: "+14155550100"}, want: map[string]any{"answering_machine_detection": "detect"}},
		{name: "machine detection from the call", call: Call{AttemptID: 1, To: "+14155550123", From: "+14155550100", MachineDetection: true},
			want: map[string]any{"answering_machine_detection": "detect"}},
		{name: "agent stream at dial", call: Call{AttemptID: 42, To: "+14155550123", From: "+14155550100", Answer: agent},
			want: map[string]any{"stream_url": "wss://agent.example/ws?agent_events_url=https%3A%2F%2Fsvc.example%2Fapi%2Fv1%2Ftelephony%2Fagent%2F42%3Ft%3Dtok-_9Zx" +
				"&attempt_id=42&city=Z%C3%BCrich&first_name=Ann+%26+Bo" +
				"&opt_out_token=tok-_9Zx&opt_out_url=https%3A%2F%2Fsvc.example%2Fapi%2Fv1%2Ftelephony%2Fopt-out%2F42%3Ft%3Dtok-_9Zx&tenant=a&token=tok-_9Zx",
				"stream_track": "inbound_track", "stream_bidirectional_mode": "rtp", "stream_bidirectional_codec": "PCMU"}},
		{name: "greeting answer adds nothing at dial", call: Call{AttemptID: 3, To: "+14155550123", From: "+14155550100",
			Answer: &Answer{AttemptID: 3, Greeting: "Hi"}}, absent: []string{"stream_url", "stream_track"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newTelnyxServer(t, func(telnyxReq) (int, string) { return http.StatusOK, telnyxDialOK })
			c := telnyxCarrier(t, srv.URL, tc.creds)
			placed, err := c.Place(context.Background(), tc.call)
			if err != nil {
				t.Fatalf("Place: %v", err)
			}
			if placed.ProviderCallID != "v3:abc" {
				t.Fatalf("ProviderCallID = %q, want v3:abc", placed.ProviderCallID)
			}
			reqs := srv.requests()
			if len(reqs) != 1 {
				t.Fatalf("requests = %d, want 1", len(reqs))
			}
			r := reqs[0]
			if r.Method != http.MethodPost || r.Path != "/v2/calls" {
				t.Fatalf("request = %s %s, want POST /v2/calls", r.Method, r.Path)
			}
			if r.Auth != "Bearer "+telnyxTestKey {
				t.Fatalf("Authorization = %q", r.Auth)
			}
			for k, v := range tc.want {
				if got := r.Body[k]; got != v {
					t.Errorf("%s = %#v, want %#v", k, got, v)
				}
			}
			for _, k := range tc.absent {
				if _, ok := r.Body[k]; ok {
					t.Errorf("%s is present (%#v), want absent", k, r.Body[k])
				}
			}
		})
	}
}

func TestTelnyxClientStateRoundTrip(t *testing.T) {
	cs := telnyxClientState(9876543210)
	if id, ok := telnyxAttemptOf(cs); !ok || id != 9876543210 {
		t.Fatalf("telnyxAttemptOf(%q) = %d, %v", cs, id, ok)
	}
	for _, bad := range []string{"", "aGF2ZSBhIG5pY2UgZGF5ID1d", "!!", base64.StdEncoding.EncodeToString([]byte(`{"x":1}`))} {
		if _, ok := telnyxAttemptOf(bad); ok {
			t.Errorf("telnyxAttemptOf(%q) ok, want not", bad)
		}
	}
}

func TestTelnyxErrorMapping(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		kind   string
		code   string
		retry  time.Duration
	}{
		{"dial rate 429", 429, `{"errors":[{"code":"90103","title":"Too many requests","detail":"The dials per second limit has been exceeded."}]}`, RateLimited, "90103", 3 * time.Second},
		{"api rate 429", 429, `{"errors":[{"code":"10011","title":"Too many requests"}]}`, RateLimited, "10011", 3 * time.Second},
		{"90103 in a 422", 422, `{"errors":[{"code":90103,"title":"Too many requests"}]}`, RateLimited, "90103", 0},
		{"unauthorized", 401, `{"errors":[{"code":"10009","title":"Authentication failed"}]}`, AuthFailed, "10009", 0},
		{"forbidden", 403, `{"errors":[{"code":"10010","title":"Authorization failed"}]}`, AuthFailed, "10010", 0},
		{"invalid number", 422, `{"errors":[{"code":"10015","title":"Invalid value","detail":"to must be E.164","source":{"pointer":"/to"}}]}`, Rejected, "10015", 0},
		{"not json 400", 400, `oops`, Rejected, "", 0},
		{"server error", 500, `{"errors":[{"code":"10007","title":"Unexpected error"}]}`, "", "", 0},
		{"bad gateway", 502, `<html>`, "", "", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newTelnyxServer(t, func(telnyxReq) (int, string) { return tc.status, tc.body })
			c := telnyxCarrier(t, srv.URL, nil)
			_, err := c.Place(context.Background(), Call{AttemptID: 1, To: "+14155550123", From: "+14155550100"})
			if err == nil {
				t.Fatal("Place: nil error")
			}
			if got := KindOf(err); got != tc.kind {
				t.Fatalf("KindOf = %q, want %q (%v)", got, tc.kind, err)
			}
			var e *Error
			if tc.kind != "" && errors.As(err, &e) {
				if e.Code != tc.code || e.HTTPStatus != tc.status || e.RetryAfter != tc.retry {
					t.Fatalf("Error = %+v, want code %q status %d retry %s", e, tc.code, tc.status, tc.retry)
				}
			}
			if strings.Contains(err.Error(), telnyxTestKey) {
				t.Fatalf("error leaks the API key: %v", err)
			}
		})
	}
	t.Run("no call_control_id", func(t *testing.T) {
		srv := newTelnyxServer(t, func(telnyxReq) (int, string) { return 200, `{"data":{}}` })
		if _, err := telnyxCarrier(t, srv.URL, nil).Place(context.Background(), Call{AttemptID: 1, To: "+14155550123"}); err == nil {
			t.Fatal("Place: nil error for an answer without call_control_id")
		}
	})
	t.Run("bad agent url", func(t *testing.T) {
		srv := newTelnyxServer(t, func(telnyxReq) (int, string) { return 200, telnyxDialOK })
		c := telnyxCarrier(t, srv.URL, nil)
		_, err := c.Place(context.Background(), Call{AttemptID: 1, To: "+1415", Answer: &Answer{AgentURL: "not a url"}})
		if err == nil || len(srv.requests()) != 0 {
			t.Fatalf("Place = %v with %d requests, want an error and none", err, len(srv.requests()))
		}
	})
}

func TestTelnyxHangUp(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		ok     bool
		kind   string
	}{
		{"ok", 200, `{"data":{"result":"ok"}}`, true, ""},
		{"already ended", 422, `{"errors":[{"code":"90018","title":"Call has already ended","detail":"This call is no longer active and can't receive commands."}]}`, true, ""},
		{"other 422", 422, `{"errors":[{"code":"90015","title":"Invalid call state"}]}`, false, Rejected},
		{"unauthorized", 401, `{"errors":[{"code":"10009"}]}`, false, AuthFailed},
		{"server error", 503, ``, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newTelnyxServer(t, func(telnyxReq) (int, string) { return tc.status, tc.body })
			err := telnyxCarrier(t, srv.URL, nil).HangUp(context.Background(), "v3:a/b")
			if (err == nil) != tc.ok || KindOf(err) != tc.kind {
				t.Fatalf("HangUp = %v (kind %q), want ok %v kind %q", err, KindOf(err), tc.ok, tc.kind)
			}
			r := srv.requests()[0]
			if r.Method != http.MethodPost || r.Path != "/v2/calls/v3:a/b/actions/hangup" || r.Auth != "Bearer "+telnyxTestKey {
				t.Fatalf("request = %s %s (%s)", r.Method, r.Path, r.Auth)
			}
		})
	}
	if err := telnyxCarrier(t, "http://127.0.0.1:1", nil).HangUp(context.Background(), ""); err == nil {
		t.Fatal("HangUp(\"\"): nil error")
	}
}

func TestTelnyxQuery(t *testing.T) {
	tests := []struct {
		name, body string
		status     int
		raw        string
		kind       string
	}{
		{"alive", `{"data":{"call_control_id":"v3:q","is_alive":true,"call_duration":12,"record_type":"call"}}`, 200, "alive", ""},
		{"ended", `{"data":{"call_control_id":"v3:q","is_alive":false,"call_duration":30,"end_time":"2018-02-02T22:25:27Z"}}`, 200, "ended", ""},
		{"unknown call", `{"errors":[{"code":"10005","title":"Resource not found"}]}`, 404, "", Rejected},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newTelnyxServer(t, func(telnyxReq) (int, string) { return tc.status, tc.body })
			st, err := telnyxCarrier(t, srv.URL, nil).Query(context.Background(), "v3:q")
			if KindOf(err) != tc.kind || (tc.kind == "" && err != nil) {
				t.Fatalf("Query err = %v, want kind %q", err, tc.kind)
			}
			if err != nil {
				return
			}
			if st.Final || st.Raw != tc.raw || st.ProviderCallID != "v3:q" {
				t.Fatalf("Query = %+v, want non-final %q", st, tc.raw)
			}
			if r := srv.requests()[0]; r.Method != http.MethodGet || r.Path != "/v2/calls/v3:q" {
				t.Fatalf("request = %s %s", r.Method, r.Path)
			}
		})
	}
}

func TestTelnyxAnswered(t *testing.T) {
	long := strings.Repeat("é", 3005)
	tests := []struct {
		name   string
		answer Answer
		status int
		body   string
		path   string // "" when no request is expected
		want   map[string]any
		ok     bool
	}{
		{name: "greeting is spoken", answer: Answer{AttemptID: 5, Greeting: "Hello <Ann> & co"}, status: 200, body: `{"data":{"result":"ok"}}`,
			path: "/v2/calls/v3:c/actions/speak", ok: true, want: map[string]any{"payload": "Hello <Ann> & co", "payload_type": "text",
				"service_level": "basic", "voice": "female", "language": "en-US", "command_id": "outdial-greeting",
				"client_state": base64.StdEncoding.EncodeToString([]byte(`{"attempt_id":5}`))}},
		{name: "long greeting is cut to 3000 characters", answer: Answer{AttemptID: 5, Greeting: long}, status: 200, body: `{}`,
			path: "/v2/calls/v3:c/actions/speak", ok: true, want: map[string]any{"payload": long[:2*3000]}},
		{name: "agent: nothing to do", answer: Answer{AttemptID: 5, AgentURL: "wss://a.example", Greeting: "Hi"}, ok: true},
		{name: "empty greeting hangs up", answer: Answer{AttemptID: 5}, status: 200, body: `{}`, path: "/v2/calls/v3:c/actions/hangup", ok: true},
		{name: "call ended meanwhile", answer: Answer{AttemptID: 5, Greeting: "Hi"}, status: 422,
			body: `{"errors":[{"code":"90018","title":"Call has already ended"}]}`, path: "/v2/calls/v3:c/actions/speak", ok: true},
		{name: "speak refused", answer: Answer{AttemptID: 5, Greeting: "Hi"}, status: 422,
			body: `{"errors":[{"code":"10015","title":"Invalid value"}]}`, path: "/v2/calls/v3:c/actions/speak", ok: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newTelnyxServer(t, func(telnyxReq) (int, string) { return tc.status, tc.body })
			err := telnyxCarrier(t, srv.URL, nil).Answered(context.Background(), "v3:c", tc.answer)
			if (err == nil) != tc.ok {
				t.Fatalf("Answered = %v, want ok %v", err, tc.ok)
			}
			reqs := srv.requests()
			if tc.path == "" {
				if len(reqs) != 0 {
					t.Fatalf("requests = %+v, want none", reqs)
				}
				return
			}
			if len(reqs) != 1 || reqs[0].Path != tc.path || reqs[0].Method != http.MethodPost {
				t.Fatalf("requests = %+v, want POST %s", reqs, tc.path)
			}
			for k, v := range tc.want {
				if got := reqs[0].Body[k]; got != v {
					t.Errorf("%s = %.60q, want %.60q", k, got, v)
				}
			}
		})
	}
}

func TestTelnyxNewAndSecrets(t *testing.T) {
	if _, err := New(Telnyx, map[string]any{"api_key": "k"}, Options{}); err == nil {
		t.Fatal("New without connection_id: nil error")
	}
	for _, bad := range []string{"not base64!", base64.StdEncoding.EncodeToString(make([]byte, 31))} {
		if _, err := New(Telnyx, map[string]any{"api_key": "k", "connection_id": "1", "webhook_public_key": bad}, Options{}); err == nil {
			t.Errorf("New with webhook_public_key %q: nil error", bad)
		}
	}
	c := telnyxCarrier(t, "http://127.0.0.1:1", nil)
	var _ DialAnswerer = c
	var _ Answerer = c
	if !c.AnswerAtDial() {
		t.Fatal("AnswerAtDial = false")
	}
	var logged strings.Builder
	slog.New(slog.NewTextHandler(&logged, nil)).Info("carrier", "c", c)
	for _, s := range []string{fmt.Sprint(c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c), logged.String()} {
		if strings.Contains(s, telnyxTestKey) {
			t.Fatalf("printed carrier leaks the API key: %s", s)
		}
	}
	_, err := c.Place(context.Background(), Call{AttemptID: 1, To: "+14155550123", From: "+14155550100"})
	if err == nil || strings.Contains(err.Error(), telnyxTestKey) {
		t.Fatalf("transport error = %v (must exist and not leak the key)", err)
	}
}
