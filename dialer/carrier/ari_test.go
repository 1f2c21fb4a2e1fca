package carrier

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// ariRecorded is one request an ariFakeServer received.
type ariRecorded struct {
	Method, Path string
	Query        url.Values
	User, Pass   string
	Body         string
	ContentType  string
}

// ariFakeServer answers every request with status and body and records it.
type ariFakeServer struct {
	*httptest.Server
	mu     sync.Mutex
	reqs   []ariRecorded
	status int
	body   string
}

func newARIFakeServer(t *testing.T, status int, body string) *ariFakeServer {
	t.Helper()
	f := &ariFakeServer{status: status, body: body}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		user, pass, _ := r.BasicAuth()
		f.mu.Lock()
		f.reqs = append(f.reqs, ariRecorded{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), User: user, Pass: pass,
			Body: string(data), ContentType: r.Header.Get("Content-Type")})
		status, body := f.status, f.body
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(f.Close)
	return f
}

// answer makes the server answer status and body from now on (the carrier
// may have requests of its own under way, e.g. cleaning up after a call).
func (f *ariFakeServer) answer(status int, body string) {
	f.mu.Lock()
	f.status, f.body = status, body
	f.mu.Unlock()
}

func (f *ariFakeServer) last(t *testing.T) ariRecorded {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.reqs) == 0 {
		t.Fatal("no request")
	}
	return f.reqs[len(f.reqs)-1]
}

// newTestARI builds an ARI carrier for base with app "outdial" and
// password "s3cret".
func newTestARI(t *testing.T, base string, extra map[string]any) *ari {
	t.Helper()
	creds := map[string]any{"ari_endpoint": base, "app_name": "outdial", "app_password": "s3cret", "ws_client_name": "agent"}
	for k, v := range extra {
		creds[k] = v
	}
	c, err := New(ARI, creds, Options{})
	if err != nil {
		t.Fatal(err)
	}
	a := c.(*ari)
	a.timing.eventsWait = 0 // no events websocket here
	return a
}

func TestARINewValidates(t *testing.T) {
	for _, creds := range []map[string]any{
		{"app_name": "a"},
		{"ari_endpoint": "ftp://pbx", "app_name": "a"},
		{"ari_endpoint": "http://pbx:8088"},
	} {
		if _, err := New(ARI, creds, Options{}); err == nil {
			t.Fatalf("%v: no error", creds)
		}
	}
	c, err := New(ARI, map[string]any{"app_name": "a"}, Options{BaseURLs: map[string]string{ARI: "http://pbx:8088/"}})
	if err != nil || c.(*ari).base != "http://pbx:8088" || c.(*ari).dialTemplate != "PJSIP/{number}" {
		t.Fatalf("BaseURLs fallback: %v %v", c, err)
	}
}

func TestARIPlaceWireFormat(t *testing.T) {
	f := newARIFakeServer(t, 200, `{"id":"outdial-outdial-42","name":"Local/+14155550123@from-internal-0001;1","state":"Down"}`)
	a := newTestARI(t, f.URL+"/", map[string]any{"dial_template": "Local/{number}@from-internal"})
	placed, err := a.Place(context.Background(), Call{AttemptID: 42, To: "+14155550123", From: "+14155550100",
		AnswerURL: "http://x/answer", StatusURL: "http://x/status", RingTimeout: 59500 * time.Millisecond, TimeLimit: time.Hour})
	if err != nil || placed.ProviderCallID != "outdial-outdial-42" {
		t.Fatalf("Place = %+v, %v", placed, err)
	}
	r := f.last(t)
	want := url.Values{"endpoint": {"Local/+14155550123@from-internal"}, "app": {"outdial"}, "appArgs": {"attempt_id=42"},
		"otherChannelId": {"outdial-outdial-42-far"}, "callerId": {"+14155550100"}, "timeout": {"60"}}
	if r.Method != "POST" || r.Path != "/ari/channels/outdial-outdial-42" || r.Query.Encode() != want.Encode() {
		t.Fatalf("request %s %s?%s, want POST /ari/channels/outdial-outdial-42?%s", r.Method, r.Path, r.Query.Encode(), want.Encode())
	}
	if r.User != "outdial" || r.Pass != "s3cret" || r.ContentType != "application/json" {
		t.Fatalf("auth %s:%s content type %s", r.User, r.Pass, r.ContentType)
	}
	if r.Body != `{"variables":{"OUTDIAL_ATTEMPT_ID":"42","TIMEOUT(absolute)":"3660"}}` {
		t.Fatalf("body %s", r.Body)
	}
	// No caller id (an ARI configuration may have no number), no ring
	// timeout: both left out.
	f.answer(200, `{"id":"outdial-outdial-7"}`)
	if _, err := a.Place(context.Background(), Call{AttemptID: 7, To: "+14155550123"}); err != nil {
		t.Fatal(err)
	}
	if q := f.last(t).Query; q.Has("callerId") || q.Has("timeout") {
		t.Fatalf("query %v", q)
	}
	if b := f.last(t).Body; b != `{"variables":{"OUTDIAL_ATTEMPT_ID":"7"}}` {
		t.Fatalf("body %s", b)
	}
}

