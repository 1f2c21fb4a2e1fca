package dialer_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer"
	"github.com/outdial/outdial/dialer/carrier"
	"github.com/outdial/outdial/dialer/carrier/twiliosim"
	"github.com/outdial/outdial/store"
)

// rawExec runs statements on the harness's database file through a
// connection of its own (a fault of the disk, as SQLite would report it).
// The harness must be onSQLite.
func (h *harness) rawExec(stmts ...string) {
	h.t.Helper()
	if !h.opts.sqlite {
		h.t.Fatal("rawExec speaks SQLite: make the harness with onSQLite()")
	}
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
// SQLite-specific: a full disk injected with a SQLite trigger.
func TestDialingAttemptReconciledAtDeadline(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: func(twiliosim.CallInfo) twiliosim.Script {
		return twiliosim.Script{Outcome: twiliosim.Human, LoseFinal: true}
	}}, withMaxCallSeconds(60), onSQLite())
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

// hangUp ends simulated Twilio call sid as the callee would.
func hangUp(t *testing.T, sim *twiliosim.Server, sid string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("%s/2010-04-01/Accounts/%s/Calls/%s.json", sim.URL(), sim.AccountSID(), sid),
		strings.NewReader(url.Values{"Status": {"completed"}}.Encode()))
	req.SetBasicAuth(sim.AccountSID(), sim.AuthToken())
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("hang up: %v", err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("hang up: status %d", res.StatusCode)
	}
}

// Issue 15 item 4: the only caller id deactivated mid-run is the
// configuration's problem, not the contacts': the campaign stays running,
// places nothing, logs caller_id_missing once, changes no contact's
// outcome, and dials the rest by itself once the number is active again.
func TestCallerIDLostMidRunWaits(t *testing.T) {
	first := number(0) // the first contact's
	h := newHarness(t, twiliosim.Config{Script: func(ci twiliosim.CallInfo) twiliosim.Script {
		if ci.To == first {
			return twiliosim.Script{Outcome: twiliosim.Human, TalkDuration: time.Hour}
		}
		return twiliosim.DefaultScript(ci)
	}})
	ctx := context.Background()
	c := h.campaign(5, store.Settings{MaxConcurrency: 1}, nil)
	h.do(c.ID, store.OpStart)
	h.waitFor("the first call in flight", func() bool { return h.countAttempts(c.ID, store.AttemptInFlight) == 1 })
	numbers, err := h.db.ListPhoneNumbers(ctx, h.org, h.cfgID)
	if err != nil || len(numbers) != 1 {
		t.Fatalf("numbers %v, %v", numbers, err)
	}
	setActive := func(on bool) {
		if _, err := h.db.UpdatePhoneNumber(ctx, h.org, h.cfgID, numbers[0].ID, func(n *store.PhoneNumber) { n.IsActive = on }); err != nil {
			t.Fatal(err)
		}
		h.eng.CallerIDsChanged(h.cfgID)
	}
	setActive(false)
	hangUp(t, h.sim, h.sim.Calls()[0].SID)
	h.waitFor("caller_id_missing", func() bool { return len(h.logs(c.ID, "caller_id_missing")) == 1 })
	h.steady("waiting, nothing placed, no contact failed", func() bool {
		got, err := h.db.CampaignByID(ctx, c.ID)
		return err == nil && got.State == store.StateRunning && got.ProcessedRows == 1 && got.FailedRows == 0 &&
			h.sim.Stats().CreateRequests == 1
	})
	setActive(true)
	done := h.waitState(c.ID, store.StateCompleted)
	checkCounters(t, done, 5, 0, 5, 5)
	if n := len(h.logs(c.ID, "caller_id_missing")); n != 1 {
		t.Fatalf("caller_id_missing logged %d times, want 1", n)
	}
}

// tempErr is a temporary carrier construction failure.
type tempErr struct{}

func (tempErr) Error() string   { return "the configuration could not be read for a moment" }
func (tempErr) Temporary() bool { return true }

