package twiliosim_test

import (
	"context"
	"errors"
	"fmt"
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

func scripted(s twiliosim.Script) twiliosim.Config {
	return twiliosim.Config{Script: func(twiliosim.CallInfo) twiliosim.Script { return s }}
}

func TestTooManyRequestsNext(t *testing.T) {
	sim := start(t, twiliosim.Config{})
	svc := newService(t, sim, false)
	sim.TooManyRequestsNext(2)
	for i := range 2 {
		_, err := svc.car.Place(context.Background(), svc.call("+14155550100"))
		var e *carrier.Error
		if !errors.As(err, &e) || e.Kind != carrier.RateLimited || e.Code != "20429" || e.HTTPStatus != 429 {
			t.Fatalf("Place %d = %v, want rate_limited 20429", i, err)
		}
	}
	svc.place("+14155550100")
	if err := sim.WaitFinal(waitCtx(t), 1); err != nil {
		t.Fatal(err)
	}
	if st := sim.Stats(); st.RateLimited != 2 || st.Created != 1 || st.CreateRequests != 3 || sim.CreatesTo("+14155550100") != 1 {
		t.Fatalf("stats = %+v", st)
	}
}

func TestFaultFunction(t *testing.T) {
	sim := start(t, twiliosim.Config{})
	svc := newService(t, sim, false)
	sim.SetFault(func(r twiliosim.Request) *twiliosim.Fault {
		switch {
		case r.Op == twiliosim.OpCreate && r.Form.Get("To") == "+14155550102":
			f := twiliosim.TooManyRequests()
			f.RetryAfter = "2"
			return f
		case r.Op == twiliosim.OpCreate && r.Form.Get("To") == "+14155550103":
			return &twiliosim.Fault{Status: 400, Code: 21211, Message: "Invalid 'To' Phone Number"}
		case r.Op == twiliosim.OpFetch:
			return twiliosim.TooManyRequests()
		}
		return nil
	})
	var e *carrier.Error
	if _, err := svc.car.Place(context.Background(), svc.call("+14155550102")); !errors.As(err, &e) ||
		e.Kind != carrier.RateLimited || e.RetryAfter != 2*time.Second {
		t.Fatalf("Place = %v, want rate_limited with Retry-After 2s", err)
	}
	if _, err := svc.car.Place(context.Background(), svc.call("+14155550103")); !errors.As(err, &e) ||
		e.Kind != carrier.Rejected || e.Code != "21211" {
		t.Fatalf("Place = %v, want rejected 21211", err)
	}
	sid := svc.place("+14155550101")
	if _, err := svc.car.Query(context.Background(), sid); carrier.KindOf(err) != carrier.RateLimited {
		t.Fatalf("Query = %v, want rate_limited", err)
	}
	sim.SetFault(nil)
	if _, err := svc.car.Query(context.Background(), sid); err != nil {
		t.Fatalf("Query after SetFault(nil): %v", err)
	}
	if st := sim.Stats(); st.RateLimited != 2 || st.Rejected != 1 || st.Created != 1 {
		t.Fatalf("stats = %+v", st)
	}
}

// A 5xx whose call was created anyway: the carrier cannot tell, the call
// plays and its callbacks reach the service.
func TestFaultCreatesCall(t *testing.T) {
	sim := start(t, twiliosim.Config{})
	svc := newService(t, sim, false)
	sim.SetFault(func(r twiliosim.Request) *twiliosim.Fault {
		return &twiliosim.Fault{Status: 502, Code: 20500, Message: "Bad Gateway", Create: true}
	})
	_, err := svc.car.Place(context.Background(), svc.call("+14155550100"))
	if err == nil || carrier.KindOf(err) != "" {
		t.Fatalf("Place = %v, want a plain error", err)
	}
	if err := sim.WaitFinal(waitCtx(t), 1); err != nil {
		t.Fatal(err)
	}
	calls := sim.Calls()
	if len(calls) != 1 || sim.CreatesTo("+14155550100") != 1 || len(svc.got(calls[0].SID)) != 4 {
		t.Fatalf("calls = %d, creates = %d", len(calls), sim.CreatesTo("+14155550100"))
	}
}

func TestPeakInFlight(t *testing.T) {
	sim := start(t, scripted(twiliosim.Script{TalkDuration: twiliosim.Never}))
	svc := newService(t, sim, false)
	sids := make([]string, 5)
	var wg sync.WaitGroup
	for i := range sids {
		wg.Go(func() { sids[i] = svc.place("+1415555010" + string(rune('0'+i))) })
	}
	wg.Wait()
	if st := sim.Stats(); st.InFlight != 5 || st.PeakInFlight != 5 {
		t.Fatalf("stats = %+v, want 5 in flight", st)
	}
	for _, sid := range sids[:2] {
		if err := svc.car.HangUp(context.Background(), sid); err != nil {
			t.Fatal(err)
		}
	}
	if err := sim.WaitFinal(waitCtx(t), 2); err != nil {
		t.Fatal(err)
	}
	sim.ResetPeak()
	if st := sim.Stats(); st.InFlight != 3 || st.PeakInFlight != 3 || st.HangUps != 2 {
		t.Fatalf("stats = %+v, want 3 in flight", st)
	}
	for _, sid := range sids[2:] {
		if err := svc.car.HangUp(context.Background(), sid); err != nil {
			t.Fatal(err)
		}
	}
	if err := sim.WaitFinal(waitCtx(t), 5); err != nil {
		t.Fatal(err)
	}
	if st := sim.Stats(); st.InFlight != 0 || st.PeakInFlight != 3 {
		t.Fatalf("stats = %+v", st)
	}
	for _, sid := range sids {
		sts := svc.got(sid)
		if last := sts[len(sts)-1]; last.Outcome != carrier.OutcomeAnswered {
			t.Fatalf("hung-up call %s ended %+v", sid, last)
		}
	}
}

// A call leaves the in-flight count when its final callback starts, before
// the service acknowledges it.
func TestInFlightEndsAsFinalCallbackStarts(t *testing.T) {
	sim := start(t, twiliosim.Config{})
	svc := newService(t, sim, false)
	arrived, release := make(chan struct{}), make(chan struct{})
	svc.hold = func(carrier.Status) { close(arrived); <-release }
	svc.place("+14155550100")
	<-arrived
	if st := sim.Stats(); st.InFlight != 0 || st.Final != 0 {
		t.Fatalf("stats while the final callback is being handled = %+v", st)
	}
	close(release)
	if err := sim.WaitFinal(waitCtx(t), 1); err != nil {
		t.Fatal(err)
	}
}

func TestCallbackOrderOptions(t *testing.T) {
	tests := []struct {
		name   string
		script twiliosim.Script
		want   []string
	}{
		{"in order", twiliosim.Script{}, []string{"1:initiated", "2:ringing", "answer", "3:in-progress", "4:completed"}},
		{"duplicated", twiliosim.Script{Duplicate: true},
			[]string{"1:initiated", "1:initiated", "2:ringing", "2:ringing", "answer", "3:in-progress", "3:in-progress", "4:completed", "4:completed"}},
		{"out of order", twiliosim.Script{OutOfOrder: true},
			[]string{"answer", "4:completed", "3:in-progress", "2:ringing", "1:initiated"}},
		{"out of order and duplicated", twiliosim.Script{OutOfOrder: true, Duplicate: true},
			[]string{"answer", "4:completed", "4:completed", "3:in-progress", "3:in-progress", "2:ringing", "2:ringing", "1:initiated", "1:initiated"}},
		{"delayed", twiliosim.Script{CallbackDelay: 20 * time.Millisecond},
			[]string{"answer", "1:initiated", "2:ringing", "3:in-progress", "4:completed"}},
		{"final lost", twiliosim.Script{LoseFinal: true}, []string{"1:initiated", "2:ringing", "answer", "3:in-progress"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := scripted(tt.script)
			cfg.RecordCallbacks = true
			sim := start(t, cfg)
			svc := newService(t, sim, false)
			sid := svc.place("+14155550100")
			if err := sim.WaitFinal(waitCtx(t), 1); err != nil {
				t.Fatal(err)
			}
			if got := svc.arrivals(); !slices.Equal(got, tt.want) {
				t.Fatalf("arrivals = %v, want %v", got, tt.want)
			}
			rec, _ := sim.Call(sid)
			if len(rec.Callbacks) != len(tt.want)-1 {
				t.Fatalf("recorded %d callbacks, want %d", len(rec.Callbacks), len(tt.want)-1)
			}
			for _, cb := range rec.Callbacks {
				if cb.Status != http.StatusNoContent || cb.Params.Get("CallSid") != sid {
					t.Fatalf("callback = %+v", cb)
				}
			}
			if tt.script.CallbackDelay > 0 {
				first, _ := time.Parse("Mon, 02 Jan 2006 15:04:05 -0000", rec.Callbacks[0].Params.Get("Timestamp"))
				if first.IsZero() {
					t.Fatalf("Timestamp = %q", rec.Callbacks[0].Params.Get("Timestamp"))
				}
			}
			if st := sim.Stats(); st.InFlight != 0 || st.Final != 1 {
				t.Fatalf("stats = %+v", st)
			}
			q, err := svc.car.Query(context.Background(), sid)
			if err != nil || q.Outcome != carrier.OutcomeAnswered {
				t.Fatalf("Query = %+v, %v", q, err)
			}
		})
	}
}

func TestHangUp(t *testing.T) {
	sim := start(t, twiliosim.Config{})
	svc := newService(t, sim, false)

	sim.SetScript(func(twiliosim.CallInfo) twiliosim.Script { return twiliosim.Script{RingDelay: twiliosim.Never} })
	ringing := svc.place("+14155550100")
	if err := sim.Wait(waitCtx(t), func(st twiliosim.Stats) bool { return st.Callbacks >= 2 }); err != nil {
		t.Fatal(err)
	}
	if err := svc.car.HangUp(context.Background(), ringing); err != nil {
		t.Fatal(err)
	}
	if err := sim.WaitFinal(waitCtx(t), 1); err != nil {
		t.Fatal(err)
	}
	if sts := svc.got(ringing); sequences(sts)[len(sts)-1] != "3:canceled" {
		t.Fatalf("ringing call hung up: %v", sequences(sts))
	}

	sim.SetScript(func(twiliosim.CallInfo) twiliosim.Script {
		return twiliosim.Script{TalkDuration: twiliosim.Never, CallDuration: 33}
	})
	talking := svc.place("+14155550101")
	if err := sim.Wait(waitCtx(t), func(st twiliosim.Stats) bool { return st.Callbacks >= 6 }); err != nil {
		t.Fatal(err)
	}
	// Status=canceled leaves an answered call up.
	form := url.Values{"Status": {"canceled"}}
	req, _ := http.NewRequest(http.MethodPost, sim.URL()+"/2010-04-01/Accounts/"+sim.AccountSID()+"/Calls/"+talking+".json",
		strings.NewReader(form.Encode()))
	req.SetBasicAuth(sim.AccountSID(), sim.AuthToken())
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("cancel = %v, %v", resp, err)
	}
	resp.Body.Close()
	if q, _ := svc.car.Query(context.Background(), talking); q.Raw != "in-progress" {
		t.Fatalf("after Status=canceled: %+v", q)
	}
	if err := svc.car.HangUp(context.Background(), talking); err != nil {
		t.Fatal(err)
	}
	if err := sim.WaitFinal(waitCtx(t), 2); err != nil {
		t.Fatal(err)
	}
	sts := svc.got(talking)
	if last := sts[len(sts)-1]; last.Outcome != carrier.OutcomeAnswered || last.DurationSeconds != 33 {
		t.Fatalf("talking call hung up: %+v", last)
	}
	if err := svc.car.HangUp(context.Background(), talking); err != nil {
		t.Fatalf("second HangUp: %v", err)
	}
}

