package dialer_test

import (
	"testing"
	"time"

	"github.com/outdial/outdial/dialer/carrier/twiliosim"
	"github.com/outdial/outdial/store"
)

func failing(twiliosim.CallInfo) twiliosim.Script {
	return twiliosim.Script{Outcome: twiliosim.Failed}
}

// waitTrip waits for the campaign to be paused by its n-th breaker trip
// and for every call of it to be over, and returns the trip's log entry.
func (h *harness) waitTrip(id int64, n int) store.LogEntry {
	h.t.Helper()
	h.waitFor("circuit_breaker_tripped", func() bool { return len(h.logs(id, "circuit_breaker_tripped")) >= n })
	h.waitState(id, store.StatePaused)
	h.waitFor("calls in flight recorded", func() bool {
		return h.countAttempts(id, store.AttemptDialing)+h.countAttempts(id, store.AttemptInFlight) == 0
	})
	trips := h.logs(id, "circuit_breaker_tripped")
	if len(trips) != n {
		h.t.Fatalf("%d circuit_breaker_tripped entries, want %d", len(trips), n)
	}
	return trips[n-1]
}

func checkTrip(t *testing.T, e store.LogEntry, rate float64, failures, calls int, threshold float64, window int) {
	t.Helper()
	d := e.Details
	if e.Level != store.LogWarning || d["failure_rate"] != rate || d["failures"] != float64(failures) || d["calls"] != float64(calls) ||
		d["threshold"] != threshold || d["window_seconds"] != float64(window) {
		t.Fatalf("circuit_breaker_tripped %s %v; want failure_rate %v failures %d calls %d threshold %v window_seconds %d",
			e.Level, d, rate, failures, calls, threshold, window)
	}
}

// TestBreakerTripsAndResumeStartsFreshWindow: with one call at a time, the
// fifth failure in a row pauses the campaign before a sixth call starts; after
// resume the window is empty again, so it takes five more failures.
func TestBreakerTripsAndResumeStartsFreshWindow(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: failing})
	cb := store.CircuitBreaker{Enabled: true, FailureThreshold: 0.5, WindowSeconds: 60, MinCallsInWindow: 5}
	c := h.campaign(20, store.Settings{MaxConcurrency: 1, CircuitBreaker: cb}, nil)
	h.do(c.ID, store.OpStart)
	checkTrip(t, h.waitTrip(c.ID, 1), 1, 5, 5, 0.5, 60)
	if got := h.sim.Stats().CreateRequests; got != 5 {
		t.Fatalf("%d calls requested before the breaker tripped, want 5", got)
	}
	checkCounters(t, h.get(c.ID), 5, 5, 5, 20)

	h.do(c.ID, store.OpResume)
	checkTrip(t, h.waitTrip(c.ID, 2), 1, 5, 5, 0.5, 60)
	if got := h.sim.Stats().CreateRequests; got != 10 {
		t.Fatalf("%d calls requested by the second trip, want 10 (resume starts a fresh window)", got)
	}
	checkCounters(t, h.get(c.ID), 10, 10, 10, 20)
}

// TestBreakerIgnoresSuccesses: busy, no_answer, voicemail and answered are
// successes; a campaign of them never trips even a 10 % threshold.
func TestBreakerIgnoresSuccesses(t *testing.T) {
	outcomes := []twiliosim.Outcome{twiliosim.Busy, twiliosim.NoAnswer, twiliosim.Machine, twiliosim.Human}
	h := newHarness(t, twiliosim.Config{Script: func(ci twiliosim.CallInfo) twiliosim.Script {
		return twiliosim.Script{Outcome: outcomes[ci.N%len(outcomes)]}
	}}, withMachineDetection())
	cb := store.CircuitBreaker{Enabled: true, FailureThreshold: 0.1, WindowSeconds: 60, MinCallsInWindow: 2}
	c := h.campaign(16, store.Settings{MaxConcurrency: 4, CircuitBreaker: cb}, nil)
	h.do(c.ID, store.OpStart)
	done := h.waitState(c.ID, store.StateCompleted)
	if trips := h.logs(c.ID, "circuit_breaker_tripped"); len(trips) != 0 {
		t.Fatalf("breaker tripped on successes: %v", trips)
	}
	checkCounters(t, done, 16, 12, 16, 16)
}

// TestBreakerWindowSlides: failures older than window_seconds leave the
// window. Two failures, then (11 s later, window 10 s) a success and two
// failures: only the last three count.
func TestBreakerWindowSlides(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: func(ci twiliosim.CallInfo) twiliosim.Script {
		if ci.N == 3 {
			return twiliosim.Script{Outcome: twiliosim.Human, TalkDuration: twiliosim.Never}
		}
		return twiliosim.Script{Outcome: twiliosim.Failed}
	}})
	cb := store.CircuitBreaker{Enabled: true, FailureThreshold: 0.6, WindowSeconds: 10, MinCallsInWindow: 3}
	c := h.campaign(8, store.Settings{MaxConcurrency: 1, CircuitBreaker: cb}, nil)
	h.clock.Set(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	h.do(c.ID, store.OpStart)
	h.waitSim("third call talking", func(s twiliosim.Stats) bool { return s.Created == 3 })
	h.advance(11*time.Second, c.ID)
	h.hangUp(h.sim.Calls()[2].SID)
	checkTrip(t, h.waitTrip(c.ID, 1), 2.0/3.0, 2, 3, 0.6, 10)
	if got := h.sim.Stats().CreateRequests; got != 5 {
		t.Fatalf("%d calls requested before the breaker tripped, want 5", got)
	}
}
