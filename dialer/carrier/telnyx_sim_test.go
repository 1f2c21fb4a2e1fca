package carrier

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer/carrier/telnyxsim"
)

// telnyxLoop plays the dialer's part against the simulator: every event is
// verified and parsed by the carrier, NeedsAnswer calls Answered and HangUp
// calls HangUp, as the engine does; the statuses are kept in order.
type telnyxLoop struct {
	t      *testing.T
	c      *telnyx
	answer Answer
	srv    *httptest.Server
	mu     sync.Mutex
	got    []Status
	forged int
	final  chan Status
}

func newTelnyxLoop(t *testing.T, sim *telnyxsim.Server, signed, amd bool, answer Answer) *telnyxLoop {
	t.Helper()
	creds := sim.Credentials("", signed, amd)
	c, err := New(Telnyx, creds, Options{BaseURLs: map[string]string{Telnyx: sim.URL()}})
	if err != nil {
		t.Fatal(err)
	}
	l := &telnyxLoop{t: t, c: c.(*telnyx), answer: answer, final: make(chan Status, 1)}
	l.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		st, err := l.c.ParseStatus(Webhook{Request: r, Body: body, PublicURL: "http://" + r.Host + r.URL.RequestURI()})
		if errors.Is(err, ErrForged) {
			l.mu.Lock()
			l.forged++
			l.mu.Unlock()
			w.WriteHeader(http.StatusForbidden)
			return
		}
		if err != nil {
			t.Errorf("ParseStatus: %v", err)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		l.mu.Lock()
		l.got = append(l.got, st)
		l.mu.Unlock()
		w.WriteHeader(http.StatusOK)
		ctx := context.Background()
		if st.NeedsAnswer {
			if err := l.c.Answered(ctx, st.ProviderCallID, l.answer); err != nil {
				t.Errorf("Answered: %v", err)
			}
		}
		if st.HangUp {
			if err := l.c.HangUp(ctx, st.ProviderCallID); err != nil {
				t.Errorf("HangUp: %v", err)
			}
		}
		if st.Final {
			l.final <- st
		}
	}))
	t.Cleanup(l.srv.Close)
	return l
}

func (l *telnyxLoop) place(call Call) Placed {
	l.t.Helper()
	call.StatusURL = l.srv.URL + "/api/v1/telephony/telnyx/status/1?t=tok"
	if call.To == "" {
		call.To, call.From = "+14155550123", "+14155550100"
	}
	p, err := l.c.Place(context.Background(), call)
	if err != nil {
		l.t.Fatalf("Place: %v", err)
	}
	return p
}

func (l *telnyxLoop) wait() Status {
	l.t.Helper()
	select {
	case st := <-l.final:
		return st
	case <-time.After(5 * time.Second):
		l.t.Fatalf("no final status; got %+v", l.statuses())
		return Status{}
	}
}

func (l *telnyxLoop) statuses() []Status {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Status(nil), l.got...)
}

