package vonagesim

import (
	"context"
	"crypto"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// mint is an application JWT signed RS256 with key, with its own code.
func mint(t *testing.T, key *rsa.PrivateKey, claims map[string]any) string {
	t.Helper()
	h := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"RS256","typ":"JWT"}`))
	p, _ := json.Marshal(claims)
	in := h + "." + base64.RawURLEncoding.EncodeToString(p)
	sum := sha256.Sum256([]byte(in))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	return in + "." + base64.RawURLEncoding.EncodeToString(sig)
}

func goodClaims(s *Server) map[string]any {
	now := time.Now()
	return map[string]any{"application_id": s.ApplicationID(), "iat": now.Unix(), "exp": now.Add(time.Minute).Unix(), "jti": newUUID()}
}

// api sends one API request with a bearer token and returns the status and
// body.
func api(t *testing.T, s *Server, method, path, body, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, s.URL()+path, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// hook is a webhook receiver: it records every request and answers answer
// requests with an NCCO.
type hook struct {
	srv  *httptest.Server
	mu   sync.Mutex
	reqs []hookReq
	code int // answered to events; 0 = 204
}

type hookReq struct {
	path, method, auth string
	body               []byte
}

func newHook(t *testing.T) *hook {
	h := &hook{}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		h.reqs = append(h.reqs, hookReq{path: r.URL.Path, method: r.Method, auth: r.Header.Get("Authorization"), body: b})
		code := h.code
		h.mu.Unlock()
		if strings.HasPrefix(r.URL.Path, "/answer") {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `[{"action":"talk","text":"hi"}]`)
			return
		}
		if code == 0 {
			code = http.StatusNoContent
		}
		w.WriteHeader(code)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hook) events() []map[string]any {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []map[string]any
	for _, r := range h.reqs {
		if strings.HasPrefix(r.path, "/event") {
			var m map[string]any
			_ = json.Unmarshal(r.body, &m)
			out = append(out, m)
		}
	}
	return out
}

func (h *hook) statuses() []string {
	var out []string
	for _, e := range h.events() {
		out = append(out, e["status"].(string))
	}
	return out
}

// checkSigned verifies a webhook's bearer JWT with secret and its
// payload_hash, with the test's own code, and returns its claims.
func checkSigned(t *testing.T, r hookReq, secret string) map[string]any {
	t.Helper()
	tok, ok := strings.CutPrefix(r.auth, "Bearer ")
	if !ok {
		t.Fatalf("%s: Authorization %q", r.path, r.auth)
	}
	parts := strings.Split(tok, ".")
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(parts[0] + "." + parts[1]))
	if base64.RawURLEncoding.EncodeToString(m.Sum(nil)) != parts[2] {
		t.Fatalf("%s: HS256 signature does not verify", r.path)
	}
	p, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var c map[string]any
	_ = json.Unmarshal(p, &c)
	if c["payload_hash"] != PayloadHash(r.body) {
		t.Fatalf("%s: payload_hash %v, want %s", r.path, c["payload_hash"], PayloadHash(r.body))
	}
	return c
}

func createBody(h *hook, to string, extra string) string {
	return `{"to":[{"type":"phone","number":"` + to + `"}],"from":{"type":"phone","number":"14155550100"},` +
		`"answer_url":["` + h.srv.URL + `/answer?t=x"],"answer_method":"POST","event_url":["` + h.srv.URL + `/event?t=x"],"event_method":"POST"` + extra + `}`
}

func waitFinal(t *testing.T, s *Server, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.WaitFinal(ctx, n); err != nil {
		t.Fatalf("waiting for %d final calls: %+v", n, s.Stats())
	}
}

func TestAuthentication(t *testing.T) {
	s := Start(Config{})
	defer s.Close()
	h := newHook(t)
	body := createBody(h, "14155550123", "")
	other, _ := rsa.GenerateKey(rand.Reader, 1024)
	wrongApp := goodClaims(s)
	wrongApp["application_id"] = "other"
	expired := goodClaims(s)
	expired["exp"] = time.Now().Add(-time.Second).Unix()
	stale := goodClaims(s)
	stale["iat"] = time.Now().Add(-10 * time.Minute).Unix()
	noJTI := goodClaims(s)
	delete(noJTI, "jti")
	for name, tok := range map[string]string{"none": "", "garbage": "a.b.c", "other key": mint(t, other, goodClaims(s)),
		"other application": mint(t, s.key, wrongApp), "expired": mint(t, s.key, expired), "stale iat": mint(t, s.key, stale),
		"no jti": mint(t, s.key, noJTI)} {
		if code, ans := api(t, s, http.MethodPost, "/v1/calls", body, tok); code != 401 || !strings.Contains(ans, "#unauthorized") {
			t.Fatalf("%s: %d %s, want 401", name, code, ans)
		}
	}
	code, ans := api(t, s, http.MethodPost, "/v1/calls", body, mint(t, s.key, goodClaims(s)))
	if code != 201 || !strings.Contains(ans, `"status":"started"`) || !strings.Contains(ans, `"conversation_uuid":"CON-`) {
		t.Fatalf("genuine: %d %s", code, ans)
	}
	if st := s.Stats(); st.Unauthorized != 7 || st.Created != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestValidation(t *testing.T) {
	s := Start(Config{})
	defer s.Close()
	h := newHook(t)
	for _, tc := range []struct{ body, param string }{
		{createBody(h, "+14155550123", ""), "to[0].number"},
		{strings.Replace(createBody(h, "14155550123", ""), `"number":"14155550100"`, `"number":"+1"`, 1), "from.number"},
		{createBody(h, "14155550123", `,"ringing_timer":121`), "ringing_timer"},
		{createBody(h, "14155550123", `,"length_timer":0`), "length_timer"},
		{createBody(h, "14155550123", `,"machine_detection":"maybe"`), "machine_detection"},
		{strings.Replace(createBody(h, "14155550123", ""), h.srv.URL+"/answer", "/relative", 1), "answer_url[0]"},
		{`{"to":[{"type":"phone","number":"14155550123"}],"from":{"type":"phone","number":"14155550100"}}`, "answer_url"},
		{`not json`, "body"},
	} {
		code, ans := api(t, s, http.MethodPost, "/v1/calls", tc.body, mint(t, s.key, goodClaims(s)))
		if code != 400 || !strings.Contains(ans, `"name":"`+tc.param+`"`) {
			t.Fatalf("%s: %d %s, want 400 naming %s", tc.body, code, ans, tc.param)
		}
	}
	if s.Stats().Created != 0 {
		t.Fatal("an invalid request created a call")
	}
}

