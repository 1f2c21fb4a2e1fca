package cloudonixsim_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer/carrier/cloudonixsim"
)

// receiver is the service side: it records session updates posted to
// /status and answers voice-application requests at /answer with CXML.
type receiver struct {
	srv *httptest.Server

	mu       sync.Mutex
	updates  []map[string]any
	answers  []*http.Request
	bodies   []string
	statuses []string
}

func newReceiver(t *testing.T) *receiver {
	t.Helper()
	rc := &receiver{}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		defer rc.mu.Unlock()
		switch {
		case strings.HasPrefix(r.URL.Path, "/status"):
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Errorf("session update is not JSON: %q", b)
			}
			if ct := r.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("session update Content-Type = %q", ct)
			}
			rc.updates = append(rc.updates, m)
			rc.statuses = append(rc.statuses, m["status"].(string))
			w.WriteHeader(http.StatusNoContent)
		case strings.HasPrefix(r.URL.Path, "/answer"):
			rc.answers = append(rc.answers, r)
			rc.bodies = append(rc.bodies, string(b))
			w.Header().Set("Content-Type", "text/xml")
			io.WriteString(w, `<Response><Say>hi</Say><Hangup/></Response>`)
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) got() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]string(nil), rc.statuses...)
}

func startSim(t *testing.T, cfg cloudonixsim.Config) *cloudonixsim.Server {
	t.Helper()
	s := cloudonixsim.Start(cfg)
	t.Cleanup(s.Close)
	return s
}

// call sends an API request with the simulator's bearer token (key "" =
// none) and returns the status and decoded JSON answer.
func call(t *testing.T, s *cloudonixsim.Server, key, method, path, body string) (int, map[string]any, http.Header) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.URL()+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m, resp.Header
}

func placeBody(rc *receiver, to string) string {
	b, _ := json.Marshal(map[string]any{"destination": to, "caller-id": "+14155550100",
		"url": rc.srv.URL + "/answer/1?t=x", "callback": rc.srv.URL + "/status/1?t=x", "timeLimit": 60,
		"profile": map[string]string{"outdial-attempt-id": "1"}})
	return string(b)
}

func waitFinal(t *testing.T, s *cloudonixsim.Server, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.WaitFinal(ctx, n); err != nil {
		t.Fatalf("waiting for %d final calls: %v (stats %+v)", n, err, s.Stats())
	}
}

func TestCloudonixSimHumanCall(t *testing.T) {
	rc := newReceiver(t)
	s := startSim(t, cloudonixsim.Config{})
	status, m, _ := call(t, s, s.BearerToken(), http.MethodPost, "/calls/"+s.Domain()+"/application", placeBody(rc, "+14155550123"))
	if status != http.StatusOK {
		t.Fatalf("create = %d %v", status, m)
	}
	token, _ := m["token"].(string)
	if len(token) != 32 || m["direction"] != "outbound-api" || m["destination"] != "+14155550123" {
		t.Fatalf("create answer = %v", m)
	}
	waitFinal(t, s, 1)
	if got := strings.Join(rc.got(), ","); got != "ringing,connected,completed" {
		t.Fatalf("session updates = %s", got)
	}
	rec, ok := s.Call(token)
	if !ok || rec.CXML != `<Response><Say>hi</Say><Hangup/></Response>` || rec.CXMLContentType != "text/xml" || rec.AnswerStatus != 200 {
		t.Fatalf("record = %+v", rec)
	}
	rc.mu.Lock()
	ans, body, last := rc.answers[0], rc.bodies[0], rc.updates[2]
	rc.mu.Unlock()
	if ans.Method != http.MethodPost || ans.URL.Query().Get("t") != "x" || !strings.Contains(body, `"Session":"`+token+`"`) ||
		!strings.Contains(body, `"AccountSid":"`+s.Domain()+`"`) {
		t.Fatalf("voice-application request %s %s body %s", ans.Method, ans.URL, body)
	}
	if last["token"] != token || last["callAnswerTime"] == nil || last["callEndTime"] == nil {
		t.Fatalf("final update = %v", last)
	}
	if d, _ := last["domain"].(map[string]any); d["domain"] != s.Domain() {
		t.Fatalf("final update domain = %v", last["domain"])
	}
	st := s.Stats()
	if st.Created != 1 || st.PeakInFlight != 1 || st.InFlight != 0 || st.Callbacks != 3 || st.AnswerRequests != 1 {
		t.Fatalf("stats = %+v", st)
	}
	// The ended session can be fetched but not deleted.
	if status, m, _ := call(t, s, s.BearerToken(), http.MethodGet, "/calls/"+s.Domain()+"/sessions/"+token, ""); status != 200 || m["status"] != "completed" {
		t.Fatalf("get = %d %v", status, m)
	}
	if status, _, _ := call(t, s, s.BearerToken(), http.MethodDelete, "/calls/"+s.Domain()+"/sessions/"+token, ""); status != 404 {
		t.Fatalf("delete of an ended session = %d, want 404", status)
	}
}

