package dialer_test

import (
	"testing"
	"time"

	"github.com/outdial/outdial/dialer"
	"github.com/outdial/outdial/dialer/carrier/twiliosim"
	"github.com/outdial/outdial/store"
)

// requeueRefused makes every write that puts a claimed attempt back in the
// queue fail as a full disk does; the attempt stays dialing.
const requeueRefused = `CREATE TRIGGER requeue_refused BEFORE UPDATE OF state ON call_attempts
	WHEN OLD.state = 'dialing' AND NEW.state = 'queued' BEGIN SELECT RAISE(FAIL, 'database or disk is full'); END`

// activeInDB is the number of campaign id's attempts dialing or in flight
// as stored: what the engine's slot count must equal once nothing moves.
func (h *harness) activeInDB(id int64) int {
	return h.countAttempts(id, store.AttemptDialing) + h.countAttempts(id, store.AttemptInFlight)
}

// slotsMatch reports whether the engine's count of campaign id's slots in
// use (its diagnosis and its live-stream figure) is n, as stored.
func (h *harness) slotsMatch(id int64, n int) bool {
	inFlight, ok := h.eng.InFlight(id)
	return ok && inFlight == n && h.diagNow(id).InFlight == n && h.activeInDB(id) == n
}

// Issue 21 item 3: a requeue the store refuses (the attempt was not sent:
// here the provider answered 429) leaves the attempt dialing, so its slot
// stays taken: the campaign places nothing more than max_concurrency
// allows, and the engine's count stays what the database says. Once the
// store takes writes again the attempt goes back to the queue and its
// contact is called, instead of ending unknown at its deadline.
// SQLite-specific: a full disk injected with a SQLite trigger.
func TestRequeueRefusedKeepsSlot(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: quickCalls}, onSQLite())
	h.rawExec(requeueRefused)
	h.sim.TooManyRequestsNext(1)
	c := h.campaign(3, store.Settings{MaxConcurrency: 1}, nil)
	h.clock.Set(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	h.do(c.ID, store.OpStart)
	// The log comes after the requeue was tried.
	h.waitFor("provider_rate_limited", func() bool { return len(h.logs(c.ID, "provider_rate_limited")) == 1 })
	h.steady("one slot taken, as stored", func() bool { return h.slotsMatch(c.ID, 1) })
	h.advance(61*time.Second, c.ID) // past the provider's back-off
	h.steady("nothing else placed while the attempt holds the slot", func() bool {
		return h.slotsMatch(c.ID, 1) && h.sim.Stats().CreateRequests == 1
	})
	h.rawExec("DROP TRIGGER requeue_refused") // the disk has room again
	done := h.waitState(c.ID, store.StateCompleted)
	checkCounters(t, done, 3, 0, 3, 3)
	for _, a := range h.attempts(c.ID) {
		if a.Attempt != 1 || deref(a.Outcome) != "answered" {
			t.Fatalf("attempt %d of %s: #%d outcome %s; want the one attempt answered", a.ID, a.PhoneNumber, a.Attempt, deref(a.Outcome))
		}
	}
	h.checkCalledOnce(3)
	if st := h.sim.Stats(); st.PeakInFlight > 1 {
		t.Fatalf("peak in flight %d, want at most max_concurrency 1", st.PeakInFlight)
	}
	// The slot is freed right after the store's write.
	h.waitFor("no slot in use after the campaign", func() bool { return h.slotsMatch(c.ID, 0) })
}

// A refused requeue of a campaign paused meanwhile: the attempt is not
// ended unknown at its deadline (it was never sent), it keeps its slot
// while the store still refuses, and it goes back to the queue once the
// store takes writes again; resumed, the campaign calls its contact.
// SQLite-specific: a full disk injected with a SQLite trigger.
func TestRequeueRefusedPausedPastDeadline(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: quickCalls}, withMaxCallSeconds(60), onSQLite())
	h.rawExec(requeueRefused)
	h.sim.TooManyRequestsNext(1)
	c := h.campaign(2, store.Settings{MaxConcurrency: 1}, nil)
	h.clock.Set(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	h.do(c.ID, store.OpStart)
	h.waitFor("provider_rate_limited", func() bool { return len(h.logs(c.ID, "provider_rate_limited")) == 1 })
	h.do(c.ID, store.OpPause)
	h.advance(dialer.RingTimeout+61*time.Second, c.ID) // past the claim's deadline
	h.steady("dialing, its slot taken, not ended", func() bool {
		return h.slotsMatch(c.ID, 1) && h.get(c.ID).ProcessedRows == 0
	})
	h.rawExec("DROP TRIGGER requeue_refused")
	h.advance(time.Second, c.ID)
	h.waitFor("the attempt back in the queue", func() bool { return h.countAttempts(c.ID, store.AttemptQueued) == 2 })
	h.waitFor("its slot freed", func() bool { return h.slotsMatch(c.ID, 0) })
	h.do(c.ID, store.OpResume)
	done := h.waitState(c.ID, store.StateCompleted)
	checkCounters(t, done, 2, 0, 2, 2)
	for _, a := range h.attempts(c.ID) {
		if deref(a.Outcome) != "answered" {
			t.Fatalf("attempt %d of %s: outcome %s, want answered (never ended unknown)", a.ID, a.PhoneNumber, deref(a.Outcome))
		}
	}
	h.checkCalledOnce(2)
}