func TestTelnyxAgainstSimulator(t *testing.T) {
	t.Run("greeting spoken, then hung up by us", func(t *testing.T) {
		sim := telnyxsim.Start(telnyxsim.Config{Script: func(telnyxsim.CallInfo) telnyxsim.Script {
			return telnyxsim.Script{TalkDuration: telnyxsim.Never, SpeakDuration: 5 * time.Millisecond}
		}})
		defer sim.Close()
		l := newTelnyxLoop(t, sim, true, false, Answer{AttemptID: 1, Greeting: "Hello Ann"})
		p := l.place(Call{AttemptID: 1, RingTimeout: time.Minute, TimeLimit: time.Hour})
		st := l.wait()
		if st.Outcome != OutcomeAnswered || !st.Answered || st.ProviderCallID != p.ProviderCallID || st.Raw != "normal_clearing" {
			t.Fatalf("final = %+v", st)
		}
		rec, _ := sim.Call(p.ProviderCallID)
		if len(rec.Commands) != 2 || rec.Commands[0].Name != "speak" || rec.Commands[1].Name != "hangup" {
			t.Fatalf("commands = %+v", rec.Commands)
		}
		var raws []string
		for _, s := range l.statuses() {
			raws = append(raws, s.Raw)
		}
		want := []string{"call.initiated", "call.answered", "call.speak.started", "call.speak.ended", "normal_clearing"}
		if len(raws) != len(want) {
			t.Fatalf("statuses = %v, want %v", raws, want)
		}
		for i := range want {
			if raws[i] != want[i] {
				t.Fatalf("statuses = %v, want %v", raws, want)
			}
		}
	})
	t.Run("machine with detection", func(t *testing.T) {
		sim := telnyxsim.Start(telnyxsim.Config{Script: func(telnyxsim.CallInfo) telnyxsim.Script {
			return telnyxsim.Script{Outcome: telnyxsim.Machine, TalkDuration: telnyxsim.Never, SpeakDuration: 5 * time.Millisecond}
		}})
		defer sim.Close()
		l := newTelnyxLoop(t, sim, true, true, Answer{AttemptID: 1, Greeting: "Hello"})
		l.place(Call{AttemptID: 1})
		l.wait()
		machine := false
		for _, s := range l.statuses() {
			machine = machine || IsMachine(s.AnsweredBy)
		}
		if !machine {
			t.Fatalf("no machine verdict in %+v", l.statuses())
		}
	})
	t.Run("agent stream at dial, no commands", func(t *testing.T) {
		sim := telnyxsim.Start(telnyxsim.Config{Script: func(telnyxsim.CallInfo) telnyxsim.Script {
			return telnyxsim.Script{TalkDuration: 5 * time.Millisecond}
		}})
		defer sim.Close()
		a := Answer{AttemptID: 1, AgentURL: "wss://agent.example/ws", Context: map[string]string{"first_name": "Ann"}}
		l := newTelnyxLoop(t, sim, false, false, a)
		p := l.place(Call{AttemptID: 1, Answer: &a})
		if st := l.wait(); st.Outcome != OutcomeAnswered {
			t.Fatalf("final = %+v", st)
		}
		rec, _ := sim.Call(p.ProviderCallID)
		if len(rec.Commands) != 0 || rec.StreamURL != "wss://agent.example/ws?attempt_id=1&first_name=Ann" {
			t.Fatalf("commands %+v, stream %q", rec.Commands, rec.StreamURL)
		}
	})
	t.Run("busy, a replay verified, a forgery refused", func(t *testing.T) {
		sim := telnyxsim.Start(telnyxsim.Config{RecordEvents: true, Script: func(telnyxsim.CallInfo) telnyxsim.Script {
			return telnyxsim.Script{Outcome: telnyxsim.Busy}
		}})
		defer sim.Close()
		l := newTelnyxLoop(t, sim, true, false, Answer{})
		p := l.place(Call{AttemptID: 1})
		if st := l.wait(); st.Outcome != OutcomeBusy || st.Answered {
			t.Fatalf("final = %+v", st)
		}
		if err := sim.WaitFinal(context.Background(), 1); err != nil {
			t.Fatal(err)
		}
		rec, _ := sim.Call(p.ProviderCallID)
		last := rec.Events[len(rec.Events)-1]
		if status, err := sim.Deliver(context.Background(), last); err != nil || status != http.StatusOK {
			t.Fatalf("replay = %d %v, want 200 (the store makes it a no-op)", status, err)
		}
		if status, err := sim.Deliver(context.Background(), telnyxsim.Forged(sim.SignedEvent(last.URL, last.Body))); err != nil || status != http.StatusForbidden {
			t.Fatalf("forged = %d %v, want 403", status, err)
		}
		if status, _ := sim.Deliver(context.Background(), sim.SignedEvent(last.URL, []byte(`{"data":{"event_type":"call.initiated","payload":{"call_control_id":"v3:x"}}}`))); status != http.StatusOK {
			t.Fatalf("fresh signed event = %d, want 200", status)
		}
	})
	t.Run("query and hang up an ended call", func(t *testing.T) {
		sim := telnyxsim.Start(telnyxsim.Config{Script: func(telnyxsim.CallInfo) telnyxsim.Script {
			return telnyxsim.Script{Outcome: telnyxsim.Busy, LoseFinal: true}
		}})
		defer sim.Close()
		l := newTelnyxLoop(t, sim, true, false, Answer{})
		p := l.place(Call{AttemptID: 1})
		if err := sim.WaitFinal(context.Background(), 1); err != nil {
			t.Fatal(err)
		}
		st, err := l.c.Query(context.Background(), p.ProviderCallID)
		if err != nil || st.Final || st.Raw != "ended" {
			t.Fatalf("Query = %+v, %v", st, err)
		}
		if err := l.c.HangUp(context.Background(), p.ProviderCallID); err != nil {
			t.Fatalf("HangUp of an ended call: %v", err)
		}
	})
	t.Run("provision then dial through the new application", func(t *testing.T) {
		sim := telnyxsim.Start(telnyxsim.Config{})
		defer sim.Close()
		opts := Options{BaseURLs: map[string]string{Telnyx: sim.URL()}}
		field, id, err := Provision(context.Background(), Telnyx, map[string]any{"api_key": sim.APIKey()},
			Target{Name: "outdial", StatusURL: "https://svc.example/api/v1/telephony/telnyx/status"}, opts)
		if err != nil || field != "connection_id" || id == "" {
			t.Fatalf("Provision = %q %q %v", field, id, err)
		}
		c, err := New(Telnyx, map[string]any{"api_key": sim.APIKey(), "connection_id": id}, opts)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Place(context.Background(), Call{AttemptID: 1, To: "+14155550123", From: "+14155550100"}); err != nil {
			t.Fatalf("Place through the provisioned application: %v", err)
		}
		sim.SetUnauthorized(true)
		_, _, err = Provision(context.Background(), Telnyx, map[string]any{"api_key": sim.APIKey()}, Target{Name: "x", StatusURL: "https://svc.example/s"}, opts)
		var pe *ProvisionError
		if !errors.As(err, &pe) || pe.Status != http.StatusUnprocessableEntity || pe.Field != "api_key" {
			t.Fatalf("Provision with a refused key = %v", err)
		}
		if _, err := c.Place(context.Background(), Call{AttemptID: 2, To: "+14155550123", From: "+14155550100"}); KindOf(err) != AuthFailed {
			t.Fatalf("Place with a refused key = %v, want AuthFailed", err)
		}
	})
}