func TestARIPlaceErrors(t *testing.T) {
	cases := []struct {
		status int
		body   string
		kind   string
		placed bool
	}{
		{409, `{"message":"Channel with given unique ID already exists"}`, "", true},
		{400, `{"message":"Invalid endpoint"}`, Rejected, false},
		{401, `{"message":"Authentication required"}`, AuthFailed, false},
		{403, `{"error":"Forbidden"}`, AuthFailed, false},
		{404, `{"message":"Stasis app not found"}`, Rejected, false},
		{500, `{"message":"Allocation failed"}`, "", false},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			f := newARIFakeServer(t, tc.status, tc.body)
			a := newTestARI(t, f.URL, nil)
			placed, err := a.Place(context.Background(), Call{AttemptID: 5, To: "+14155550123"})
			if tc.placed {
				if err != nil || placed.ProviderCallID != a.CallID(5) {
					t.Fatalf("409: Place = %+v, %v; want the call placed", placed, err)
				}
				return
			}
			if err == nil || KindOf(err) != tc.kind {
				t.Fatalf("error %v (kind %q), want kind %q", err, KindOf(err), tc.kind)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Fatalf("error leaks the password: %v", err)
			}
			var pe *Error
			if errors.As(err, &pe) && (pe.HTTPStatus != tc.status || pe.Message == "") {
				t.Fatalf("error %+v", pe)
			}
			a.mu.Lock()
			_, followed := a.calls[a.CallID(5)]
			a.mu.Unlock()
			if followed != (tc.kind == "") {
				t.Fatalf("followed = %v after %d", followed, tc.status)
			}
		})
	}
	a := newTestARI(t, "http://127.0.0.1:1", map[string]any{"dial_template": "PJSIP/trunk"})
	if _, err := a.Place(context.Background(), Call{AttemptID: 1, To: "+1415"}); KindOf(err) != Rejected {
		t.Fatalf("template without {number}: %v", err)
	}
}