func TestHumanCallSignedWebhooks(t *testing.T) {
	s := Start(Config{RecordCallbacks: true, Script: func(CallInfo) Script { return Script{TalkDuration: 10 * time.Millisecond, Duration: 7} }})
	defer s.Close()
	h := newHook(t)
	code, ans := api(t, s, http.MethodPost, "/v1/calls", createBody(h, "14155550123", `,"ringing_timer":60,"length_timer":3600`), mint(t, s.key, goodClaims(s)))
	if code != 201 {
		t.Fatalf("%d %s", code, ans)
	}
	waitFinal(t, s, 1)
	if got := strings.Join(h.statuses(), ","); got != "started,ringing,answered,completed" {
		t.Fatalf("events %s", got)
	}
	last := h.events()[3]
	if last["duration"] != "7" || last["direction"] != "outbound" || last["to"] != "14155550123" || last["uuid"] == "" {
		t.Fatalf("completed event %v", last)
	}
	h.mu.Lock()
	reqs := append([]hookReq(nil), h.reqs...)
	h.mu.Unlock()
	jtis := map[any]bool{}
	for _, r := range reqs {
		c := checkSigned(t, r, DefaultSignatureSecret)
		if c["api_key"] != DefaultAPIKey || c["application_id"] != DefaultApplicationID || c["iss"] != "Vonage" || jtis[c["jti"]] {
			t.Fatalf("claims %v", c)
		}
		jtis[c["jti"]] = true
		if r.path == "/answer" && (r.method != http.MethodPost || !strings.Contains(string(r.body), `"uuid"`)) {
			t.Fatalf("answer request %s %s", r.method, r.body)
		}
	}
	rec := s.Calls()[0]
	if rec.NCCO != `[{"action":"talk","text":"hi"}]` || rec.NCCOContentType != "application/json" || rec.AnswerStatus != 200 ||
		rec.Status != "completed" || len(rec.Callbacks) != 4 {
		t.Fatalf("record %+v", rec)
	}
	code, ans = api(t, s, http.MethodGet, "/v1/calls/"+rec.UUID, "", mint(t, s.key, goodClaims(s)))
	if code != 200 || !strings.Contains(ans, `"status":"completed"`) || !strings.Contains(ans, `"duration":"7"`) {
		t.Fatalf("fetch: %d %s", code, ans)
	}
	if code, _ := api(t, s, http.MethodPut, "/v1/calls/"+rec.UUID, `{"action":"hangup"}`, mint(t, s.key, goodClaims(s))); code != 404 {
		t.Fatalf("hang up an ended call: %d, want 404", code)
	}
	// A replay is the same request again, same token.
	if code, err := s.Replay(context.Background(), rec.UUID); err != nil || code != 204 {
		t.Fatalf("replay: %d %v", code, err)
	}
	h.mu.Lock()
	n := len(h.reqs)
	replayed, orig := h.reqs[n-1], h.reqs[n-2]
	h.mu.Unlock()
	if replayed.auth != orig.auth || string(replayed.body) != string(orig.body) {
		t.Fatal("replay differs from the original")
	}
}

