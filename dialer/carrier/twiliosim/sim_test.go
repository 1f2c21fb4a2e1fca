package twiliosim_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer/carrier"
	"github.com/outdial/outdial/dialer/carrier/twiliosim"
)

// service is a stand-in for Outdial's webhook endpoints: it verifies every
// webhook with the Twilio carrier and records what it parsed.
type service struct {
	t   testing.TB
	srv *httptest.Server
	car carrier.Carrier

	mu       sync.Mutex
	statuses map[string][]carrier.Status // by call sid, in arrival order
	answered map[string]string           // call sid → AnsweredBy of the answer webhook
	log      []string                    // "answer" and "seq:raw", in arrival order
	forged   int
	finals   map[string]chan struct{} // closed on a call's first final status
	// hold, when set, is called before a final status is acknowledged.
	hold func(carrier.Status)
}

func newService(t testing.TB, sim *twiliosim.Server, md bool) *service {
	t.Helper()
	car, err := carrier.New(carrier.Twilio, sim.Credentials(md), carrier.Options{BaseURLs: map[string]string{"twilio": sim.URL()}})
	if err != nil {
		t.Fatal(err)
	}
	s := &service{t: t, car: car, statuses: map[string][]carrier.Status{}, answered: map[string]string{}, finals: map[string]chan struct{}{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *service) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	hook := carrier.Webhook{Request: r, Body: body, PublicURL: s.srv.URL + r.URL.RequestURI()}
	switch r.URL.Path {
	case "/answer":
		by, err := s.car.VerifyAnswer(hook)
		if err != nil {
			s.forgedHook(w)
			return
		}
		form, _ := url.ParseQuery(string(body))
		s.mu.Lock()
		s.answered[form.Get("CallSid")] = by
		s.log = append(s.log, "answer")
		s.mu.Unlock()
		ct, markup := s.car.AnswerMarkup(carrier.Answer{AttemptID: 7, Greeting: "Hello & bye"})
		w.Header().Set("Content-Type", ct)
		w.Write(markup)
	case "/status":
		st, err := s.car.ParseStatus(hook)
		if err != nil {
			s.forgedHook(w)
			return
		}
		s.mu.Lock()
		s.statuses[st.ProviderCallID] = append(s.statuses[st.ProviderCallID], st)
		s.log = append(s.log, fmt.Sprintf("%d:%s", st.Sequence, st.Raw))
		hold := s.hold
		if st.Final {
			ch := s.finalLocked(st.ProviderCallID)
			select {
			case <-ch:
			default:
				close(ch)
			}
		}
		s.mu.Unlock()
		if hold != nil && st.Final {
			hold(st)
		}
		w.WriteHeader(http.StatusNoContent)
	default:
		http.NotFound(w, r)
	}
}

func (s *service) forgedHook(w http.ResponseWriter) {
	s.mu.Lock()
	s.forged++
	s.mu.Unlock()
	http.Error(w, "forged", http.StatusForbidden)
}

func (s *service) call(to string) carrier.Call {
	return carrier.Call{AttemptID: 7, To: to, From: "+14155550199",
		AnswerURL: s.srv.URL + "/answer?t=tok", StatusURL: s.srv.URL + "/status?t=tok", RingTimeout: 20 * time.Second}
}

func (s *service) place(to string) string {
	s.t.Helper()
	p, err := s.car.Place(context.Background(), s.call(to))
	if err != nil {
		s.t.Fatalf("Place(%s): %v", to, err)
	}
	return p.ProviderCallID
}

func (s *service) got(sid string) []carrier.Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.statuses[sid])
}

// finalOf is closed when the call's final status has arrived.
func (s *service) finalOf(sid string) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.finalLocked(sid)
}

func (s *service) finalLocked(sid string) chan struct{} {
	ch, ok := s.finals[sid]
	if !ok {
		ch = make(chan struct{})
		s.finals[sid] = ch
	}
	return ch
}

