package dialer_test

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer/carrier/twiliosim"
	"github.com/outdial/outdial/store"
)

// TestRestartMidCampaign stops the engine the way a crash does while calls
// are in flight and two provider requests are under way, then starts a new
// engine on the same database:
//
//   - of the two requests under way, one never reached the provider: its
//     attempt ends unknown and is never placed again; the other created the
//     call, whose first webhooks arrived before the service went down: it is
//     recorded in flight at the start and finishes by its callback;
//   - the two calls that ended while the service was down (their final
//     callbacks lost) are reconciled through the status query;
//   - the two calls still talking finish by their callbacks;
//   - the campaign carries on by itself and completes, every other contact
//     called exactly once.
func TestRestartMidCampaign(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: func(ci twiliosim.CallInfo) twiliosim.Script {
		if ci.N <= 5 {
			return twiliosim.Script{Outcome: twiliosim.Human, TalkDuration: twiliosim.Never}
		}
		return twiliosim.Script{Outcome: twiliosim.Human, TalkDuration: 10 * time.Millisecond}
	}})
	// The 5th and 6th create requests hang until the engine is gone, then
	// fail (503); the 5th creates its call all the same.
	var creates, hanging atomic.Int32
	release := make(chan struct{})
	var lostTo atomic.Value
	h.sim.SetFault(func(r twiliosim.Request) *twiliosim.Fault {
		if r.Op != twiliosim.OpCreate {
			return nil
		}
		switch creates.Add(1) {
		case 5:
			hanging.Add(1)
			<-release
			return &twiliosim.Fault{Status: 503, Code: 20503, Message: "Service Unavailable", Create: true}
		case 6:
			lostTo.Store(r.Form.Get("To"))
			hanging.Add(1)
			<-release
			return &twiliosim.Fault{Status: 503, Code: 20503, Message: "Service Unavailable"}
		}
		return nil
	})
	c := h.campaign(16, store.Settings{MaxConcurrency: 6}, nil)
	h.do(c.ID, store.OpStart)
	h.waitSim("four calls talking", func(s twiliosim.Stats) bool { return s.Created == 4 })
	h.waitFor("four in flight, two dialing", func() bool {
		return hanging.Load() == 2 && h.countAttempts(c.ID, store.AttemptInFlight) == 4 && h.countAttempts(c.ID, store.AttemptDialing) == 2
	})

	h.stopEngine()
	close(release)
	h.waitSim("the fifth call answered", func(s twiliosim.Stats) bool { return s.Created == 5 && s.AnswerRequests == 5 })
	calls := h.sim.Calls()
	h.waitFor("its webhooks recorded on the dialing attempt", func() bool {
		for _, a := range h.attempts(c.ID) {
			if a.State == store.AttemptDialing && deref(a.ProviderCallID) == calls[4].SID && deref(a.RawStatus) == "in-progress" {
				return true
			}
		}
		return false
	})
	h.down()
	// Two calls end while the service is down: their final callbacks fail.
	h.hangUp(calls[0].SID)
	h.hangUp(calls[1].SID)
	h.waitSim("two calls over", func(s twiliosim.Stats) bool { return s.Final == 2 })
	if c := h.get(c.ID); c.ProcessedRows != 0 || c.State != store.StateRunning {
		t.Fatalf("while down: state %s processed %d, want running 0", c.State, c.ProcessedRows)
	}

	h.startEngine()
	h.waitFor("new calls placed", func() bool { return h.sim.Stats().Created > 5 })
	for _, call := range calls[2:5] {
		h.hangUp(call.SID)
	}
	done := h.waitState(c.ID, store.StateCompleted)
	checkCounters(t, done, 16, 1, 15, 16)
	if st := h.sim.Stats(); st.Created != 15 || st.CreateRequests != 16 || st.Fetches < 5 {
		t.Fatalf("sim: %d calls created of %d requests, %d status queries; want 15 of 16, at least 5 queries",
			st.Created, st.CreateRequests, st.Fetches)
	}
	attempts := h.attempts(c.ID)
	if len(attempts) != 16 {
		t.Fatalf("%d attempts, want 16 (one per contact)", len(attempts))
	}
	for _, a := range attempts {
		calls := h.sim.CreatesTo(a.PhoneNumber)
		switch {
		case a.PhoneNumber == lostTo.Load():
			if deref(a.Outcome) != "unknown" || calls != 0 || !strings.Contains(deref(a.Error), "stopped") {
				t.Fatalf("%s (request under way at the crash): outcome %s, error %q, called %d times; want unknown, never placed again",
					a.PhoneNumber, deref(a.Outcome), deref(a.Error), calls)
			}
		default:
			if deref(a.Outcome) != "answered" || calls != 1 {
				t.Fatalf("%s: outcome %s, called %d times; want answered once", a.PhoneNumber, deref(a.Outcome), calls)
			}
		}
	}
}

// sentTo records the To of every create-call request the engine starts, before
// it goes out: the requests that may have reached the provider.
type sentTo struct {
	sync.Map
	next http.RoundTripper
}

func (s *sentTo) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/Calls.json") {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		form, _ := url.ParseQuery(string(body))
		s.Store(form.Get("To"), true)
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	return s.next.RoundTrip(r)
}

// TestRestartLosesNoAttempt crashes the engine while many dispatches are at
// every stage (claimed, asking the provider, recording): an attempt may end
// unknown only if its request was started; the others are dialled after the
// restart, and nobody is called twice.
func TestRestartLosesNoAttempt(t *testing.T) {
	sent := &sentTo{next: &http.Transport{}}
	h := newHarness(t, twiliosim.Config{Script: quickCalls}, withProviderClient(&http.Client{Transport: sent}))
	h.sim.SetFault(func(r twiliosim.Request) *twiliosim.Fault {
		if r.Op == twiliosim.OpCreate {
			time.Sleep(5 * time.Millisecond) // the provider takes a moment to answer
		}
		return nil
	})
	c := h.campaign(30, store.Settings{MaxConcurrency: 15}, nil)
	h.do(c.ID, store.OpStart)
	h.waitSim("calls under way", func(s twiliosim.Stats) bool { return s.Created >= 6 })
	h.crash()
	h.startEngine()
	done := h.waitState(c.ID, store.StateCompleted)
	unknown := 0
	for _, a := range h.attempts(c.ID) {
		_, asked := sent.Load(a.PhoneNumber)
		calls := h.sim.CreatesTo(a.PhoneNumber)
		switch {
		case a.Attempt != 1:
			t.Fatalf("%s: attempt #%d, want only first attempts", a.PhoneNumber, a.Attempt)
		case deref(a.Outcome) == "unknown" && !asked:
			t.Fatalf("%s ended unknown without a request to the provider (error %q): lost", a.PhoneNumber, deref(a.Error))
		case deref(a.Outcome) == "unknown":
			unknown++
			if calls > 1 {
				t.Fatalf("%s called %d times", a.PhoneNumber, calls)
			}
		case deref(a.Outcome) != "answered" || calls != 1:
			t.Fatalf("%s: outcome %s, called %d times; want answered once", a.PhoneNumber, deref(a.Outcome), calls)
		}
	}
	checkCounters(t, done, 30, int64(unknown), done.ExecutedCount, 30)
}
