package dialer_test

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer/carrier/twiliosim"
	"github.com/outdial/outdial/store"
)

// runThroughRateLimits waits for the campaigns to complete, moving the clock
// past the provider's back-off (at most 60 s) after every 429 so the test
// does not wait for it in real time; rateLimited is the simulator's count
// of 429s answered.
func (h *harness) runThroughRateLimits(rateLimited func() int, ids ...int64) {
	h.t.Helper()
	seen := 0
	h.waitFor("campaigns completed through the 429s", func() bool {
		dialing := 0
		for _, id := range ids {
			dialing += h.countAttempts(id, store.AttemptDialing)
		}
		// Once the engine took in the new 429s (their attempts are back
		// in the queue), its back-off ends within a minute.
		if n := rateLimited(); n > seen && dialing == 0 {
			seen = n
			h.advance(61*time.Second, ids...)
		}
		for _, id := range ids {
			if h.get(id).State != store.StateCompleted {
				return false
			}
		}
		return true
	})
}

// twilio429s is the Twilio simulator's count of 429s answered.
func (h *harness) twilio429s() int { return h.sim.Stats().RateLimited }

// checkRateLimitedCampaign checks that every contact of campaign id had one
// attempt, answered (a 429 is never the contact's failure), and that the
// 429s were logged.
func (h *harness) checkRateLimitedCampaign(id int64, n int) {
	h.t.Helper()
	c := h.get(id)
	checkCounters(h.t, c, int64(n), 0, int64(n), int64(n))
	for _, a := range h.attempts(id) {
		if a.Attempt != 1 || deref(a.Outcome) != "answered" {
			h.t.Fatalf("attempt %d of %s: #%d outcome %s; want the one attempt answered", a.ID, a.PhoneNumber, a.Attempt, deref(a.Outcome))
		}
	}
	if len(h.attempts(id)) != n {
		h.t.Fatalf("%d attempts, want %d (a 429 requeues the attempt)", len(h.attempts(id)), n)
	}
	logs := h.logs(id, "provider_rate_limited")
	if len(logs) == 0 || logs[0].Level != store.LogWarning {
		h.t.Fatalf("provider_rate_limited log %v, want a warning", logs)
	}
}

func TestProviderTooManyRequestsNext(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: quickCalls})
	h.sim.TooManyRequestsNext(5)
	c := h.campaign(10, store.Settings{MaxConcurrency: 3}, nil)
	h.clock.Set(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	h.do(c.ID, store.OpStart)
	h.runThroughRateLimits(h.twilio429s, c.ID)
	if st := h.sim.Stats(); st.RateLimited != 5 || st.CreateRequests != 15 {
		t.Fatalf("429s %d of %d create requests, want 5 of 15", st.RateLimited, st.CreateRequests)
	}
	h.checkCalledOnce(10)
	h.checkRateLimitedCampaign(c.ID, 10)
}

// TestProviderRateLimitSharedByCampaigns: a 429 is the account's limit, so
// it holds back every campaign of the telephony configuration, and honours
// Retry-After.
func TestProviderRateLimitSharedByCampaigns(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: quickCalls})
	var limited atomic.Bool
	limited.Store(true)
	h.sim.SetFault(func(r twiliosim.Request) *twiliosim.Fault {
		if r.Op == twiliosim.OpCreate && limited.Load() {
			f := twiliosim.TooManyRequests()
			f.RetryAfter = "30"
			return f
		}
		return nil
	})
	a := h.campaignFrom(0, 4, store.Settings{MaxConcurrency: 2}, nil)
	b := h.campaignFrom(4, 4, store.Settings{MaxConcurrency: 2}, nil)
	h.clock.Set(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	h.do(a.ID, store.OpStart)
	h.waitFor("a 429 logged", func() bool { return len(h.logs(a.ID, "provider_rate_limited")) > 0 })
	limited.Store(false)
	h.waitFor("a's requests answered", func() bool { return h.countAttempts(a.ID, store.AttemptDialing) == 0 })
	requested := h.sim.Stats().CreateRequests

	// Campaign b starts during a's back-off: it waits too.
	h.do(b.ID, store.OpStart)
	h.advance(20*time.Second, a.ID, b.ID) // within Retry-After: 30
	h.steady("no call during the provider's back-off", func() bool { return h.sim.Stats().CreateRequests == requested })
	h.advance(11*time.Second, a.ID, b.ID)
	h.waitState(a.ID, store.StateCompleted)
	h.waitState(b.ID, store.StateCompleted)
	h.checkCalledOnce(8)
	h.checkRateLimitedCampaign(a.ID, 4)
	checkCounters(t, h.get(b.ID), 4, 0, 4, 4)
}