func (s *service) arrivals() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log)
}

func (s *service) forgedCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.forged
}

func waitCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func start(t *testing.T, cfg twiliosim.Config) *twiliosim.Server {
	sim := twiliosim.Start(cfg)
	t.Cleanup(sim.Close)
	return sim
}

func sequences(sts []carrier.Status) []string {
	var out []string
	for _, s := range sts {
		out = append(out, fmt.Sprintf("%d:%s", s.Sequence, s.Raw))
	}
	return out
}

func TestDefaultCallEndToEnd(t *testing.T) {
	sim := start(t, twiliosim.Config{})
	svc := newService(t, sim, true)
	sid := svc.place("+14155550100")
	if err := sim.WaitFinal(waitCtx(t), 1); err != nil {
		t.Fatal(err)
	}
	sts := svc.got(sid)
	want := []string{"1:initiated", "2:ringing", "3:in-progress", "4:completed"}
	if got := sequences(sts); !slices.Equal(got, want) {
		t.Fatalf("callbacks = %v, want %v", got, want)
	}
	final := sts[3]
	if !final.Final || final.Outcome != carrier.OutcomeAnswered || final.AnsweredBy != "human" || !final.Answered {
		t.Fatalf("final = %+v", final)
	}
	if svc.forgedCount() != 0 {
		t.Fatalf("%d webhooks did not verify", svc.forgedCount())
	}
	rec, ok := sim.Call(sid)
	if !ok {
		t.Fatal("call not recorded")
	}
	if rec.Status != "completed" || !rec.Final || rec.AnswerStatus != 200 || rec.TwiMLContentType != "text/xml" ||
		rec.TwiML != `<?xml version="1.0" encoding="UTF-8"?><Response><Say>Hello &amp; bye</Say><Hangup/></Response>` {
		t.Fatalf("record = %+v", rec)
	}
	if rec.N != 1 || rec.Attempt != 1 || rec.Form.Get("MachineDetection") != "Enable" || len(rec.Form["StatusCallbackEvent"]) != 4 {
		t.Fatalf("record info = %+v", rec.CallInfo)
	}
	q, err := svc.car.Query(context.Background(), sid)
	if err != nil || q.Outcome != carrier.OutcomeAnswered || !q.Final || q.ProviderCallID != sid {
		t.Fatalf("Query = %+v, %v", q, err)
	}
	st := sim.Stats()
	if st.Created != 1 || st.InFlight != 0 || st.PeakInFlight != 1 || st.Final != 1 || st.Callbacks != 4 ||
		st.AnswerRequests != 1 || st.CallbackErrors != 0 || st.Fetches != 1 {
		t.Fatalf("stats = %+v", st)
	}
}