func TestMachineDetection(t *testing.T) {
	s := Start(Config{Script: func(CallInfo) Script { return Script{Outcome: Machine} }})
	defer s.Close()
	h := newHook(t)
	api(t, s, http.MethodPost, "/v1/calls", createBody(h, "14155550001", `,"machine_detection":"continue"`), mint(t, s.key, goodClaims(s)))
	waitFinal(t, s, 1)
	evs := h.events()
	if got := strings.Join(h.statuses(), ","); got != "started,ringing,answered,machine,completed" {
		t.Fatalf("events %s", got)
	}
	if evs[3]["call_uuid"] == nil || evs[3]["uuid"] != nil {
		t.Fatalf("machine event %v, want call_uuid", evs[3])
	}
	if s.Calls()[0].Verdict != "machine" {
		t.Fatal("verdict not recorded")
	}
}

func TestOutcomesAndHangUp(t *testing.T) {
	outcomes := map[string]Outcome{"14155550001": Busy, "14155550002": Timeout, "14155550003": Failed, "14155550004": Rejected}
	s := Start(Config{Script: func(ci CallInfo) Script {
		if o, ok := outcomes[ci.To]; ok {
			return Script{Outcome: o}
		}
		return Script{Outcome: Human, RingDelay: Never}
	}})
	defer s.Close()
	h := newHook(t)
	for to := range outcomes {
		api(t, s, http.MethodPost, "/v1/calls", createBody(h, to, ""), mint(t, s.key, goodClaims(s)))
	}
	_, ans := api(t, s, http.MethodPost, "/v1/calls", createBody(h, "14155550009", ""), mint(t, s.key, goodClaims(s)))
	var created struct{ UUID string }
	_ = json.Unmarshal([]byte(ans), &created)
	waitFinal(t, s, 4)
	if code, _ := api(t, s, http.MethodPut, "/v1/calls/"+created.UUID, `{"action":"hangup"}`, mint(t, s.key, goodClaims(s))); code != 204 {
		t.Fatalf("hang up: %d", code)
	}
	waitFinal(t, s, 5)
	got := map[string]string{}
	for _, c := range s.Calls() {
		got[c.To] = c.Status
	}
	want := map[string]string{"14155550001": "busy", "14155550002": "timeout", "14155550003": "failed", "14155550004": "rejected", "14155550009": "cancelled"}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("statuses %v, want %v", got, want)
		}
	}
	if st := s.Stats(); st.InFlight != 0 || st.PeakInFlight < 1 || st.HangUps != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestRingingTimer(t *testing.T) {
	s := Start(Config{Script: func(CallInfo) Script { return Script{RingDelay: Never} }})
	defer s.Close()
	h := newHook(t)
	api(t, s, http.MethodPost, "/v1/calls", createBody(h, "14155550123", `,"ringing_timer":1`), mint(t, s.key, goodClaims(s)))
	waitFinal(t, s, 1)
	if st := s.Calls()[0].Status; st != "timeout" {
		t.Fatalf("status %s, want timeout", st)
	}
}

