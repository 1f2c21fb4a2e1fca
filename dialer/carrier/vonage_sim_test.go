package carrier

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer/carrier/vonagesim"
)

// vonageService is a stand-in for the web layer: it hands webhooks to the
// carrier as carrier.Webhook and answers 403 for ErrForged.
type vonageService struct {
	c        Carrier
	srv      *httptest.Server
	mu       sync.Mutex
	statuses []Status
	answers  int
}

func newVonageService(t *testing.T) *vonageService {
	vs := &vonageService{}
	vs.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		hook := Webhook{Request: r, Body: body, PublicURL: vs.srv.URL + r.URL.RequestURI()}
		if strings.HasPrefix(r.URL.Path, "/answer") {
			if _, err := vs.c.VerifyAnswer(hook); err != nil {
				vonageHTTPErr(w, err)
				return
			}
			ct, ncco := vs.c.AnswerMarkup(Answer{AttemptID: 9, Greeting: "Hello"})
			vs.mu.Lock()
			vs.answers++
			vs.mu.Unlock()
			w.Header().Set("Content-Type", ct)
			w.Write(ncco)
			return
		}
		st, err := vs.c.ParseStatus(hook)
		if err != nil {
			vonageHTTPErr(w, err)
			return
		}
		vs.mu.Lock()
		vs.statuses = append(vs.statuses, st)
		vs.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(vs.srv.Close)
	return vs
}

func vonageHTTPErr(w http.ResponseWriter, err error) {
	if errors.Is(err, ErrForged) {
		w.WriteHeader(http.StatusForbidden)
		return
	}
	w.WriteHeader(http.StatusInternalServerError)
}

func (vs *vonageService) raw() []string {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	var out []string
	for _, s := range vs.statuses {
		out = append(out, s.Raw)
	}
	return out
}

func vonageWaitSim(t *testing.T, sim *vonagesim.Server, cond func(vonagesim.Stats) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := sim.Wait(ctx, cond); err != nil {
		t.Fatalf("timed out (sim %+v)", sim.Stats())
	}
}

