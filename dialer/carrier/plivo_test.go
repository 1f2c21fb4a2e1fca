package carrier

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// plivoCapture is a fake API recording requests and answering from a
// per-path function.
type plivoCapture struct {
	t      *testing.T
	srv    *httptest.Server
	mu     sync.Mutex
	reqs   []plivoCaptured
	answer func(method, path, query string) (int, string, http.Header)
}

// plivoCaptured is one request as received.
type plivoCaptured struct {
	Method, Path, Query string
	Header              http.Header
	Body                string
}

func newPlivoCapture(t *testing.T, answer func(method, path, query string) (int, string, http.Header)) *plivoCapture {
	c := &plivoCapture{t: t, answer: answer}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		c.mu.Lock()
		c.reqs = append(c.reqs, plivoCaptured{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Clone(), string(b)})
		c.mu.Unlock()
		status, body, h := c.answer(r.Method, r.URL.Path, r.URL.RawQuery)
		for k, v := range h {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(c.srv.Close)
	return c
}

func (c *plivoCapture) requests() []plivoCaptured {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]plivoCaptured(nil), c.reqs...)
}

// plivoTestCarrier is a carrier of dialect provider against base.
func plivoTestCarrier(t *testing.T, provider, base string, creds map[string]any) *plivoLike {
	t.Helper()
	if creds == nil {
		creds = map[string]any{"auth_id": "MAID", "auth_token": "secret-token"}
	}
	c, err := New(provider, creds, Options{BaseURLs: map[string]string{provider: base},
		Now: func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	return c.(*plivoLike)
}

func TestPlivoPlaceWireFormat(t *testing.T) {
	for _, tc := range []struct {
		provider, path string
		creds          map[string]any
		call           Call
		want           map[string]any
	}{
		{Plivo, "/v1/Account/MAID/Call/", map[string]any{"auth_id": "MAID", "auth_token": "secret-token", "machine_detection": true},
			Call{To: "+14155550123", From: "+14155550100", AnswerURL: "https://svc/a/1?t=x", StatusURL: "https://svc/s/1?t=x",
				RingTimeout: 60 * time.Second, TimeLimit: 3600*time.Second + time.Millisecond},
			map[string]any{"from": "14155550100", "to": "14155550123", "answer_url": "https://svc/a/1?t=x", "answer_method": "POST",
				"hangup_url": "https://svc/s/1?t=x", "hangup_method": "POST", "ring_url": "https://svc/s/1?t=x", "ring_method": "POST",
				"machine_detection": "true", "machine_detection_url": "https://svc/s/1?t=x", "machine_detection_method": "POST",
				"ring_timeout": float64(60), "time_limit": float64(3601)}},
		{Plivo, "/v1/Account/MAID/Call/", nil,
			Call{To: "sip:alice@example.com", From: "14155550100", AnswerURL: "https://svc/a", StatusURL: "https://svc/s"},
			map[string]any{"from": "14155550100", "to": "sip:alice@example.com", "answer_url": "https://svc/a", "answer_method": "POST",
				"hangup_url": "https://svc/s", "hangup_method": "POST", "ring_url": "https://svc/s", "ring_method": "POST"}},
		{Vobiz, "/api/v1/Account/MAID/Call/", nil,
			Call{To: "+919148227303", From: "+919262171438", AnswerURL: "https://svc/a", StatusURL: "https://svc/s",
				MachineDetection: true, RingTimeout: 1500 * time.Millisecond},
			map[string]any{"from": "919262171438", "to": "919148227303", "answer_url": "https://svc/a", "answer_method": "POST",
				"hangup_url": "https://svc/s", "hangup_method": "POST", "ring_url": "https://svc/s", "ring_method": "POST",
				"machine_detection": "true", "machine_detection_url": "https://svc/s", "machine_detection_method": "POST",
				"ring_timeout": float64(2)}},
	} {
		fake := newPlivoCapture(t, func(string, string, string) (int, string, http.Header) {
			return 201, `{"api_id":"a","message":"call fired","request_uuid":"req-1"}`, nil
		})
		c := plivoTestCarrier(t, tc.provider, fake.srv.URL, tc.creds)
		placed, err := c.Place(context.Background(), tc.call)
		if err != nil {
			t.Fatalf("%s: place: %v", tc.provider, err)
		}
		if placed.ProviderCallID != "req-1" {
			t.Fatalf("%s: id = %q, want req-1", tc.provider, placed.ProviderCallID)
		}
		r := fake.requests()[0]
		if r.Method != http.MethodPost || r.Path != tc.path {
			t.Fatalf("%s: request %s %s, want POST %s", tc.provider, r.Method, r.Path, tc.path)
		}
		if ct := r.Header.Get("Content-Type"); ct != "application/json" {
			t.Fatalf("%s: content type %q", tc.provider, ct)
		}
		if tc.provider == Plivo {
			if got := r.Header.Get("Authorization"); got != "Basic TUFJRDpzZWNyZXQtdG9rZW4=" {
				t.Fatalf("plivo auth header %q", got)
			}
			if r.Header.Get("X-Auth-Token") != "" {
				t.Fatal("plivo sent X-Auth-Token")
			}
		} else {
			if r.Header.Get("X-Auth-ID") != "MAID" || r.Header.Get("X-Auth-Token") != "secret-token" || r.Header.Get("Authorization") != "" {
				t.Fatalf("vobiz auth headers %v", r.Header)
			}
		}
		var got map[string]any
		if err := json.Unmarshal([]byte(r.Body), &got); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Fatalf("%s: body\n got %v\nwant %v", tc.provider, got, tc.want)
		}
	}
}

func TestPlivoPlaceErrors(t *testing.T) {
	for _, tc := range []struct {
		status   int
		body     string
		header   http.Header
		kind     string
		retry    time.Duration
		contains string
	}{
		{429, `{"api_id":"x","error":"too many requests"}`, http.Header{"Retry-After": {"7"}}, RateLimited, 7 * time.Second, "too many requests"},
		{401, `{"api_id":"x","error":"authentication credentials invalid"}`, nil, AuthFailed, 0, "credentials invalid"},
		{403, `{"error":"forbidden"}`, nil, AuthFailed, 0, "forbidden"},
		{400, `{"api_id":"x","error":{"to":["invalid number"]}}`, nil, Rejected, 0, "invalid number"},
		{404, `not json`, nil, Rejected, 0, "Not Found"},
		{500, `{"error":"boom"}`, nil, "", 0, "http 500: boom"},
		{201, `{"api_id":"x","message":"call fired"}`, nil, "", 0, "no request_uuid"},
	} {
		fake := newPlivoCapture(t, func(string, string, string) (int, string, http.Header) { return tc.status, tc.body, tc.header })
		_, err := plivoTestCarrier(t, Plivo, fake.srv.URL, nil).Place(context.Background(), Call{To: "+1", From: "+2", AnswerURL: "https://a"})
		if err == nil {
			t.Fatalf("http %d: no error", tc.status)
		}
		if KindOf(err) != tc.kind || !strings.Contains(err.Error(), tc.contains) {
			t.Fatalf("http %d: error %v (kind %q), want kind %q containing %q", tc.status, err, KindOf(err), tc.kind, tc.contains)
		}
		var e *Error
		if errors.As(err, &e) && e.RetryAfter != tc.retry {
			t.Fatalf("http %d: retry after %v, want %v", tc.status, e.RetryAfter, tc.retry)
		}
		if strings.Contains(err.Error(), "secret-token") {
			t.Fatal("error leaks the auth token")
		}
	}
}

func TestPlivoPlaceBulkRequestUUIDAndUnreachable(t *testing.T) {
	fake := newPlivoCapture(t, func(string, string, string) (int, string, http.Header) {
		return 201, `{"message":"call queued","request_uuid":["r1","r2"]}`, nil
	})
	p, err := plivoTestCarrier(t, Plivo, fake.srv.URL, nil).Place(context.Background(), Call{To: "+1", From: "+2", AnswerURL: "https://a"})
	if err != nil || p.ProviderCallID != "r1" {
		t.Fatalf("placed %+v, %v", p, err)
	}
	fake.srv.Close()
	_, err = plivoTestCarrier(t, Plivo, fake.srv.URL, nil).Place(context.Background(), Call{To: "+1", From: "+2", AnswerURL: "https://a"})
	if err == nil || KindOf(err) != "" {
		t.Fatalf("unreachable: %v (kind %q), want a plain error", err, KindOf(err))
	}
}

func TestPlivoQuery(t *testing.T) {
	const live = `{"api_id":"a","call_status":"in-progress","call_uuid":"cu","request_uuid":"rq","direction":"outbound"}`
	const cdr = `{"answer_time":"2022-10-12 21:57:47+05:30","bill_duration":12,"call_duration":13,"call_state":"ANSWER","call_uuid":"cu","hangup_cause_code":4000,"hangup_cause_name":"Normal Hangup"}`
	const busy = `{"answer_time":null,"bill_duration":0,"call_duration":0,"call_state":null,"call_uuid":"cu","hangup_cause_code":3000,"hangup_cause_name":"Busy Line"}`
	const queued = `{"call_status":"queued","request_uuid":"rq","call_uuid":"rq"}`
	for _, tc := range []struct {
		name    string
		answers map[string]string // "live", "cdr", "queued" → body (absent: 404)
		status  int               // for every non-404 answer
		want    Status
		errKind string
		calls   []string
	}{
		{"live", map[string]string{"live": live}, 200,
			Status{ProviderCallID: "cu", RequestID: "rq", Raw: "in-progress", Answered: true}, "", []string{"status=live"}},
		{"cdr answered", map[string]string{"cdr": cdr}, 200,
			Status{ProviderCallID: "cu", Raw: "completed", Answered: true, Final: true, Outcome: OutcomeAnswered, DurationSeconds: 13}, "",
			[]string{"status=live", ""}},
		{"cdr busy", map[string]string{"cdr": busy}, 200,
			Status{ProviderCallID: "cu", Raw: "busy", Final: true, Outcome: OutcomeBusy}, "", []string{"status=live", ""}},
		{"queued", map[string]string{"queued": queued}, 200,
			Status{ProviderCallID: "rq", Raw: "queued"}, "", []string{"status=live", "", "status=queued"}},
		{"unknown", map[string]string{}, 200, Status{}, Rejected, []string{"status=live", "", "status=queued"}},
		{"auth", map[string]string{"live": `{"error":"no"}`}, 401, Status{}, AuthFailed, []string{"status=live"}},
	} {
		fake := newPlivoCapture(t, func(_, _, query string) (int, string, http.Header) {
			key := map[string]string{"status=live": "live", "": "cdr", "status=queued": "queued"}[query]
			if body, ok := tc.answers[key]; ok {
				return tc.status, body, nil
			}
			return 404, `{"api_id":"x","error":"not found"}`, nil
		})
		got, err := plivoTestCarrier(t, Plivo, fake.srv.URL, nil).Query(context.Background(), "cu")
		if KindOf(err) != tc.errKind || (tc.errKind == "" && err != nil) {
			t.Fatalf("%s: error %v, want kind %q", tc.name, err, tc.errKind)
		}
		if !reflect.DeepEqual(withoutReplayKeys(got), tc.want) {
			t.Fatalf("%s: status\n got %+v\nwant %+v", tc.name, got, tc.want)
		}
		var queries []string
		for _, r := range fake.requests() {
			if r.Method != http.MethodGet || r.Path != "/v1/Account/MAID/Call/cu/" {
				t.Fatalf("%s: request %s %s", tc.name, r.Method, r.Path)
			}
			queries = append(queries, r.Query)
		}
		if fmt.Sprint(queries) != fmt.Sprint(tc.calls) {
			t.Fatalf("%s: queries %q, want %q", tc.name, queries, tc.calls)
		}
	}
}

func TestPlivoHangUp(t *testing.T) {
	for _, tc := range []struct {
		name         string
		call, req    int
		wantErr      bool
		wantRequests []string
	}{
		{"live call", 204, 0, false, []string{"DELETE /v1/Account/MAID/Call/id/"}},
		{"request", 404, 204, false, []string{"DELETE /v1/Account/MAID/Call/id/", "DELETE /v1/Account/MAID/Request/id/"}},
		{"ended", 404, 404, false, []string{"DELETE /v1/Account/MAID/Call/id/", "DELETE /v1/Account/MAID/Request/id/"}},
		{"server error", 500, 0, true, []string{"DELETE /v1/Account/MAID/Call/id/"}},
		{"request server error", 404, 503, true, []string{"DELETE /v1/Account/MAID/Call/id/", "DELETE /v1/Account/MAID/Request/id/"}},
	} {
		fake := newPlivoCapture(t, func(_, path, _ string) (int, string, http.Header) {
			if strings.Contains(path, "/Request/") {
				return tc.req, `{"error":"x"}`, nil
			}
			return tc.call, `{"error":"x"}`, nil
		})
		err := plivoTestCarrier(t, Plivo, fake.srv.URL, nil).HangUp(context.Background(), "id")
		if (err != nil) != tc.wantErr {
			t.Fatalf("%s: error %v", tc.name, err)
		}
		var got []string
		for _, r := range fake.requests() {
			got = append(got, r.Method+" "+r.Path)
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.wantRequests) {
			t.Fatalf("%s: requests %q, want %q", tc.name, got, tc.wantRequests)
		}
	}
}

func TestPlivoStringHidesToken(t *testing.T) {
	c := plivoTestCarrier(t, Vobiz, "http://x", map[string]any{"auth_id": "MA_1", "auth_token": "very-secret"})
	for _, s := range []string{fmt.Sprint(c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c), c.LogValue().String()} {
		if strings.Contains(s, "very-secret") || !strings.Contains(s, "vobiz") {
			t.Fatalf("carrier prints as %q", s)
		}
	}
}