func TestCloudonixSimUnansweredOutcomes(t *testing.T) {
	tests := []struct {
		script cloudonixsim.Script
		want   string
	}{
		{cloudonixsim.Script{Outcome: cloudonixsim.Busy}, "ringing,busy"},
		{cloudonixsim.Script{Outcome: cloudonixsim.NoAnswer}, "ringing,noanswer"},
		{cloudonixsim.Script{Outcome: cloudonixsim.Failed, FinalStatus: "nocredit"}, "ringing,nocredit"},
		{cloudonixsim.Script{Outcome: cloudonixsim.Canceled}, "ringing,cancel"},
		{cloudonixsim.Script{Outcome: cloudonixsim.Busy, Duplicate: true}, "ringing,ringing,busy,busy"},
		{cloudonixsim.Script{Outcome: cloudonixsim.Human, OutOfOrder: true}, "completed,connected,ringing"},
		{cloudonixsim.Script{Outcome: cloudonixsim.Busy, LoseFinal: true}, "ringing"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			rc := newReceiver(t)
			s := startSim(t, cloudonixsim.Config{Script: func(cloudonixsim.CallInfo) cloudonixsim.Script { return tt.script }})
			if status, m, _ := call(t, s, s.BearerToken(), http.MethodPost, "/calls/"+s.Domain()+"/application", placeBody(rc, "+14155550123")); status != 200 {
				t.Fatalf("create = %d %v", status, m)
			}
			waitFinal(t, s, 1)
			if got := strings.Join(rc.got(), ","); got != tt.want {
				t.Fatalf("session updates = %s, want %s", got, tt.want)
			}
			if st := s.Stats(); st.InFlight != 0 {
				t.Fatalf("in flight = %d after the end", st.InFlight)
			}
		})
	}
}

func TestCloudonixSimHangUpWhileRinging(t *testing.T) {
	rc := newReceiver(t)
	s := startSim(t, cloudonixsim.Config{Script: func(cloudonixsim.CallInfo) cloudonixsim.Script {
		return cloudonixsim.Script{RingDelay: cloudonixsim.Never}
	}})
	_, m, _ := call(t, s, s.BearerToken(), http.MethodPost, "/calls/"+s.Domain()+"/application", placeBody(rc, "+14155550123"))
	token := m["token"].(string)
	// By numeric domain id too.
	if status, m, _ := call(t, s, s.BearerToken(), http.MethodDelete, "/calls/4242/sessions/"+token, ""); status != 200 {
		t.Fatalf("delete = %d %v", status, m)
	}
	waitFinal(t, s, 1)
	rec, _ := s.Call(token)
	if rec.Status != "cancel" || !rec.HungUp || rec.Answered || rec.AnswerStatus != 0 {
		t.Fatalf("record = %+v", rec)
	}
	if status, _, _ := call(t, s, s.BearerToken(), http.MethodGet, "/calls/"+s.Domain()+"/sessions/nosuch", ""); status != 404 {
		t.Fatalf("get unknown = %d", status)
	}
}