func TestScriptByAttempt(t *testing.T) {
	sim := start(t, twiliosim.Config{Script: func(c twiliosim.CallInfo) twiliosim.Script {
		if c.Attempt == 1 {
			return twiliosim.Script{Outcome: twiliosim.Busy}
		}
		return twiliosim.DefaultScript(c)
	}})
	svc := newService(t, sim, false)
	first := svc.place("+14155550100")
	second := svc.place("+14155550100")
	other := svc.place("+14155550101")
	if err := sim.WaitFinal(waitCtx(t), 3); err != nil {
		t.Fatal(err)
	}
	outcome := func(sid string) string { sts := svc.got(sid); return sts[len(sts)-1].Outcome }
	if outcome(first) != carrier.OutcomeBusy || outcome(second) != carrier.OutcomeAnswered || outcome(other) != carrier.OutcomeBusy {
		t.Fatalf("outcomes = %s, %s, %s", outcome(first), outcome(second), outcome(other))
	}
	if got := sim.CreatesByTo(); got["+14155550100"] != 2 || got["+14155550101"] != 1 || len(got) != 2 {
		t.Fatalf("CreatesByTo = %v", got)
	}
	calls := sim.Calls()
	if len(calls) != 3 || calls[0].SID != first || calls[2].N != 3 || calls[1].Attempt != 2 {
		t.Fatalf("calls = %+v", calls)
	}
	if len(first) != 34 || !strings.HasPrefix(first, "CA") {
		t.Fatalf("sid = %q", first)
	}
}