func TestARIHangUpAndQuery(t *testing.T) {
	f := newARIFakeServer(t, 204, "")
	a := newTestARI(t, f.URL, nil)
	if err := a.HangUp(context.Background(), "outdial-outdial-9"); err != nil {
		t.Fatal(err)
	}
	if r := f.last(t); r.Method != "DELETE" || r.Path != "/ari/channels/outdial-outdial-9" {
		t.Fatalf("hang up request %+v", r)
	}
	f.answer(404, `{"message":"Channel not found"}`)
	if err := a.HangUp(context.Background(), "outdial-outdial-9"); err != nil {
		t.Fatalf("hang up of a gone channel: %v", err)
	}
	st, err := a.Query(context.Background(), "outdial-outdial-9")
	if err != nil || !st.Final || st.Outcome != OutcomeUnknown || st.Raw != "channel_gone" {
		t.Fatalf("query of a gone channel = %+v, %v", st, err)
	}
	f.answer(200, `{"id":"outdial-outdial-9","name":"Local/+1@x-1;1","state":"Up"}`)
	st, err = a.Query(context.Background(), "outdial-outdial-9")
	if err != nil || st.Final || !st.Answered || st.Raw != "state=Up" || st.ProviderCallID != "outdial-outdial-9" {
		t.Fatalf("query of a live channel = %+v, %v", st, err)
	}
	// The channel lookup, then (it is Up) a look for the agent media an
	// earlier process may have given it.
	f.mu.Lock()
	q, m := f.reqs[len(f.reqs)-2], f.reqs[len(f.reqs)-1]
	f.mu.Unlock()
	if q.Method != "GET" || q.Path != "/ari/channels/outdial-outdial-9" || m.Method != "GET" || m.Path != "/ari/channels/outdial-outdial-9-media" {
		t.Fatalf("query requests %+v, %+v", q, m)
	}
	// Now followed (and seen answered): when it is gone it ended answered.
	f.answer(404, `{"message":"Channel not found"}`)
	st, _ = a.Query(context.Background(), "outdial-outdial-9")
	if !st.Final || st.Outcome != OutcomeAnswered || !strings.HasPrefix(st.Raw, "channel_gone") {
		t.Fatalf("query of a followed answered channel gone = %+v", st)
	}
	f.answer(500, "")
	if _, err := a.Query(context.Background(), "x"); err == nil {
		t.Fatal("query 500: no error")
	}
	if err := a.HangUp(context.Background(), "x"); err == nil {
		t.Fatal("hang up 500: no error")
	}
}

func TestARIWebhooksForged(t *testing.T) {
	a := newTestARI(t, "http://pbx:8088", nil)
	w := Webhook{Request: httptest.NewRequest("POST", "/api/v1/telephony/ari/status/1", nil), Body: []byte("{}")}
	if _, err := a.ParseStatus(w); !errors.Is(err, ErrForged) {
		t.Fatalf("ParseStatus: %v", err)
	}
	if _, err := a.VerifyAnswer(w); !errors.Is(err, ErrForged) {
		t.Fatalf("VerifyAnswer: %v", err)
	}
	if ct, body := a.AnswerMarkup(Answer{Greeting: "hi"}); ct == "" || len(body) != 0 {
		t.Fatalf("AnswerMarkup = %q %q", ct, body)
	}
}

func TestARISecretNotPrinted(t *testing.T) {
	a := newTestARI(t, "http://pbx:8088", nil)
	for _, s := range []string{fmt.Sprint(a), fmt.Sprintf("%+v", a), fmt.Sprintf("%#v", a), a.LogValue().String()} {
		if strings.Contains(s, "s3cret") || !strings.Contains(s, "outdial") {
			t.Fatalf("printed %q", s)
		}
	}
}

func TestARIChannelIDs(t *testing.T) {
	a := newTestARI(t, "http://pbx:8088", map[string]any{"app_name": "my app/1"})
	id := a.CallID(123)
	if id != "outdial-my_app_1-123" {
		t.Fatalf("CallID = %q", id)
	}
	cases := []struct {
		id   string
		own  string
		n    int64
		role ariRole
	}{
		{id, id, 123, ariOwn},
		{id + "-far", id, 123, ariFar},
		{id + "-media", id, 123, ariMedia},
		{"outdial-other-123", "", 0, ariNone},
		{"outdial-my_app_1-x", "", 0, ariNone},
		{"1712345.6", "", 0, ariNone},
	}
	for _, tc := range cases {
		own, n, role := a.classify(tc.id)
		if own != tc.own || n != tc.n || role != tc.role {
			t.Fatalf("classify(%q) = %q %d %d, want %q %d %d", tc.id, own, n, role, tc.own, tc.n, tc.role)
		}
	}
}

