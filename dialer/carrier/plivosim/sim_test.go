package plivosim_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer/carrier"
	"github.com/outdial/outdial/dialer/carrier/plivosim"
)

// service is a stand-in for Outdial's webhook endpoints: it verifies every
// webhook with the real carrier adapter and records what it parsed.
type service struct {
	t   *testing.T
	srv *httptest.Server
	car carrier.Carrier

	mu       sync.Mutex
	statuses []carrier.Status
	answers  []string // machine verdicts of answer requests
	forged   int
}

func newService(t *testing.T, sim *plivosim.Server) *service {
	t.Helper()
	s := &service{t: t}
	car, err := carrier.New(string(sim.Dialect()), sim.Credentials(true),
		carrier.Options{BaseURLs: map[string]string{string(sim.Dialect()): sim.URL()}})
	if err != nil {
		t.Fatal(err)
	}
	s.car = car
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		hook := carrier.Webhook{Request: r, Body: body, PublicURL: s.srv.URL + r.URL.RequestURI()}
		if strings.HasPrefix(r.URL.Path, "/answer") {
			by, err := s.car.VerifyAnswer(hook)
			if s.refuse(w, err) {
				return
			}
			s.mu.Lock()
			s.answers = append(s.answers, by)
			s.mu.Unlock()
			ct, xml := s.car.AnswerMarkup(carrier.Answer{AttemptID: 1, Greeting: "Hi"})
			w.Header().Set("Content-Type", ct)
			_, _ = w.Write(xml)
			return
		}
		st, err := s.car.ParseStatus(hook)
		if s.refuse(w, err) {
			return
		}
		s.mu.Lock()
		s.statuses = append(s.statuses, st)
		s.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *service) refuse(w http.ResponseWriter, err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, carrier.ErrForged) {
		s.mu.Lock()
		s.forged++
		s.mu.Unlock()
		w.WriteHeader(http.StatusForbidden)
		return true
	}
	s.t.Errorf("webhook: %v", err)
	w.WriteHeader(http.StatusInternalServerError)
	return true
}

func (s *service) seen() ([]carrier.Status, []string, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]carrier.Status(nil), s.statuses...), append([]string(nil), s.answers...), s.forged
}