// Webhooks asked for with GET carry their parameters in the query string and
// are signed over the full URL.
func TestGetWebhooks(t *testing.T) {
	sim := start(t, twiliosim.Config{})
	var mu sync.Mutex
	var bad, got int
	var hook *httptest.Server
	hook = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		got++
		full := hook.URL + r.URL.RequestURI()
		if r.Method != http.MethodGet || r.URL.Query().Get("CallSid") == "" || r.URL.Query().Get("t") != "1" ||
			r.Header.Get("X-Twilio-Signature") != twiliosim.Signature(sim.AuthToken(), full, nil) {
			bad++
		}
	}))
	t.Cleanup(hook.Close)
	form := url.Values{"To": {"+1"}, "From": {"+2"}, "Url": {hook.URL + "/a?t=1"}, "Method": {"GET"},
		"StatusCallback": {hook.URL + "/s?t=1"}, "StatusCallbackMethod": {"GET"}, "StatusCallbackEvent": {"initiated ringing answered completed"}}
	req, _ := http.NewRequest(http.MethodPost, sim.URL()+"/2010-04-01/Accounts/"+sim.AccountSID()+"/Calls.json", strings.NewReader(form.Encode()))
	req.SetBasicAuth(sim.AccountSID(), sim.AuthToken())
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("create = %v, %v", resp, err)
	}
	resp.Body.Close()
	if err := sim.WaitFinal(waitCtx(t), 1); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if got != 5 || bad != 0 {
		t.Fatalf("webhooks = %d, bad = %d", got, bad)
	}
}