// Issue 15 item 5: a transient error while getting the carrier holds the
// campaign for a back-off (1 s, 2 s, 4 s, ...) and retries; it does not
// fail the campaign, and no contact's outcome changes.
func TestTransientCarrierErrorBacksOff(t *testing.T) {
	var builds atomic.Int32
	h := newHarness(t, twiliosim.Config{}, withNewCarrier(func(provider string, creds map[string]any, opts carrier.Options) (carrier.Carrier, error) {
		if builds.Add(1) <= 3 {
			return nil, tempErr{}
		}
		return carrier.New(provider, creds, opts)
	}))
	c := h.campaign(3, store.Settings{MaxConcurrency: 1}, nil)
	h.clock.Set(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	h.do(c.ID, store.OpStart)
	for i, backoff := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
		h.waitFor("a failed carrier build", func() bool { return builds.Load() == int32(i+1) })
		h.steady("held for the back-off", func() bool {
			got, err := h.db.CampaignByID(context.Background(), c.ID)
			return builds.Load() == int32(i+1) && err == nil && got.State == store.StateRunning && got.ProcessedRows == 0
		})
		h.advance(backoff, c.ID)
	}
	done := h.waitState(c.ID, store.StateCompleted)
	checkCounters(t, done, 3, 0, 3, 3)
	logs := h.logs(c.ID, "carrier_unavailable")
	if len(logs) != 1 || logs[0].Details["count"] != float64(3) {
		t.Fatalf("carrier_unavailable logs %+v, want one entry counting 3", logs)
	}
}

// Issue 15 item 2: a 5xx to the place request may hide a call that was
// placed. The attempt stays open: the call's status webhooks (they carry
// the attempt's token) are applied, the call is counted once the provider
// confirms it, it does not feed the circuit breaker, and it is never
// placed again.
func TestAmbiguousPlaceErrorFollowed(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: quickCalls})
	var faults atomic.Int32
	h.sim.SetFault(func(r twiliosim.Request) *twiliosim.Fault {
		if r.Op == twiliosim.OpCreate && faults.Add(1) <= 2 {
			return &twiliosim.Fault{Status: 500, Code: 20500, Message: "Internal Server Error", Create: true}
		}
		return nil
	})
	cb := store.CircuitBreaker{Enabled: true, FailureThreshold: 0.5, WindowSeconds: 60, MinCallsInWindow: 2}
	c := h.campaign(3, store.Settings{MaxConcurrency: 3, CircuitBreaker: cb}, nil)
	h.do(c.ID, store.OpStart)
	done := h.waitState(c.ID, store.StateCompleted)
	checkCounters(t, done, 3, 0, 3, 3)
	for _, a := range h.attempts(c.ID) {
		if deref(a.Outcome) != "answered" {
			t.Fatalf("attempt %d: outcome %s, want answered (the call the 500 hid)", a.ID, deref(a.Outcome))
		}
	}
	h.checkCalledOnce(3)
	if n := len(h.logs(c.ID, "call_request_unconfirmed")); n != 1 {
		t.Fatalf("call_request_unconfirmed entries %d, want 1 (aggregated)", n)
	}
}

// A 5xx whose call never existed (the provider failed before placing it)
// is followed until its deadline and ends unknown, never failed and never
// placed again.
func TestAmbiguousPlaceErrorUnknownAtDeadline(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: quickCalls}, withMaxCallSeconds(60))
	h.sim.SetFault(func(r twiliosim.Request) *twiliosim.Fault {
		if r.Op == twiliosim.OpCreate {
			return &twiliosim.Fault{Status: 503, Code: 20503, Message: "Service Unavailable"}
		}
		return nil
	})
	c := h.campaign(1, store.Settings{MaxConcurrency: 1}, nil)
	h.clock.Set(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	h.do(c.ID, store.OpStart)
	h.waitFor("the attempt followed", func() bool { return h.countAttempts(c.ID, store.AttemptInFlight) == 1 })
	h.advance(dialer.RingTimeout+50*time.Second, c.ID)
	h.steady("open before the deadline", func() bool { return h.countAttempts(c.ID, store.AttemptInFlight) == 1 })
	h.advance(11*time.Second, c.ID)
	done := h.waitState(c.ID, store.StateCompleted)
	checkCounters(t, done, 1, 1, 0, 1)
	a := h.attempts(c.ID)[0]
	if deref(a.Outcome) != "unknown" {
		t.Fatalf("outcome %s, want unknown", deref(a.Outcome))
	}
	if n := h.sim.Stats().CreateRequests; n != 1 {
		t.Fatalf("%d create requests, want 1 (never placed again)", n)
	}
}

// Issue 16 item 8: the engine's per-campaign caches are dropped once a
// campaign's runner ends.
func TestCampaignCachesEvicted(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: quickCalls})
	for i := range 3 {
		c := h.campaignFrom(10*i, 2, store.Settings{}, nil)
		h.do(c.ID, store.OpStart)
		h.waitState(c.ID, store.StateCompleted)
	}
	h.waitFor("the caches emptied", func() bool { return h.eng.CachedCampaigns() == 0 })
}