func TestCloudonixSimGetAnswerMethod(t *testing.T) {
	rc := newReceiver(t)
	s := startSim(t, cloudonixsim.Config{AnswerMethod: http.MethodGet})
	call(t, s, s.BearerToken(), http.MethodPost, "/calls/"+s.Domain()+"/application", placeBody(rc, "+14155550123"))
	waitFinal(t, s, 1)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	q := rc.answers[0].URL.Query()
	if rc.answers[0].Method != http.MethodGet || q.Get("t") != "x" || q.Get("CallSid") == "" || q.Get("Direction") != "outbound-api" {
		t.Fatalf("GET voice-application request = %s", rc.answers[0].URL)
	}
}

func TestCloudonixSimRejects(t *testing.T) {
	rc := newReceiver(t)
	s := startSim(t, cloudonixsim.Config{})
	good := placeBody(rc, "+14155550123")
	tests := []struct {
		name, key, domain, body string
		want                    int
	}{
		{"no key", "", s.Domain(), good, 401},
		{"wrong key", "XIwrong", s.Domain(), good, 401},
		{"other domain", s.BearerToken(), "other.cloudonix.net", good, 404},
		{"not json", s.BearerToken(), s.Domain(), "destination=1", 400},
		{"unknown field", s.BearerToken(), s.Domain(), `{"destination":"+14155550123","caller-id":"+1415","url":"http://x/a","to":"1"}`, 400},
		{"no destination", s.BearerToken(), s.Domain(), `{"caller-id":"+14155550100","url":"http://x/a"}`, 400},
		{"bad destination", s.BearerToken(), s.Domain(), `{"destination":"call me","caller-id":"+14155550100","url":"http://x/a"}`, 400},
		{"no caller id", s.BearerToken(), s.Domain(), `{"destination":"+14155550123","url":"http://x/a"}`, 400},
		{"no application", s.BearerToken(), s.Domain(), `{"destination":"+14155550123","caller-id":"+14155550100"}`, 400},
		{"unknown application", s.BearerToken(), s.Domain(), `{"destination":"+14155550123","caller-id":"+14155550100","application":"nope"}`, 400},
		{"relative url", s.BearerToken(), s.Domain(), `{"destination":"+14155550123","caller-id":"+14155550100","url":"/a"}`, 400},
		{"url and cxml", s.BearerToken(), s.Domain(), `{"destination":"+14155550123","caller-id":"+14155550100","url":"http://x/a","cxml":"<Response/>"}`, 400},
		{"bad callback", s.BearerToken(), s.Domain(), `{"destination":"+14155550123","caller-id":"+14155550100","url":"http://x/a","callback":"nope"}`, 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, m, _ := call(t, s, tt.key, http.MethodPost, "/calls/"+tt.domain+"/application", tt.body)
			if status != tt.want || m["message"] == "" {
				t.Fatalf("status = %d %v, want %d", status, m, tt.want)
			}
		})
	}
	if st := s.Stats(); st.Created != 0 || st.Unauthorized != 2 || st.Rejected != len(tests)-2 {
		t.Fatalf("stats = %+v", st)
	}
}

func TestCloudonixSimFaults(t *testing.T) {
	rc := newReceiver(t)
	s := startSim(t, cloudonixsim.Config{})
	path := "/calls/" + s.Domain() + "/application"
	s.TooManyRequestsNext(1)
	if status, _, h := call(t, s, s.BearerToken(), http.MethodPost, path, placeBody(rc, "+14155550123")); status != 429 || h.Get("Retry-After") != "1" {
		t.Fatalf("first create = %d (Retry-After %q), want 429", status, h.Get("Retry-After"))
	}
	s.SetUnauthorized(true)
	if status, _, _ := call(t, s, s.BearerToken(), http.MethodPost, path, placeBody(rc, "+14155550123")); status != 401 {
		t.Fatalf("create in 401 mode = %d", status)
	}
	s.SetUnauthorized(false)
	s.SetFault(func(r cloudonixsim.Request) *cloudonixsim.Fault {
		if r.Op == cloudonixsim.OpCreate {
			return &cloudonixsim.Fault{Status: 503, Message: "try later", Create: true}
		}
		return nil
	})
	if status, m, _ := call(t, s, s.BearerToken(), http.MethodPost, path, placeBody(rc, "+14155550123")); status != 503 || m["message"] != "try later" {
		t.Fatalf("create with fault = %d %v", status, m)
	}
	waitFinal(t, s, 1)
	if st := s.Stats(); st.Created != 1 || st.RateLimited != 1 || st.Unauthorized != 1 || st.Rejected != 1 || s.CreatesTo("+14155550123") != 1 {
		t.Fatalf("stats = %+v", st)
	}
}