// place places a call through the adapter with the service's URLs.
func (s *service) place(t *testing.T, to string) string {
	t.Helper()
	p, err := s.car.Place(context.Background(), carrier.Call{To: to, From: "+14155550100",
		AnswerURL: s.srv.URL + "/answer/1?t=tok", StatusURL: s.srv.URL + "/status/1?t=tok",
		RingTimeout: time.Minute, TimeLimit: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return p.ProviderCallID
}

func waitFinal(t *testing.T, sim *plivosim.Server, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := sim.WaitFinal(ctx, n); err != nil {
		t.Fatalf("waiting for %d final calls: %v (stats %+v)", n, err, sim.Stats())
	}
}

var dialects = []plivosim.Dialect{plivosim.Plivo, plivosim.Vobiz}

func TestOutcomes(t *testing.T) {
	for _, d := range dialects {
		for _, tc := range []struct {
			script  plivosim.Script
			raws    []string
			outcome string
			machine string
		}{
			{plivosim.Script{Outcome: plivosim.Human, Duration: 7}, []string{"ringing", "completed"}, carrier.OutcomeAnswered, "human"},
			{plivosim.Script{Outcome: plivosim.Machine}, []string{"ringing", "completed"}, carrier.OutcomeAnswered, "machine"},
			{plivosim.Script{Outcome: plivosim.Busy}, []string{"ringing", "busy"}, carrier.OutcomeBusy, ""},
			{plivosim.Script{Outcome: plivosim.NoAnswer}, []string{"ringing", "no-answer"}, carrier.OutcomeNoAnswer, ""},
			{plivosim.Script{Outcome: plivosim.Timeout}, []string{"ringing", "timeout"}, carrier.OutcomeNoAnswer, ""},
			{plivosim.Script{Outcome: plivosim.Canceled}, []string{"ringing", "cancel"}, carrier.OutcomeCanceled, ""},
			{plivosim.Script{Outcome: plivosim.Failed}, []string{"failed"}, carrier.OutcomeFailed, ""},
		} {
			sim := plivosim.Start(plivosim.Config{Dialect: d, RecordCallbacks: true,
				Script: func(plivosim.CallInfo) plivosim.Script { return tc.script }})
			svc := newService(t, sim)
			if d == plivosim.Vobiz {
				tc.machine = "" // Vobiz configurations do not ask for detection
			}
			id := svc.place(t, "+14155550123")
			waitFinal(t, sim, 1)
			sts, answers, forged := svc.seen()
			var raws []string
			var last carrier.Status
			machine := ""
			for _, st := range sts {
				raws = append(raws, st.Raw)
				if st.AnsweredBy != "" {
					machine = st.AnsweredBy
				}
				last = st
			}
			rec, _ := sim.Call(id)
			if forged != 0 || !last.Final || last.Outcome != tc.outcome || machine != tc.machine ||
				strings.Join(raws, ",") != strings.Join(withMD(tc.raws, tc.machine), ",") {
				t.Fatalf("%s %s: statuses %+v (forged %d), want raws %v outcome %s machine %q",
					d, tc.script.Outcome, sts, forged, tc.raws, tc.outcome, tc.machine)
			}
			if rec.To != "14155550123" || rec.From != "14155550100" {
				t.Fatalf("%s: numbers %q %q", d, rec.To, rec.From)
			}
			if last.ProviderCallID != rec.CallUUID || (d == plivosim.Plivo) != (last.RequestID == id) {
				t.Fatalf("%s: ids %+v, record %+v", d, last, rec.CallInfo)
			}
			answered := tc.outcome == carrier.OutcomeAnswered
			if answered && (len(answers) != 1 || !strings.Contains(rec.XML, "<Speak>Hi</Speak>") || rec.XMLContentType != "text/xml") {
				t.Fatalf("%s: answers %v, xml %q (%s)", d, answers, rec.XML, rec.XMLContentType)
			}
			if tc.script.Duration != 0 && last.DurationSeconds != tc.script.Duration {
				t.Fatalf("%s: duration %d", d, last.DurationSeconds)
			}
			sim.Close()
		}
	}
}

// withMD inserts the machine-detection callback (CallStatus in-progress)
// after the ring when detection ran (the answer request is not a status).
func withMD(raws []string, machine string) []string {
	if machine == "" {
		return raws
	}
	return []string{raws[0], "in-progress", raws[1]}
}

func TestAuthAndValidation(t *testing.T) {
	for _, d := range dialects {
		sim := plivosim.Start(plivosim.Config{Dialect: d})
		defer sim.Close()
		prefix := map[plivosim.Dialect]string{plivosim.Plivo: "/v1", plivosim.Vobiz: "/api/v1"}[d]
		call := `{"from":"14155550100","to":"14155550123","answer_url":"https://svc/a"}`
		for _, tc := range []struct {
			name, account, body string
			auth                func(*http.Request)
			want                int
		}{
			{"ok", sim.AuthID(), call, nil, 201},
			{"wrong token", sim.AuthID(), call, func(r *http.Request) { setAuth(d, r, sim.AuthID(), "nope") }, 401},
			{"other account", "MAOTHER", call, nil, 401},
			{"other dialect's auth", sim.AuthID(), call, func(r *http.Request) {
				if d == plivosim.Vobiz {
					r.Header.Del("X-Auth-ID")
					r.Header.Del("X-Auth-Token")
					r.SetBasicAuth(sim.AuthID(), sim.AuthToken())
				} else {
					r.Header.Del("Authorization")
					r.Header.Set("X-Auth-ID", sim.AuthID())
					r.Header.Set("X-Auth-Token", sim.AuthToken())
				}
			}, 401},
			{"plus", sim.AuthID(), `{"from":"+14155550100","to":"14155550123","answer_url":"https://svc/a"}`, nil, 400},
			{"no answer_url", sim.AuthID(), `{"from":"14155550100","to":"14155550123"}`, nil, 400},
			{"bad url", sim.AuthID(), `{"from":"1","to":"2","answer_url":"/relative"}`, nil, 400},
			{"amd without url", sim.AuthID(), `{"from":"1","to":"2","answer_url":"https://a","machine_detection":"true"}`, nil, 400},
			{"bad ring_timeout", sim.AuthID(), `{"from":"1","to":"2","answer_url":"https://a","ring_timeout":"x"}`, nil, 400},
		} {
			req, _ := http.NewRequest(http.MethodPost, sim.URL()+prefix+"/Account/"+tc.account+"/Call/", strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			setAuth(d, req, sim.AuthID(), sim.AuthToken())
			if tc.auth != nil {
				tc.auth(req)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.want || !strings.Contains(string(b), `"api_id"`) {
				t.Fatalf("%s %s: %d %s, want %d", d, tc.name, resp.StatusCode, b, tc.want)
			}
		}
		if st := sim.Stats(); st.Created != 1 || st.Unauthorized != 3 || st.Rejected != 5 {
			t.Fatalf("%s: stats %+v", d, st)
		}
	}
}

func setAuth(d plivosim.Dialect, r *http.Request, id, token string) {
	if d == plivosim.Vobiz {
		r.Header.Set("X-Auth-ID", id)
		r.Header.Set("X-Auth-Token", token)
		return
	}
	r.SetBasicAuth(id, token)
}

func TestFaults(t *testing.T) {
	sim := plivosim.Start(plivosim.Config{})
	defer sim.Close()
	svc := newService(t, sim)
	call := carrier.Call{To: "+1", From: "+2", AnswerURL: svc.srv.URL + "/answer", StatusURL: svc.srv.URL + "/status"}
	sim.TooManyRequestsNext(1)
	if _, err := svc.car.Place(context.Background(), call); carrier.KindOf(err) != carrier.RateLimited {
		t.Fatalf("429: %v", err)
	}
	sim.SetUnauthorized(true)
	if _, err := svc.car.Place(context.Background(), call); carrier.KindOf(err) != carrier.AuthFailed {
		t.Fatalf("401: %v", err)
	}
	sim.SetUnauthorized(false)
	sim.SetFault(func(r plivosim.Request) *plivosim.Fault {
		if r.Op == plivosim.OpCreate {
			return &plivosim.Fault{Status: 503, Message: "busy", Create: true}
		}
		return nil
	})
	if _, err := svc.car.Place(context.Background(), call); err == nil || carrier.KindOf(err) != "" {
		t.Fatalf("503: %v", err)
	}
	waitFinal(t, sim, 1) // the 503 create went out anyway
	if st := sim.Stats(); st.Created != 1 || st.RateLimited != 1 || st.Unauthorized != 1 || st.Rejected != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestQueryHangUpCancel(t *testing.T) {
	for _, d := range dialects {
		sim := plivosim.Start(plivosim.Config{Dialect: d})
		svc := newService(t, sim)
		ctx := context.Background()
		// Queued: only the request is known.
		sim.SetScript(func(plivosim.CallInfo) plivosim.Script { return plivosim.Script{QueueDelay: plivosim.Never} })
		req := svc.place(t, "+1")
		if st, err := svc.car.Query(ctx, req); err != nil || st.Raw != "queued" || st.Final {
			t.Fatalf("%s queued: %+v %v", d, st, err)
		}
		if err := svc.car.HangUp(ctx, req); err != nil {
			t.Fatalf("%s cancel queued: %v", d, err)
		}
		waitFinal(t, sim, 1)
		if rec, _ := sim.Call(req); rec.Status != "cancel" {
			t.Fatalf("%s: cancelled queued call is %s", d, rec.Status)
		}
		// Live and answered: hung up, then its CDR.
		sim.SetScript(func(plivosim.CallInfo) plivosim.Script { return plivosim.Script{TalkDuration: plivosim.Never} })
		req = svc.place(t, "+2")
		rec, _ := sim.Call(req)
		ctxw, cancel := context.WithTimeout(ctx, 5*time.Second)
		if err := sim.Wait(ctxw, func(s plivosim.Stats) bool { return s.AnswerRequests >= 1 }); err != nil {
			t.Fatal(err)
		}
		cancel()
		if st, err := svc.car.Query(ctx, rec.CallUUID); err != nil || st.Raw != "in-progress" || st.Final {
			t.Fatalf("%s live: %+v %v", d, st, err)
		}
		if err := svc.car.HangUp(ctx, rec.CallUUID); err != nil {
			t.Fatalf("%s hang up: %v", d, err)
		}
		waitFinal(t, sim, 2)
		st, err := svc.car.Query(ctx, rec.CallUUID)
		if err != nil || !st.Final || st.Outcome != carrier.OutcomeAnswered || st.ProviderCallID != rec.CallUUID {
			t.Fatalf("%s cdr: %+v %v", d, st, err)
		}
		if err := svc.car.HangUp(ctx, rec.CallUUID); err != nil {
			t.Fatalf("%s hang up an ended call: %v", d, err)
		}
		if _, err := svc.car.Query(ctx, "no-such-call"); carrier.KindOf(err) != carrier.Rejected {
			t.Fatalf("%s unknown call: %v", d, err)
		}
		if s := sim.Stats(); s.HangUps != 1 || s.Cancels != 1 {
			t.Fatalf("%s: stats %+v", d, s)
		}
		sim.Close()
	}
}

func TestDuplicateOutOfOrderLost(t *testing.T) {
	for _, tc := range []struct {
		script plivosim.Script
		raws   string
	}{
		{plivosim.Script{Outcome: plivosim.Busy, Duplicate: true}, "ringing,ringing,busy,busy"},
		{plivosim.Script{Outcome: plivosim.Busy, OutOfOrder: true}, "busy,ringing"},
		{plivosim.Script{Outcome: plivosim.Busy, LoseFinal: true}, "ringing"},
		{plivosim.Script{Outcome: plivosim.Busy, CallbackDelay: 5 * time.Millisecond, RingDelay: time.Millisecond}, "ringing,busy"},
	} {
		sim := plivosim.Start(plivosim.Config{Script: func(plivosim.CallInfo) plivosim.Script { return tc.script }})
		svc := newService(t, sim)
		id := svc.place(t, "+1")
		waitFinal(t, sim, 1)
		sts, _, forged := svc.seen()
		var raws []string
		for _, s := range sts {
			raws = append(raws, s.Raw)
		}
		if strings.Join(raws, ",") != tc.raws || forged != 0 {
			t.Fatalf("%+v: raws %v (forged %d), want %s", tc.script, raws, forged, tc.raws)
		}
		if tc.script.LoseFinal {
			rec, _ := sim.Call(id)
			if st, err := svc.car.Query(context.Background(), rec.CallUUID); err != nil || st.Outcome != carrier.OutcomeBusy {
				t.Fatalf("lost final, cdr %+v %v", st, err)
			}
		}
		if sim.Stats().InFlight != 0 {
			t.Fatalf("in flight %d", sim.Stats().InFlight)
		}
		sim.Close()
	}
}

func TestReplayAndForge(t *testing.T) {
	for _, d := range dialects {
		sim := plivosim.Start(plivosim.Config{Dialect: d, RecordCallbacks: true,
			Script: func(plivosim.CallInfo) plivosim.Script { return plivosim.Script{Outcome: plivosim.Busy} }})
		svc := newService(t, sim)
		id := svc.place(t, "+1")
		waitFinal(t, sim, 1)
		rec, _ := sim.Call(id)
		cb := rec.Callbacks[len(rec.Callbacks)-1]
		if cb.Kind != plivosim.KindHangup || cb.Status != http.StatusNoContent {
			t.Fatalf("%s: last callback %+v", d, cb)
		}
		ctx := context.Background()
		// A replay verifies at the carrier; the store applies it as a
		// no-op (dialer.TestWebhookRetryAfterFailedStore).
		if code, err := sim.Replay(ctx, cb); err != nil || code != http.StatusNoContent {
			t.Fatalf("%s: replay answered %d %v", d, code, err)
		}
		if code, _ := sim.PostSigned(ctx, cb.URL, cb.Params, "wrong-token"); code != http.StatusForbidden {
			t.Fatalf("%s: forged answered %d", d, code)
		}
		if code, _ := sim.PostSigned(ctx, cb.URL, cb.Params, ""); code != http.StatusForbidden {
			t.Fatalf("%s: unsigned answered %d", d, code)
		}
		if code, _ := sim.PostSigned(ctx, cb.URL, cb.Params, sim.AuthToken()); code != http.StatusNoContent {
			t.Fatalf("%s: freshly signed answered %d", d, code)
		}
		sim.Close()
	}
}

func TestSignatureKnownVectors(t *testing.T) {
	// plivo-go utils_test.go TestValidateSignatureV3Pass3 and Pass1 (params
	// trimmed to the ones the vector signs is not possible: all are used).
	params := url.Values{"Direction": {"outbound"}, "From": {"19792014278"}, "ALegUUID": {"3e82ae9d-2c78-4d85-b1a4-6eae7dbafb36"},
		"CallStatus": {"in-progress"}, "BillRate": {"0.002"}, "ParentAuthID": {"MANWVLYTK4ZWU1YTY4QA"},
		"To":              {"sip:PlivoSignature382029104058171078704104@phone-qa.voice.plivodev.com"},
		"ALegRequestUUID": {"3e82ae9d-2c78-4d85-b1a4-6eae7dbafb36"}, "CallUUID": {"3e82ae9d-2c78-4d85-b1a4-6eae7dbafb36"},
		"RequestUUID":  {"3e82ae9d-2c78-4d85-b1a4-6eae7dbafb36"},
		"SIP-H-To":     {"<sip:PlivoSignature382029104058171078704104@52.9.11.55;transport=udp>;tag=1"},
		"SessionStart": {"2020-04-08 11:34:33.238707"}, "Event": {"StartApp"}}
	const token, nonce = "Y2Q2ZDgxZmY5YWRiOTI5YmQ1Njg0MTAxZWIyOTc4", "31627761595286130198"
	base := "https://plivobin.non-prod.plivops.com/api/v1/validate_signature03.xml"
	for _, tc := range []struct{ url, method, want string }{
		{base + "/?a=b&c=d", http.MethodPost, "k7Pusd4OxCIjR5IfA9iedDNu/h/gbdYqdzG/MiYtd1c="},
		{base + "/?a=b&c=d", http.MethodGet, "UBq8jAtd32wR8EK9VgxbBn4n5rpI/l1H9iN4WfSEHFQ="},
		{base, http.MethodPost, "iAjE5QqI37mbkYe4w3jTMudqEzbDufdqi7sYwTu64e0="},
		{base, http.MethodGet, "i/MQsaQSAd6fiKhOh2qeeeLHZ9faldADSb3/7+Akfbc="},
	} {
		if got := plivosim.SignatureV3(token, tc.url, tc.method, nonce, params); got != tc.want {
			t.Errorf("%s %s: %s, want %s", tc.method, tc.url, got, tc.want)
		}
	}
	if got := plivosim.VobizSignature("my_auth_token", "https://answer.url", "12345", false); got != "ehV3IKhLysWBxC1sy8INm0qGoQYdYsHwuoKjsX7FsXc=" {
		t.Errorf("V2 vector: %s", got)
	}
	if n := plivosim.Nonce(); len(n) != 20 || strings.Trim(n, "0123456789") != "" {
		t.Errorf("nonce %q", n)
	}
}

func TestApplications(t *testing.T) {
	sim := plivosim.Start(plivosim.Config{Dialect: plivosim.Vobiz})
	defer sim.Close()
	for _, tc := range []struct {
		body string
		want int
	}{
		{`{"app_name":"ok_app-1","answer_url":"https://svc/a","answer_method":"POST"}`, 201},
		{`{"app_name":"bad name","answer_url":"https://svc/a"}`, 400},
		{`{"app_name":"x"}`, 400},
		{`not json`, 400},
	} {
		req, _ := http.NewRequest(http.MethodPost, sim.URL()+"/api/v1/Account/"+sim.AuthID()+"/Application/", strings.NewReader(tc.body))
		setAuth(plivosim.Vobiz, req, sim.AuthID(), sim.AuthToken())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Fatalf("%s: %d, want %d", tc.body, resp.StatusCode, tc.want)
		}
	}
	if apps := sim.Apps(); len(apps) != 1 || len(apps[0].AppID) != 17 || apps[0].Body["app_name"] != "ok_app-1" {
		t.Fatalf("apps %+v", apps)
	}
}

func TestPeakInFlight(t *testing.T) {
	sim := plivosim.Start(plivosim.Config{Script: func(plivosim.CallInfo) plivosim.Script {
		return plivosim.Script{TalkDuration: plivosim.Never}
	}})
	defer sim.Close()
	svc := newService(t, sim)
	var ids []string
	for i := 0; i < 3; i++ {
		ids = append(ids, svc.place(t, "+1"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := sim.Wait(ctx, func(s plivosim.Stats) bool { return s.AnswerRequests == 3 }); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		rec, _ := sim.Call(id)
		if err := svc.car.HangUp(ctx, rec.CallUUID); err != nil {
			t.Fatal(err)
		}
	}
	waitFinal(t, sim, 3)
	if s := sim.Stats(); s.PeakInFlight != 3 || s.InFlight != 0 || sim.CreatesTo("1") != 3 {
		t.Fatalf("stats %+v, creates %v", s, sim.CreatesByTo())
	}
}
