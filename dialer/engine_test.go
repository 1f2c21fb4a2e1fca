package dialer_test

import (
	"testing"
	"time"

	"github.com/outdial/outdial/dialer/carrier/twiliosim"
	"github.com/outdial/outdial/store"
)

func TestCampaignCompletesWithinConcurrency(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: func(twiliosim.CallInfo) twiliosim.Script {
		return twiliosim.Script{Outcome: twiliosim.Human, RingDelay: 5 * time.Millisecond, TalkDuration: 20 * time.Millisecond}
	}})
	c := h.campaign(60, store.Settings{MaxConcurrency: 4}, nil)
	h.do(c.ID, store.OpStart)
	done := h.waitState(c.ID, store.StateCompleted)
	if done.ProcessedRows != 60 || done.FailedRows != 0 || done.ExecutedCount != 60 || done.TotalQueuedCount != 60 {
		t.Fatalf("counters = processed %d failed %d executed %d queued %d; want 60 0 60 60",
			done.ProcessedRows, done.FailedRows, done.ExecutedCount, done.TotalQueuedCount)
	}
	if peak := h.sim.PeakInFlight(); peak > 4 || peak < 2 {
		t.Fatalf("peak in flight = %d, want 2..4 (max_concurrency 4)", peak)
	}
	for to, n := range h.sim.CreatesByTo() {
		if n != 1 {
			t.Fatalf("%s called %d times, want 1", to, n)
		}
	}
}

func TestRetriesBusyUpToMaxRetries(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: func(ci twiliosim.CallInfo) twiliosim.Script {
		return twiliosim.Script{Outcome: twiliosim.Busy}
	}})
	rc := store.RetryConfig{Enabled: true, MaxRetries: 2, RetryDelaySeconds: 30, RetryOnBusy: true}
	c := h.campaign(3, store.Settings{RetryConfig: rc}, nil)
	t0 := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	h.clock.Set(t0)
	h.do(c.ID, store.OpStart)
	for i := 1; i <= 2; i++ {
		if err := h.sim.Wait(t.Context(), func(s twiliosim.Stats) bool { return s.Created >= 3*i }); err != nil {
			t.Fatal(err)
		}
		// The retries are written, due 30 s later on the injected clock:
		// nothing is dialled until the clock moves past them.
		h.waitQueued(c.ID, 3)
		if got := h.sim.Stats().Created; got != 3*i {
			t.Fatalf("calls placed before the retry delay: %d, want %d", got, 3*i)
		}
		h.clock.Set(h.clock.Now().Add(31 * time.Second))
		h.eng.Wake(c.ID)
	}
	done := h.waitState(c.ID, store.StateCompleted)
	if done.ExecutedCount != 9 || done.TotalQueuedCount != 9 || done.FailedRows != 3 {
		t.Fatalf("executed %d queued %d failed %d; want 9 9 3", done.ExecutedCount, done.TotalQueuedCount, done.FailedRows)
	}
	for to, n := range h.sim.CreatesByTo() {
		if n != 3 {
			t.Fatalf("%s called %d times, want 3 (1 + 2 retries)", to, n)
		}
	}
}

// waitQueued waits until the campaign has n attempts queued (retries
// written after the final statuses).
func (h *harness) waitQueued(id int64, n int) {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		c, err := h.db.CampaignByID(h.t.Context(), id)
		if err != nil {
			h.t.Fatal(err)
		}
		q, err := h.db.QueuedByTimezone(h.t.Context(), id, c.Timezones)
		if err != nil {
			h.t.Fatal(err)
		}
		list, _ := h.db.ListAttempts(h.t.Context(), id, store.AttemptFilter{State: ptr(store.AttemptQueued), Limit: 1000})
		if len(q) > 0 && len(list) >= n {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	h.t.Fatalf("campaign %d: %d attempts never queued", id, n)
}

func ptr[T any](v T) *T { return &v }
