package dialer_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer"
	"github.com/outdial/outdial/dialer/carrier/twiliosim"
	"github.com/outdial/outdial/store"
)

// TestStatusDuplicatedAndOutOfOrder: every callback sent twice, or the
// non-final ones after the final one: each final status is applied once,
// a late non-final one changes nothing, and the counters are exact.
func TestStatusDuplicatedAndOutOfOrder(t *testing.T) {
	outcomes := []twiliosim.Outcome{twiliosim.Human, twiliosim.Busy, twiliosim.NoAnswer, twiliosim.Machine}
	want := []struct{ outcome, raw string }{{"answered", "completed"}, {"busy", "busy"}, {"no_answer", "no-answer"}, {"voicemail", "completed"}}
	script := func(i int) twiliosim.Script {
		return twiliosim.Script{Outcome: outcomes[i%4], RingDelay: 2 * time.Millisecond, TalkDuration: 2 * time.Millisecond,
			Duplicate: i%2 == 0, OutOfOrder: (i/2)%2 == 0}
	}
	h := newHarness(t, twiliosim.Config{RecordCallbacks: true, Script: func(ci twiliosim.CallInfo) twiliosim.Script {
		for i := 0; i < 16; i++ {
			if ci.To == number(i) {
				return script(i)
			}
		}
		return twiliosim.Script{}
	}}, withMachineDetection())
	// Retries on, so a final status applied twice would also queue a
	// second retry.
	rc := store.RetryConfig{Enabled: true, MaxRetries: 0, RetryDelaySeconds: 30, RetryOnBusy: true, RetryOnNoAnswer: true, RetryOnVoicemail: true}
	c := h.campaign(16, store.Settings{MaxConcurrency: 4, RetryConfig: rc}, nil)
	numbers := make([]string, 16)
	for i := range numbers {
		numbers[i] = number(i)
	}
	h.do(c.ID, store.OpStart)
	h.waitSim("every callback sent", func(s twiliosim.Stats) bool { return s.Final >= 16 })
	done := h.waitState(c.ID, store.StateCompleted)
	checkCounters(t, done, 16, 12, 16, 16)
	if st := h.sim.Stats(); st.CallbackErrors != 0 {
		t.Fatalf("%d callbacks refused", st.CallbackErrors)
	}
	for _, call := range h.sim.Calls() {
		// The answer webhook got the workflow's greeting for the contact.
		if call.Script.Outcome == twiliosim.Human || call.Script.Outcome == twiliosim.Machine {
			want := fmt.Sprintf("<Say>Hello P%d</Say><Hangup/>", slices.Index(numbers, call.To))
			if !strings.Contains(call.TwiML, want) {
				t.Fatalf("%s: TwiML %q, want %s", call.To, call.TwiML, want)
			}
		}
		finals := 0
		for _, cb := range call.Callbacks {
			if s := cb.Params.Get("CallStatus"); s != "initiated" && s != "ringing" && s != "in-progress" {
				finals++
			}
		}
		if wantFinals := map[bool]int{true: 2, false: 1}[call.Script.Duplicate]; finals != wantFinals {
			t.Fatalf("%s: %d final callbacks sent, want %d", call.To, finals, wantFinals)
		}
	}
	attempts := h.attempts(c.ID)
	if len(attempts) != 16 {
		t.Fatalf("%d attempts, want 16", len(attempts))
	}
	for _, a := range attempts {
		i := int(a.ContactRow - 2)
		if a.State != store.AttemptDone || deref(a.Outcome) != want[i%4].outcome || deref(a.RawStatus) != want[i%4].raw {
			t.Fatalf("%s (%+v): %s outcome %s raw %s; want done %s raw %s", a.PhoneNumber, script(i), a.State,
				deref(a.Outcome), deref(a.RawStatus), want[i%4].outcome, want[i%4].raw)
		}
	}
	if n := len(h.logs(c.ID, "campaign_completed")); n != 1 {
		t.Fatalf("%d campaign_completed entries, want 1", n)
	}
}

// placedOneAtATime waits until the simulator created n calls and every one
// of them is over (with LoseFinal, without its final callback), and checks
// that the campaign has the n-th attempt still in flight.
func (h *harness) placedOneAtATime(id int64, n int) {
	h.t.Helper()
	h.waitSim("the call over", func(s twiliosim.Stats) bool { return s.Created == n && s.Final == n })
	h.waitFor("the attempt in flight", func() bool { return h.countAttempts(id, store.AttemptInFlight) == 1 })
}