// TestVonageAgainstSimulator places calls through the simulator with the
// real adapter: the simulator checks the RS256 JWT and the request, and the
// adapter verifies the simulator's signed webhooks.
func TestVonageAgainstSimulator(t *testing.T) {
	sim := vonagesim.Start(vonagesim.Config{Script: func(ci vonagesim.CallInfo) vonagesim.Script {
		switch ci.To {
		case "14155550001":
			return vonagesim.Script{Outcome: vonagesim.Machine, TalkDuration: 5 * time.Millisecond}
		case "14155550002":
			return vonagesim.Script{Outcome: vonagesim.Human, RingDelay: vonagesim.Never}
		}
		return vonagesim.Script{Outcome: vonagesim.Busy}
	}})
	defer sim.Close()
	vs := newVonageService(t)
	c, err := New(Vonage, sim.Credentials(true), Options{BaseURLs: map[string]string{Vonage: sim.URL()}})
	if err != nil {
		t.Fatal(err)
	}
	vs.c = c
	ctx := context.Background()
	call := func(to string) Call {
		return Call{To: to, From: "+14155550100", AnswerURL: vs.srv.URL + "/answer/1?t=x", StatusURL: vs.srv.URL + "/status/1?t=x",
			RingTimeout: 60 * time.Second, TimeLimit: time.Hour}
	}
	machine, err := c.Place(ctx, call("+14155550001"))
	if err != nil {
		t.Fatal(err)
	}
	vonageWaitSim(t, sim, func(s vonagesim.Stats) bool { return s.Final == 1 })
	if got := strings.Join(vs.raw(), ","); got != "started,ringing,answered,machine,completed" {
		t.Fatalf("statuses %s", got)
	}
	rec, _ := sim.Call(machine.ProviderCallID)
	if rec.NCCO != `[{"action":"talk","text":"Hello"}]` || rec.AnswerStatus != 200 || rec.Request.MachineDetection != "continue" {
		t.Fatalf("record %+v", rec)
	}
	if st, err := c.Query(ctx, machine.ProviderCallID); err != nil || st.Outcome != OutcomeAnswered || st.ProviderCallID != machine.ProviderCallID {
		t.Fatalf("query: %+v %v", st, err)
	}

	// A replay of the final event verifies (the store, not the carrier,
	// makes it a no-op); a forgery is refused.
	if code, err := sim.Replay(ctx, machine.ProviderCallID); err != nil || code >= 300 {
		t.Fatalf("replay: %d %v, want 2xx", code, err)
	}
	body, _ := sim.EventBody(machine.ProviderCallID, "completed", true)
	cl := sim.Claims(body)
	forged := vonagesim.Callback{URL: vs.srv.URL + "/status/1?t=x", Body: body,
		Authorization: "Bearer " + vonagesim.Token("not-the-secret", cl)}
	if code, err := sim.Send(ctx, forged); err != nil || code != http.StatusForbidden {
		t.Fatalf("forged: %d %v, want 403", code, err)
	}
	forged.Authorization = sim.Authorization(body)
	if code, err := sim.Send(ctx, forged); err != nil || code != http.StatusNoContent {
		t.Fatalf("genuine: %d %v, want 204", code, err)
	}

	// Ringing until hung up: cancelled; hanging up again is fine.
	ringing, err := c.Place(ctx, call("+14155550002"))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.HangUp(ctx, ringing.ProviderCallID); err != nil {
		t.Fatal(err)
	}
	vonageWaitSim(t, sim, func(s vonagesim.Stats) bool { return s.Final == 2 })
	if err := c.HangUp(ctx, ringing.ProviderCallID); err != nil {
		t.Fatalf("second hang up: %v", err)
	}
	if st, _ := c.Query(ctx, ringing.ProviderCallID); st.Outcome != OutcomeCanceled {
		t.Fatalf("query after hang up: %+v", st)
	}

	// Faults.
	sim.TooManyRequestsNext(1)
	if _, err := c.Place(ctx, call("+14155550003")); KindOf(err) != RateLimited {
		t.Fatalf("429: %v", err)
	}
	sim.SetUnauthorized(true)
	if _, err := c.Place(ctx, call("+14155550003")); KindOf(err) != AuthFailed {
		t.Fatalf("401: %v", err)
	}
	sim.SetUnauthorized(false)
	if _, err := c.Place(ctx, call("14155550003")); err != nil {
		t.Fatalf("number without +: %v", err)
	}
	if _, err := c.Place(ctx, call("+1415")); KindOf(err) != Rejected {
		t.Fatalf("short number: %v, want Rejected", err)
	}
	// Another application's key is refused.
	other := sim.Credentials(false)
	other["application_id"] = "someone-else"
	oc, _ := New(Vonage, other, Options{BaseURLs: map[string]string{Vonage: sim.URL()}})
	if _, err := oc.Place(ctx, call("+14155550003")); KindOf(err) != AuthFailed {
		t.Fatalf("other application: %v", err)
	}
}

// TestVonageAnswerByGetAgainstSimulator: an answer_url requested with GET
// (parameters in the query, after our own token) verifies too: the
// simulator hashes the JSON of the query parameters, as Vonage documents.
func TestVonageAnswerByGetAgainstSimulator(t *testing.T) {
	sim := vonagesim.Start(vonagesim.Config{})
	defer sim.Close()
	vs := newVonageService(t)
	c, err := New(Vonage, sim.Credentials(false), Options{BaseURLs: map[string]string{Vonage: sim.URL()}})
	if err != nil {
		t.Fatal(err)
	}
	vs.c = c
	v := c.(*vonage)
	body := v.placeBody(Call{To: "+14155550123", From: "+14155550100", AnswerURL: vs.srv.URL + "/answer/1?t=x", StatusURL: vs.srv.URL + "/status/1?t=x"})
	body.AnswerMethod = http.MethodGet
	var placed vonageCall
	if err := v.do(context.Background(), http.MethodPost, v.callsURL(""), body, &placed); err != nil {
		t.Fatal(err)
	}
	vonageWaitSim(t, sim, func(s vonagesim.Stats) bool { return s.Final == 1 })
	rec, _ := sim.Call(placed.UUID)
	if rec.AnswerStatus != 200 || rec.NCCO != `[{"action":"talk","text":"Hello"}]` {
		t.Fatalf("GET answer: %d %q", rec.AnswerStatus, rec.NCCO)
	}
	if st := sim.Stats(); st.CallbackErrors != 0 || st.AnswerErrors != 0 {
		t.Fatalf("sim stats %+v", st)
	}
}