// TestProviderAuthFailure: a 401 pauses the campaign with
// provider_auth_failed; the calls in flight are recorded, nothing is lost,
// and resuming once the credentials work again calls everyone else once.
func TestProviderAuthFailure(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: talking(20 * time.Millisecond)})
	c := h.campaign(20, store.Settings{MaxConcurrency: 3}, nil)
	h.do(c.ID, store.OpStart)
	h.waitSim("some calls placed", func(s twiliosim.Stats) bool { return s.Created >= 4 })
	h.sim.SetUnauthorized(true)
	h.waitState(c.ID, store.StatePaused)
	logs := h.logs(c.ID, "provider_auth_failed")
	if len(logs) != 1 || logs[0].Level != store.LogWarning || logs[0].Details["http_status"] != float64(401) {
		t.Fatalf("provider_auth_failed log %+v, want one warning with http_status 401", logs)
	}
	h.waitQuiet(c.ID)
	h.checkRecorded(c.ID)
	placed := h.sim.Stats().Created
	if q := h.countAttempts(c.ID, store.AttemptQueued); q != 20-placed {
		t.Fatalf("%d attempts queued after the 401, want %d (nothing lost)", q, 20-placed)
	}
	for _, a := range h.attempts(c.ID) {
		if deref(a.Outcome) == "failed" {
			t.Fatalf("attempt %d failed: a 401 is not the contact's failure", a.ID)
		}
	}

	h.sim.SetUnauthorized(false)
	h.do(c.ID, store.OpResume)
	done := h.waitState(c.ID, store.StateCompleted)
	checkCounters(t, done, 20, 0, 20, 20)
	h.checkCalledOnce(20)
}

// TestProviderRejectsCalls: a call the provider refuses (a 4xx other than
// 401/403/429) fails the attempt without placing it, and the failures are
// logged as one aggregated call_initiation_failed entry per minute.
func TestProviderRejectsCalls(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: quickCalls})
	h.sim.SetFault(func(r twiliosim.Request) *twiliosim.Fault {
		if r.Op == twiliosim.OpCreate {
			return &twiliosim.Fault{Status: 400, Code: 21211, Message: "Invalid 'To' Phone Number"}
		}
		return nil
	})
	rc := store.RetryConfig{Enabled: true, MaxRetries: 2, RetryDelaySeconds: 30, RetryOnBusy: true, RetryOnNoAnswer: true, RetryOnVoicemail: true}
	c := h.campaign(5, store.Settings{MaxConcurrency: 2, RetryConfig: rc}, nil)
	h.clock.Set(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	h.do(c.ID, store.OpStart)
	done := h.waitState(c.ID, store.StateCompleted)
	checkCounters(t, done, 5, 5, 0, 5)
	for _, a := range h.attempts(c.ID) {
		if deref(a.Outcome) != "failed" || !strings.Contains(deref(a.Error), "21211") {
			t.Fatalf("attempt %d: outcome %s error %q, want failed with the provider's code", a.ID, deref(a.Outcome), deref(a.Error))
		}
	}
	logs := h.logs(c.ID, "call_initiation_failed")
	if len(logs) != 1 || logs[0].Level != store.LogError || logs[0].Details["count"] != float64(5) {
		t.Fatalf("call_initiation_failed entries %+v, want one error entry with count 5", logs)
	}
}

// TestProviderLate401AfterResume: a 401 to a request sent before the
// campaign was resumed (another request's 401 paused it, the credentials
// were fixed, the user resumed it) does not pause it again.
func TestProviderLate401AfterResume(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: quickCalls})
	var creates atomic.Int32
	second, release := make(chan struct{}), make(chan struct{})
	free := sync.OnceFunc(func() { close(release) })
	t.Cleanup(free) // before the simulator closes, even when the test fails
	h.sim.SetFault(func(r twiliosim.Request) *twiliosim.Fault {
		if r.Op != twiliosim.OpCreate {
			return nil
		}
		switch creates.Add(1) {
		case 1:
			<-second // both requests are under way
			return &twiliosim.Fault{Status: 401, Code: 20003, Message: "Authenticate"}
		case 2:
			close(second)
			<-release // answered after the resume
			return &twiliosim.Fault{Status: 401, Code: 20003, Message: "Authenticate"}
		}
		return nil
	})
	c := h.campaign(6, store.Settings{MaxConcurrency: 2}, nil)
	h.do(c.ID, store.OpStart)
	h.waitState(c.ID, store.StatePaused)
	h.do(c.ID, store.OpResume)
	free()
	done := h.waitState(c.ID, store.StateCompleted)
	checkCounters(t, done, 6, 0, 6, 6)
	h.checkCalledOnce(6)
	if logs := h.logs(c.ID, "provider_auth_failed"); len(logs) != 1 {
		t.Fatalf("provider_auth_failed logs %d, want 1 (the late 401 does not pause again)", len(logs))
	}
}