func TestFaults(t *testing.T) {
	s := Start(Config{})
	defer s.Close()
	h := newHook(t)
	body := createBody(h, "14155550123", "")
	s.TooManyRequestsNext(1)
	if code, ans := api(t, s, http.MethodPost, "/v1/calls", body, mint(t, s.key, goodClaims(s))); code != 429 || !strings.Contains(ans, "#throttled") {
		t.Fatalf("429 budget: %d %s", code, ans)
	}
	s.SetUnauthorized(true)
	if code, _ := api(t, s, http.MethodPost, "/v1/calls", body, mint(t, s.key, goodClaims(s))); code != 401 {
		t.Fatalf("401 mode: %d", code)
	}
	s.SetUnauthorized(false)
	s.SetFault(func(r Request) *Fault {
		if r.Op == OpCreate {
			return &Fault{Status: 500, Type: "internal", Title: "Internal Error", Create: true}
		}
		return nil
	})
	if code, _ := api(t, s, http.MethodPost, "/v1/calls", body, mint(t, s.key, goodClaims(s))); code != 500 {
		t.Fatalf("fault: %d", code)
	}
	waitFinal(t, s, 1)
	if st := s.Stats(); st.Created != 1 || st.RateLimited != 1 || st.Unauthorized != 1 || st.Rejected != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestOrderingScripts(t *testing.T) {
	s := Start(Config{Script: func(ci CallInfo) Script {
		switch ci.To {
		case "14155550001":
			return Script{Duplicate: true}
		case "14155550002":
			return Script{OutOfOrder: true}
		default:
			return Script{LoseFinal: true}
		}
	}})
	defer s.Close()
	for _, to := range []string{"14155550001", "14155550002", "14155550003"} {
		h := newHook(t)
		api(t, s, http.MethodPost, "/v1/calls", createBody(h, to, ""), mint(t, s.key, goodClaims(s)))
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := s.Wait(ctx, func(st Stats) bool { return st.Final == len(s.calls) }); err != nil {
			t.Fatal(err)
		}
		cancel()
		want := map[string]string{"14155550001": "started,started,ringing,ringing,answered,answered,completed,completed",
			"14155550002": "completed,answered,ringing,started", "14155550003": "started,ringing,answered"}[to]
		if got := strings.Join(h.statuses(), ","); got != want {
			t.Fatalf("%s: events %s, want %s", to, got, want)
		}
	}
}

func TestUnsigned(t *testing.T) {
	s := Start(Config{Unsigned: true})
	defer s.Close()
	h := newHook(t)
	api(t, s, http.MethodPost, "/v1/calls", createBody(h, "14155550123", ""), mint(t, s.key, goodClaims(s)))
	waitFinal(t, s, 1)
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.reqs {
		if r.auth != "" {
			t.Fatalf("unsigned simulator sent Authorization %q", r.auth)
		}
	}
	if _, ok := s.Credentials(false)["signature_secret"]; ok {
		t.Fatal("unsigned credentials carry a signature secret")
	}
}