// TestARIOutcomeTable checks the outcome decisions (ari_calls.go).
func TestARIOutcomeTable(t *testing.T) {
	cases := []struct {
		name    string
		c       ariCall
		outcome string
		raw     string
	}{
		{"answered", ariCall{answered: true, ownGone: true, ownCause: 16, farGone: true, farCause: 16}, OutcomeAnswered, "answered cause=16 far_cause=16"},
		{"busy local", ariCall{dialStatus: "BUSY", ownGone: true, farGone: true, farCause: 17}, OutcomeBusy, "dialstatus=BUSY cause=0 far_cause=17"},
		{"congestion", ariCall{dialStatus: "CONGESTION", ownGone: true}, OutcomeFailed, "dialstatus=CONGESTION cause=0"},
		{"chanunavail", ariCall{dialStatus: "CHANUNAVAIL", ownGone: true}, OutcomeFailed, "dialstatus=CHANUNAVAIL cause=0"},
		{"noanswer", ariCall{dialStatus: "NOANSWER", ownGone: true, ownCause: 19}, OutcomeNoAnswer, "dialstatus=NOANSWER cause=19"},
		{"cancel", ariCall{dialStatus: "CANCEL", ownGone: true, ownCause: 16, hungUp: true}, OutcomeCanceled, "dialstatus=CANCEL cause=16 hung_up"},
		{"far dial", ariCall{farDialStatus: "BUSY", ownGone: true, farGone: true, farCause: 16}, OutcomeBusy, "far_dialstatus=BUSY cause=0 far_cause=16"},
		{"hung up ringing", ariCall{ownGone: true, ownCause: 16, hungUp: true}, OutcomeCanceled, "cause=16 hung_up"},
		{"far cause rejected", ariCall{ownGone: true, farGone: true, farCause: 21}, OutcomeBusy, "cause=0 far_cause=21"},
		{"timeout", ariCall{ownGone: true, ownCause: 19, farGone: true, farCause: 19}, OutcomeNoAnswer, "cause=19 far_cause=19"},
		{"no user response", ariCall{ownGone: true, ownCause: 18}, OutcomeNoAnswer, "cause=18"},
		{"own busy", ariCall{ownGone: true, ownCause: 17}, OutcomeBusy, "cause=17"},
		{"unallocated", ariCall{ownGone: true, ownCause: 1}, OutcomeFailed, "cause=1"},
		{"cause 0 alone", ariCall{ownGone: true}, OutcomeFailed, "cause=0"},
		{"normal unanswered", ariCall{ownGone: true, ownCause: 16}, OutcomeFailed, "cause=16"},
	}
	for _, tc := range cases {
		outcome, raw := tc.c.outcome()
		if outcome != tc.outcome || raw != tc.raw {
			t.Errorf("%s: %s %q, want %s %q", tc.name, outcome, raw, tc.outcome, tc.raw)
		}
	}
	at := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	c := ariCall{id: "x", answered: true, answeredAt: at, ownGone: true, ownCause: 16, endedAt: at.Add(2600 * time.Millisecond)}
	if st := c.finalStatus(); st.DurationSeconds != 3 || !st.Final || !st.Answered || st.ProviderCallID != "x" {
		t.Fatalf("finalStatus = %+v", st)
	}
}

// TestARIBackoff: full jitter, waits drawn from [0, min(30 s, 250 ms·2^n)).
func TestARIBackoff(t *testing.T) {
	low := ariBackoff(250*time.Millisecond, 30*time.Second, func() float64 { return 0 })
	mid := ariBackoff(250*time.Millisecond, 30*time.Second, func() float64 { return 0.5 })
	high := ariBackoff(250*time.Millisecond, 30*time.Second, func() float64 { return 0.999999 })
	for n, want := range []time.Duration{250, 500, 1000, 2000, 4000, 8000, 16000, 30000, 30000} {
		want *= time.Millisecond
		if lo, m, hi := low(n), mid(n), high(n); lo != 0 || m != want/2 || hi >= want || hi < want*99/100 {
			t.Fatalf("backoff(%d) = %v, %v, %v, want 0, %v, just under %v", n, lo, m, hi, want/2, want)
		}
	}
	if d := mid(1000); d != 15*time.Second {
		t.Fatalf("backoff(1000) = %v, want 15s", d)
	}
}

// TestARIEventsURL: ws for http, wss for https, app and subscribeAll.
func TestARIEventsURL(t *testing.T) {
	for base, want := range map[string]string{
		"http://pbx:8088":      "ws://pbx:8088/ari/events?app=outdial&subscribeAll=false",
		"https://pbx:8089/asr": "wss://pbx:8089/asr/ari/events?app=outdial&subscribeAll=false",
	} {
		if got := newTestARI(t, base, nil).eventsURL(); got != want {
			t.Fatalf("eventsURL(%s) = %s, want %s", base, got, want)
		}
	}
}