func TestOutcomes(t *testing.T) {
	tests := []struct {
		script     twiliosim.Script
		md         bool
		outcome    string
		answeredBy string
		raws       []string
	}{
		{twiliosim.Script{Outcome: twiliosim.Human}, false, carrier.OutcomeAnswered, "",
			[]string{"initiated", "ringing", "in-progress", "completed"}},
		{twiliosim.Script{Outcome: twiliosim.Machine}, true, carrier.OutcomeVoicemail, "machine_start",
			[]string{"initiated", "ringing", "in-progress", "completed"}},
		{twiliosim.Script{Outcome: twiliosim.Machine}, false, carrier.OutcomeAnswered, "",
			[]string{"initiated", "ringing", "in-progress", "completed"}},
		{twiliosim.Script{Outcome: twiliosim.Human, AnsweredBy: "fax"}, true, carrier.OutcomeVoicemail, "fax",
			[]string{"initiated", "ringing", "in-progress", "completed"}},
		{twiliosim.Script{Outcome: twiliosim.Busy}, true, carrier.OutcomeBusy, "", []string{"initiated", "ringing", "busy"}},
		{twiliosim.Script{Outcome: twiliosim.NoAnswer, RingDelay: 5 * time.Millisecond}, false, carrier.OutcomeNoAnswer, "",
			[]string{"initiated", "ringing", "no-answer"}},
		{twiliosim.Script{Outcome: twiliosim.Failed}, false, carrier.OutcomeFailed, "", []string{"initiated", "failed"}},
		{twiliosim.Script{Outcome: twiliosim.Canceled}, false, carrier.OutcomeCanceled, "", []string{"initiated", "ringing", "canceled"}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s md=%v", tt.script.Outcome, tt.md), func(t *testing.T) {
			sim := start(t, twiliosim.Config{Script: func(twiliosim.CallInfo) twiliosim.Script { return tt.script }})
			svc := newService(t, sim, tt.md)
			sid := svc.place("+14155550100")
			if err := sim.WaitFinal(waitCtx(t), 1); err != nil {
				t.Fatal(err)
			}
			sts := svc.got(sid)
			var raws []string
			for _, s := range sts {
				raws = append(raws, s.Raw)
			}
			if !slices.Equal(raws, tt.raws) {
				t.Fatalf("callbacks = %v, want %v", raws, tt.raws)
			}
			last := sts[len(sts)-1]
			if !last.Final || last.Outcome != tt.outcome || last.AnsweredBy != tt.answeredBy {
				t.Fatalf("final = %+v, want outcome %s answered by %q", last, tt.outcome, tt.answeredBy)
			}
			q, err := svc.car.Query(context.Background(), sid)
			if err != nil || q.Outcome != tt.outcome {
				t.Fatalf("Query = %+v, %v", q, err)
			}
			rec, _ := sim.Call(sid)
			answered := tt.outcome == carrier.OutcomeAnswered || tt.outcome == carrier.OutcomeVoicemail
			if (rec.TwiML != "") != answered || (sim.Stats().AnswerRequests == 1) != answered {
				t.Fatalf("answer webhook sent = %v, want %v", rec.TwiML != "", answered)
			}
			if svc.forgedCount() != 0 {
				t.Fatalf("%d webhooks did not verify", svc.forgedCount())
			}
		})
	}
}

func TestAuthentication(t *testing.T) {
	sim := start(t, twiliosim.Config{})
	svc := newService(t, sim, false)
	wrong, _ := carrier.New(carrier.Twilio, map[string]any{"account_sid": sim.AccountSID(), "auth_token": "nope"},
		carrier.Options{BaseURLs: map[string]string{"twilio": sim.URL()}})
	if _, err := wrong.Place(context.Background(), svc.call("+14155550100")); carrier.KindOf(err) != carrier.AuthFailed {
		t.Fatalf("Place with a wrong token = %v, want auth_failed", err)
	}
	var e *carrier.Error
	_, err := wrong.Place(context.Background(), svc.call("+14155550100"))
	if !errors.As(err, &e) || e.Code != "20003" || e.HTTPStatus != 401 {
		t.Fatalf("error = %v", err)
	}
	other, _ := carrier.New(carrier.Twilio, map[string]any{"account_sid": "AC1", "auth_token": sim.AuthToken()},
		carrier.Options{BaseURLs: map[string]string{"twilio": sim.URL()}})
	if _, err := other.Query(context.Background(), "CA1"); carrier.KindOf(err) != carrier.AuthFailed {
		t.Fatalf("Query of another account = %v, want auth_failed", err)
	}
	sim.SetUnauthorized(true)
	if _, err := svc.car.Place(context.Background(), svc.call("+14155550100")); carrier.KindOf(err) != carrier.AuthFailed {
		t.Fatalf("Place in 401 mode = %v, want auth_failed", err)
	}
	sim.SetUnauthorized(false)
	svc.place("+14155550100")
	if st := sim.Stats(); st.Unauthorized != 4 || st.Created != 1 || st.CreateRequests != 4 {
		t.Fatalf("stats = %+v", st)
	}
}