func TestCloudonixSimApplications(t *testing.T) {
	rc := newReceiver(t)
	s := startSim(t, cloudonixsim.Config{})
	path := "/customers/self/domains/" + s.Domain() + "/applications"
	app := `{"name":"outdial","type":"cxml","url":"` + rc.srv.URL + `/answer","method":"POST"}`
	if status, m, _ := call(t, s, s.BearerToken(), http.MethodPost, path, app); status != 200 || m["name"] != "outdial" {
		t.Fatalf("create app = %d %v", status, m)
	}
	if status, _, _ := call(t, s, s.BearerToken(), http.MethodPost, path, app); status != 409 {
		t.Fatalf("duplicate app = %d, want 409", status)
	}
	if status, _, _ := call(t, s, "XIbad", http.MethodPost, path, app); status != 401 {
		t.Fatalf("bad key = %d, want 401", status)
	}
	if status, _, _ := call(t, s, s.BearerToken(), http.MethodPost, "/customers/self/domains/nope/applications", app); status != 404 {
		t.Fatalf("unknown domain = %d, want 404", status)
	}
	if status, _, _ := call(t, s, s.BearerToken(), http.MethodPost, "/domains/"+s.Domain()+"/applications", `{"name":"x","url":"rel"}`); status != 400 {
		t.Fatalf("bad app = %d, want 400", status)
	}
	s.SetFault(func(r cloudonixsim.Request) *cloudonixsim.Fault {
		return &cloudonixsim.Fault{Status: 500, Message: "boom"}
	})
	if status, _, _ := call(t, s, s.BearerToken(), http.MethodPost, path, `{"name":"y","url":"http://x/"}`); status != 500 {
		t.Fatalf("faulted app = %d, want 500", status)
	}
	s.SetFault(nil)
	apps := s.Applications()
	if len(apps) != 1 || apps["outdial"].Method != "POST" || s.Stats().ApplicationsCreated != 1 {
		t.Fatalf("applications = %+v", apps)
	}
	// A call by application name alone is accepted once it exists.
	body := `{"destination":"+14155550123","caller-id":"+14155550100","application":"outdial"}`
	if status, m, _ := call(t, s, s.BearerToken(), http.MethodPost, "/calls/"+s.Domain()+"/application", body); status != 200 {
		t.Fatalf("create by application = %d %v", status, m)
	}
	waitFinal(t, s, 1)
}

func TestCloudonixSimReplay(t *testing.T) {
	rc := newReceiver(t)
	s := startSim(t, cloudonixsim.Config{Script: func(cloudonixsim.CallInfo) cloudonixsim.Script {
		return cloudonixsim.Script{Outcome: cloudonixsim.Busy}
	}})
	_, m, _ := call(t, s, s.BearerToken(), http.MethodPost, "/calls/"+s.Domain()+"/application", placeBody(rc, "+14155550123"))
	waitFinal(t, s, 1)
	rec, _ := s.Call(m["token"].(string))
	last := rec.Callbacks[len(rec.Callbacks)-1]
	if status, err := s.Replay(context.Background(), last); err != nil || status != http.StatusNoContent {
		t.Fatalf("replay = %d, %v", status, err)
	}
	if got := strings.Join(rc.got(), ","); got != "ringing,busy,busy" {
		t.Fatalf("updates after replay = %s", got)
	}
}
