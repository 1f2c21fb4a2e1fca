package dialer_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer/carrier/twiliosim"
	"github.com/outdial/outdial/store"
)

// diskFull makes every write of a call's outcome fail as a full disk does:
// the attempt, its contact, its campaign's counters and its logs.
var diskFull = []string{
	`CREATE TRIGGER full_attempts BEFORE UPDATE ON call_attempts BEGIN SELECT RAISE(FAIL, 'database or disk is full'); END`,
	`CREATE TRIGGER full_new_attempts BEFORE INSERT ON call_attempts BEGIN SELECT RAISE(FAIL, 'database or disk is full'); END`,
	`CREATE TRIGGER full_contacts BEFORE UPDATE ON contacts BEGIN SELECT RAISE(FAIL, 'database or disk is full'); END`,
	`CREATE TRIGGER full_campaigns BEFORE UPDATE ON campaigns BEGIN SELECT RAISE(FAIL, 'database or disk is full'); END`,
	`CREATE TRIGGER full_logs BEFORE INSERT ON campaign_logs BEGIN SELECT RAISE(FAIL, 'database or disk is full'); END`,
}

// spaceAgain drops diskFull's triggers: the disk has room again.
var spaceAgain = []string{"DROP TRIGGER full_attempts", "DROP TRIGGER full_new_attempts", "DROP TRIGGER full_contacts",
	"DROP TRIGGER full_campaigns", "DROP TRIGGER full_logs"}

// talkingUntilHungUp is a simulator script whose calls are answered and talk until
// they are hung up, then report 42 s.
func talkingUntilHungUp(twiliosim.CallInfo) twiliosim.Script {
	return twiliosim.Script{Outcome: twiliosim.Human, TalkDuration: twiliosim.Never, CallDuration: 42}
}

// talkingCampaign starts a campaign of n contacts whose calls are all
// answered and talking, and returns it with their attempts.
func talkingCampaign(h *harness, n int) (*store.Campaign, []*store.Attempt) {
	h.t.Helper()
	c := h.campaign(n, store.Settings{MaxConcurrency: n}, nil)
	h.clock.Set(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	h.do(c.ID, store.OpStart)
	var list []*store.Attempt
	h.waitFor("every call answered", func() bool {
		list = h.attempts(c.ID)
		for _, a := range list {
			if a.State != store.AttemptInFlight || a.AnsweredAt == nil {
				return false
			}
		}
		return len(list) == n
	})
	return c, list
}

// hangUpAll ends every call of list at the simulator, whose final status
// callbacks then reach the service.
func hangUpAll(h *harness, list []*store.Attempt) {
	h.t.Helper()
	for _, a := range list {
		hangUp(h.t, h.sim, deref(a.ProviderCallID))
	}
}

// checkStoredOnce checks that campaign id completed with every call
// answered for 42 s, each counted once.
func checkStoredOnce(h *harness, id int64, n int) {
	h.t.Helper()
	done := h.waitState(id, store.StateCompleted)
	checkCounters(h.t, done, int64(n), 0, int64(n), int64(n))
	for _, a := range h.attempts(id) {
		if deref(a.Outcome) != "answered" || a.DurationSeconds == nil || *a.DurationSeconds != 42 || a.EndedAt == nil {
			h.t.Fatalf("attempt %d: outcome %s, duration %v, ended %v; want answered for 42 s", a.ID, deref(a.Outcome), a.DurationSeconds, a.EndedAt)
		}
	}
}

// Issue 20 item 5: with the disk full, the final status webhooks of three
// calls cannot be stored (500) and their attempts hold their slots. Once
// writes work again, the engine stores the statuses it held within
// seconds, with the clock nowhere near the attempts' deadline (61 minutes),
// without asking the provider: the slots are freed, the campaign
// completes, each call is counted once, and a provider's retry of a
// webhook afterwards changes nothing.
// SQLite-specific: a full disk injected with SQLite triggers.
func TestUnstoredStatusesStoredWhenWritesWork(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: talkingUntilHungUp, RecordCallbacks: true}, onSQLite())
	c, list := talkingCampaign(h, 3)

	h.rawExec(diskFull...)
	hangUpAll(h, list)
	h.waitSim("the final callbacks refused", func(st twiliosim.Stats) bool { return st.Final == 3 && st.CallbackErrors >= 3 })
	if n := h.eng.HeldStatuses(); n != 3 {
		t.Fatalf("held statuses = %d, want 3", n)
	}
	d, err := h.eng.Diagnose(context.Background(), h.org, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d.InFlight != 3 || h.countAttempts(c.ID, store.AttemptInFlight) != 3 {
		t.Fatalf("in flight %d (engine), %d (database); want the 3 slots held while nothing can be stored", d.InFlight, h.countAttempts(c.ID, store.AttemptInFlight))
	}

	h.rawExec(spaceAgain...)
	checkStoredOnce(h, c.ID, 3)
	// The last status completes the campaign in its own transaction; the
	// engine forgets it as held once that returns, a moment later.
	h.waitFor("no status held once stored", func() bool { return h.eng.HeldStatuses() == 0 })
	for _, a := range h.attempts(c.ID) {
		if !h.clock.Now().Before(*a.DeadlineAt) {
			t.Fatalf("attempt %d stored at %v, not before its deadline %v", a.ID, h.clock.Now(), a.DeadlineAt)
		}
	}
	if st := h.sim.Stats(); st.Fetches != 0 {
		t.Errorf("%d status queries, want none: the provider's own status was held", st.Fetches)
	}

	// The provider sends a webhook again (Plivo and Telnyx retry a 5xx):
	// applied once already, it changes nothing.
	a := list[0]
	rec, ok := h.sim.Call(deref(a.ProviderCallID))
	if !ok || len(rec.Callbacks) == 0 {
		t.Fatalf("no callbacks recorded for %s", deref(a.ProviderCallID))
	}
	final := rec.Callbacks[len(rec.Callbacks)-1].Params
	u := fmt.Sprintf("%s/api/v1/telephony/twilio/status/%d?t=%s", h.public, a.ID, url.QueryEscape(h.eng.Token(a.ID)))
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(final.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Twilio-Signature", twiliosim.Signature(h.sim.AuthToken(), u, final))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNoContent {
		t.Fatalf("the provider's retry: %d, want 204", res.StatusCode)
	}
	checkStoredOnce(h, c.ID, 3)
}

// Issue 20 item 5, after a restart: what the engine held is gone, and the
// start's reconciliation asks the provider about the calls in flight; with
// the disk still full it holds their final answers, and stores them once
// writes work again.
// SQLite-specific: a full disk injected with SQLite triggers.
func TestUnstoredStatusesAfterRestart(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: talkingUntilHungUp}, onSQLite())
	c, list := talkingCampaign(h, 2)

	h.rawExec(diskFull...)
	hangUpAll(h, list)
	h.waitSim("the final callbacks refused", func(st twiliosim.Stats) bool { return st.Final == 2 && st.CallbackErrors >= 2 })
	h.crash()
	h.startEngine()
	if n := h.eng.HeldStatuses(); n != 2 {
		t.Fatalf("held statuses after the restart = %d, want 2 (the provider's answers at start)", n)
	}
	if st := h.sim.Stats(); st.Fetches != 2 {
		t.Fatalf("%d status queries at start, want 2", st.Fetches)
	}
	if n := h.countAttempts(c.ID, store.AttemptInFlight); n != 2 {
		t.Fatalf("%d attempts in flight, want 2 while nothing can be stored", n)
	}

	h.rawExec(spaceAgain...)
	checkStoredOnce(h, c.ID, 2)
}
