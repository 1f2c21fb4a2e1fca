package dialer_test

import (
	"database/sql"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer"
	"github.com/outdial/outdial/dialer/carrier/twiliosim"
	"github.com/outdial/outdial/store"
)

// rawExec runs statements on the harness's database file through a
// connection of its own (a fault of the disk, as SQLite would report it).
func (h *harness) rawExec(stmts ...string) {
	h.t.Helper()
	raw, err := sql.Open("sqlite", "file:"+h.dbPath+"?_pragma=busy_timeout(5000)")
	if err != nil {
		h.t.Fatal(err)
	}
	defer raw.Close()
	for _, s := range stmts {
		if _, err := raw.Exec(s); err != nil {
			h.t.Fatalf("%s: %v", s, err)
		}
	}
}

// diskFullOnPlaced makes every write that records a placement fail as a
// full disk does.
const diskFullOnPlaced = `CREATE TRIGGER disk_full BEFORE UPDATE OF state ON call_attempts
	WHEN NEW.state = 'in_flight' BEGIN SELECT RAISE(FAIL, 'database or disk is full'); END`

// Issue 15 item 6: a write that fails after the provider accepted the call
// leaves the attempt dialing; its deadline reconciles it like a call in
// flight (the provider's answer, here "answered" from the status query),
// instead of leaving it dialing forever.
func TestDialingAttemptReconciledAtDeadline(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: func(twiliosim.CallInfo) twiliosim.Script {
		return twiliosim.Script{Outcome: twiliosim.Human, LoseFinal: true}
	}}, withMaxCallSeconds(60))
	h.rawExec(diskFullOnPlaced)
	c := h.campaign(1, store.Settings{MaxConcurrency: 1}, nil)
	h.clock.Set(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	h.do(c.ID, store.OpStart)
	h.waitSim("the call over", func(s twiliosim.Stats) bool { return s.Created == 1 && s.Final == 1 })
	h.waitFor("the attempt left dialing", func() bool { return h.countAttempts(c.ID, store.AttemptDialing) == 1 })
	h.rawExec("DROP TRIGGER disk_full") // the disk has room again
	h.advance(dialer.RingTimeout+50*time.Second, c.ID)
	h.steady("dialing before the deadline", func() bool { return h.countAttempts(c.ID, store.AttemptDialing) == 1 })
	h.advance(11*time.Second, c.ID)
	done := h.waitState(c.ID, store.StateCompleted)
	checkCounters(t, done, 1, 0, 1, 1)
	a := h.attempts(c.ID)[0]
	if deref(a.Outcome) != "answered" || deref(a.RawStatus) != "completed" {
		t.Fatalf("outcome %s raw %s, want answered completed (from the status query)", deref(a.Outcome), deref(a.RawStatus))
	}
	if n := h.sim.Stats().CreateRequests; n != 1 {
		t.Fatalf("%d create requests, want 1 (never placed again)", n)
	}
}