// TestStatusLostFinalReconciled: a call whose final callback never comes
// holds its slot until its deadline (RingTimeout + MaxCallSeconds), then is
// reconciled through the provider's status query.
func TestStatusLostFinalReconciled(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: func(twiliosim.CallInfo) twiliosim.Script {
		return twiliosim.Script{Outcome: twiliosim.Human, LoseFinal: true}
	}}, withMaxCallSeconds(60))
	c := h.campaign(3, store.Settings{MaxConcurrency: 1}, nil)
	h.clock.Set(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	h.do(c.ID, store.OpStart)
	for n := 1; n <= 3; n++ {
		h.placedOneAtATime(c.ID, n)
		h.advance(dialer.RingTimeout+50*time.Second, c.ID)
		h.steady("the slot held before the deadline", func() bool {
			return h.sim.Stats().CreateRequests == n && h.countAttempts(c.ID, store.AttemptInFlight) == 1
		})
		h.advance(11*time.Second, c.ID)
	}
	done := h.waitState(c.ID, store.StateCompleted)
	checkCounters(t, done, 3, 0, 3, 3)
	if f := h.sim.Stats().Fetches; f != 3 {
		t.Fatalf("%d status queries, want 3", f)
	}
	for _, a := range h.attempts(c.ID) {
		if deref(a.Outcome) != "answered" || deref(a.RawStatus) != "completed" {
			t.Fatalf("attempt %d: outcome %s raw %s, want answered completed (from the query)", a.ID, deref(a.Outcome), deref(a.RawStatus))
		}
	}
}

// TestStatusLostFinalProviderCannotAnswer: when the status query fails too,
// the attempt ends unknown at its deadline and is not retried.
func TestStatusLostFinalProviderCannotAnswer(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: func(twiliosim.CallInfo) twiliosim.Script {
		return twiliosim.Script{Outcome: twiliosim.NoAnswer, LoseFinal: true}
	}}, withMaxCallSeconds(60))
	h.sim.SetFault(func(r twiliosim.Request) *twiliosim.Fault {
		if r.Op == twiliosim.OpFetch {
			return &twiliosim.Fault{Status: 500, Code: 20500, Message: "Internal Server Error"}
		}
		return nil
	})
	rc := store.RetryConfig{Enabled: true, MaxRetries: 3, RetryDelaySeconds: 30, RetryOnNoAnswer: true}
	c := h.campaign(2, store.Settings{MaxConcurrency: 2, RetryConfig: rc}, nil)
	h.clock.Set(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	h.do(c.ID, store.OpStart)
	h.waitSim("both calls over", func(s twiliosim.Stats) bool { return s.Created == 2 && s.Final == 2 })
	h.waitFor("both attempts in flight", func() bool { return h.countAttempts(c.ID, store.AttemptInFlight) == 2 })
	h.advance(dialer.RingTimeout+61*time.Second, c.ID)
	done := h.waitState(c.ID, store.StateCompleted)
	checkCounters(t, done, 2, 2, 2, 2)
	for _, ct := range h.contacts(c.ID) {
		if deref(ct.Outcome) != "unknown" || ct.Attempts != 1 {
			t.Fatalf("contact %s: outcome %s after %d attempts, want unknown after 1", ct.PhoneNumber, deref(ct.Outcome), ct.Attempts)
		}
	}
	for _, a := range h.attempts(c.ID) {
		if !strings.Contains(deref(a.Error), "deadline") {
			t.Fatalf("attempt %d error %q, want the deadline named", a.ID, deref(a.Error))
		}
	}
	if st := h.sim.Stats(); st.CreateRequests != 2 {
		t.Fatalf("%d calls requested, want 2 (unknown is never placed again)", st.CreateRequests)
	}
}

// TestStatusLostFinalWhileNotRunning: the deadline also reconciles the calls
// of a paused or cancelled campaign, so they are recorded (and a cancelled
// campaign's last calls are not left in flight forever).
func TestStatusLostFinalWhileNotRunning(t *testing.T) {
	for _, op := range []string{store.OpPause, store.OpCancel} {
		t.Run(op, func(t *testing.T) {
			h := newHarness(t, twiliosim.Config{Script: func(twiliosim.CallInfo) twiliosim.Script {
				return twiliosim.Script{Outcome: twiliosim.Busy, RingDelay: 10 * time.Millisecond, LoseFinal: true}
			}}, withMaxCallSeconds(60))
			c := h.campaign(4, store.Settings{MaxConcurrency: 2}, nil)
			h.clock.Set(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
			h.do(c.ID, store.OpStart)
			h.waitFor("two calls in flight", func() bool { return h.countAttempts(c.ID, store.AttemptInFlight) == 2 })
			h.do(c.ID, op)
			state := h.get(c.ID).State
			h.waitSim("both calls over", func(s twiliosim.Stats) bool { return s.Final == 2 })
			h.advance(dialer.RingTimeout+61*time.Second, c.ID)
			h.waitFor("the calls reconciled", func() bool { return h.countAttempts(c.ID, store.AttemptDone) == 2 })
			got := h.get(c.ID)
			if got.State != state {
				t.Fatalf("state %s after reconciliation, want %s", got.State, state)
			}
			checkCounters(t, got, 2, 2, 2, 4)
			for _, a := range h.attempts(c.ID)[:2] {
				if deref(a.Outcome) != "busy" {
					t.Fatalf("attempt %d outcome %s, want busy (from the query)", a.ID, deref(a.Outcome))
				}
			}
			if n := h.sim.Stats().CreateRequests; n != 2 {
				t.Fatalf("%d calls requested, want 2", n)
			}
		})
	}
}