func TestValidation(t *testing.T) {
	sim := start(t, twiliosim.Config{})
	svc := newService(t, sim, false)
	tests := []struct {
		name string
		edit func(c *carrier.Call)
		code string
	}{
		{"no To", func(c *carrier.Call) { c.To = "" }, "21201"},
		{"no From", func(c *carrier.Call) { c.From = "" }, "21213"},
		{"no Url", func(c *carrier.Call) { c.AnswerURL = "" }, "21205"},
		{"relative Url", func(c *carrier.Call) { c.AnswerURL = "/answer" }, "21205"},
		{"bad StatusCallback", func(c *carrier.Call) { c.StatusURL = "ftp://x/y" }, "21205"},
	}
	for _, tt := range tests {
		c := svc.call("+14155550100")
		tt.edit(&c)
		_, err := svc.car.Place(context.Background(), c)
		var e *carrier.Error
		if !errors.As(err, &e) || e.Kind != carrier.Rejected || e.Code != tt.code || e.HTTPStatus != 400 {
			t.Errorf("%s: Place = %v, want rejected %s", tt.name, err, tt.code)
		}
	}
	if st := sim.Stats(); st.Created != 0 || st.Rejected != len(tests) {
		t.Fatalf("stats = %+v", st)
	}
	// An unknown status callback event, through the raw API.
	r, _ := http.NewRequest(http.MethodPost, sim.URL()+"/2010-04-01/Accounts/"+sim.AccountSID()+"/Calls.json",
		strings.NewReader("To=%2B1&From=%2B2&Url=https%3A%2F%2Fa.example&StatusCallbackEvent=answered+bogus"))
	r.SetBasicAuth(sim.AccountSID(), sim.AuthToken())
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(body), `"code":21626`) {
		t.Fatalf("bogus event = %d %s", resp.StatusCode, body)
	}
	if _, err := svc.car.Query(context.Background(), "CA0"); carrier.KindOf(err) != carrier.Rejected {
		t.Fatalf("Query of an unknown call = %v, want rejected", err)
	}
}

// Ended is zero while a call is up and set, not before its create, when it
// reaches its final status, even while its final callback is still held
// back (Stats.InFlight still counts it then).
func TestEnded(t *testing.T) {
	sim := start(t, twiliosim.Config{Script: func(twiliosim.CallInfo) twiliosim.Script {
		return twiliosim.Script{Outcome: twiliosim.Human, TalkDuration: twiliosim.Never, CallbackDelay: time.Second}
	}})
	svc := newService(t, sim, false)
	a, b := svc.place("+14155550100"), svc.place("+14155550101")
	for _, sid := range []string{a, b} {
		if rec, _ := sim.Call(sid); !rec.Ended.IsZero() {
			t.Fatalf("call %s talking: Ended = %v, want zero", sid, rec.Ended)
		}
	}
	if err := svc.car.HangUp(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	ra, _ := sim.Call(a)
	rb, _ := sim.Call(b)
	if ra.Ended.Before(ra.Created) || ra.Ended.After(time.Now()) || ra.Ended.Before(rb.Created) {
		t.Fatalf("hung-up call: Created %v, Ended %v; the other call was created %v", ra.Created, ra.Ended, rb.Created)
	}
	if ra.Status != "completed" || sim.InFlight() != 2 {
		t.Fatalf("hung-up call: status %q, simulator in flight %d; want completed, 2 (its final callback is held back)", ra.Status, sim.InFlight())
	}
	if err := sim.WaitFinal(waitCtx(t), 1); err != nil {
		t.Fatal(err)
	}
	if rb, _ := sim.Call(b); !rb.Ended.IsZero() || sim.InFlight() != 1 || sim.PeakInFlight() != 2 {
		t.Fatalf("other call Ended = %v, in flight %d, peak %d; want zero, 1, 2", rb.Ended, sim.InFlight(), sim.PeakInFlight())
	}
}