// Callbacks signed by the simulator do not verify under another token, and
// the simulator counts the service's refusals.
func TestWrongTokenCallbacksAreForged(t *testing.T) {
	sim := start(t, twiliosim.Config{})
	svc := newService(t, sim, false)
	svc.car, _ = carrier.New(carrier.Twilio, map[string]any{"account_sid": sim.AccountSID(), "auth_token": "rotated"},
		carrier.Options{BaseURLs: map[string]string{"twilio": sim.URL()}})
	c, _ := carrier.New(carrier.Twilio, sim.Credentials(false), carrier.Options{BaseURLs: map[string]string{"twilio": sim.URL()}})
	if _, err := c.Place(context.Background(), svc.call("+14155550100")); err != nil {
		t.Fatal(err)
	}
	if err := sim.WaitFinal(waitCtx(t), 1); err != nil {
		t.Fatal(err)
	}
	if svc.forgedCount() != 5 {
		t.Fatalf("forged = %d, want 5", svc.forgedCount())
	}
	if st := sim.Stats(); st.CallbackErrors != 4 {
		t.Fatalf("stats = %+v", st)
	}
}

func TestCloseStopsCalls(t *testing.T) {
	sim := twiliosim.Start(scripted(twiliosim.Script{RingDelay: twiliosim.Never, CallbackDelay: time.Hour}))
	svc := newService(t, sim, false)
	for range 3 {
		svc.place("+14155550100")
	}
	done := make(chan struct{})
	go func() { sim.Close(); sim.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return")
	}
	if st := sim.Stats(); st.Created != 3 || st.InFlight != 3 || st.Callbacks != 0 {
		t.Fatalf("stats = %+v", st)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if err := sim.WaitFinal(ctx, 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitFinal = %v", err)
	}
}

func TestManyConcurrentCalls(t *testing.T) {
	const calls, workers = 400, 100
	sim := start(t, twiliosim.Config{})
	svc := newService(t, sim, true)
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				// Like the engine: a worker's next call waits for the
				// final status of its previous one.
				p, err := svc.car.Place(context.Background(), svc.call(fmt.Sprintf("+1415555%04d", i)))
				if err != nil {
					t.Error(err)
					continue
				}
				<-svc.finalOf(p.ProviderCallID)
			}
		})
	}
	for i := range calls {
		next <- i
	}
	close(next)
	wg.Wait()
	if err := sim.WaitFinal(waitCtx(t), calls); err != nil {
		t.Fatal(err)
	}
	st := sim.Stats()
	if st.Created != calls || st.InFlight != 0 || st.PeakInFlight > workers || st.PeakInFlight < 2 || st.Callbacks != 4*calls ||
		st.AnswerRequests != calls || st.CallbackErrors != 0 || svc.forgedCount() != 0 {
		t.Fatalf("stats = %+v, forged = %d", st, svc.forgedCount())
	}
	for to, n := range sim.CreatesByTo() {
		if n != 1 {
			t.Fatalf("%s called %d times", to, n)
		}
	}
}
