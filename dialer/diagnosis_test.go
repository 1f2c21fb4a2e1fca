package dialer_test

// The diagnosis (API.md 11): every code is set up for real (the engine
// dials the Twilio simulator) and read back with Engine.Diagnose, with its
// count, until and message. This file has the helpers and the campaign
// states (not_running, all_final); diagnosis_limits_test.go the engine's
// own limits (max_concurrency, rate_limit, provider_backoff, no_caller_id);
// diagnosis_more_test.go the queue's holds (calling window, calling hours,
// retries, attempt cap).

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer"
	"github.com/outdial/outdial/dialer/carrier"
	"github.com/outdial/outdial/dialer/carrier/twiliosim"
	"github.com/outdial/outdial/store"
)

// diagNow returns the engine's diagnosis of campaign id.
func (h *harness) diagNow(id int64) *dialer.Diagnosis {
	h.t.Helper()
	d, err := h.eng.Diagnose(context.Background(), h.org, id)
	if err != nil {
		h.t.Fatalf("diagnose campaign %d: %v", id, err)
	}
	return d
}

// waitDiag polls the diagnosis of campaign id until cond holds and returns
// it, failing the test after waitTimeout with the last one.
func (h *harness) waitDiag(id int64, what string, cond func(*dialer.Diagnosis) bool) *dialer.Diagnosis {
	h.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		d := h.diagNow(id)
		if cond(d) {
			return d
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("timed out waiting for a diagnosis with %s; last: %s (%s)", what, diagString(d), h.simStats())
		}
		time.Sleep(3 * time.Millisecond)
	}
}

// hasCode reports whether d lists a reason of code.
func hasCode(d *dialer.Diagnosis, code string) bool {
	return slices.ContainsFunc(d.Reasons, func(r dialer.Reason) bool { return r.Code == code })
}

// diagString describes d for a failure message.
func diagString(d *dialer.Diagnosis) string {
	var b strings.Builder
	fmt.Fprintf(&b, "{campaign %d state %s dialing %t in_flight %d max_concurrency %d ready %d reasons [",
		d.CampaignID, d.State, d.Dialing, d.InFlight, d.MaxConcurrency, d.ReadyContacts)
	for i, r := range d.Reasons {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s %q", r.Code, r.Message)
		if r.Count != nil {
			fmt.Fprintf(&b, " count %d", *r.Count)
		}
		if r.Until != nil {
			fmt.Fprintf(&b, " until %s", r.Until.Format(time.RFC3339Nano))
		}
	}
	b.WriteString("]}")
	return b.String()
}

// diagWant is what a diagnosis must say; reasons are the codes in order.
type diagWant struct {
	state                    string
	dialing                  bool
	inFlight, maxConc, ready int
	reasons                  []string
}

// check compares d with w.
func (w diagWant) check(t *testing.T, d *dialer.Diagnosis) {
	t.Helper()
	var codes []string
	for _, r := range d.Reasons {
		codes = append(codes, r.Code)
	}
	if d.State != w.state || d.Dialing != w.dialing || d.InFlight != w.inFlight || d.MaxConcurrency != w.maxConc ||
		d.ReadyContacts != w.ready || !slices.Equal(codes, w.reasons) {
		t.Fatalf("diagnosis %s;\nwant state %s dialing %t in_flight %d max_concurrency %d ready %d reasons %v",
			diagString(d), w.state, w.dialing, w.inFlight, w.maxConc, w.ready, w.reasons)
	}
}

// reasonOf returns d's reason of code, failing the test without one.
func reasonOf(t *testing.T, d *dialer.Diagnosis, code string) dialer.Reason {
	t.Helper()
	for _, r := range d.Reasons {
		if r.Code == code {
			return r
		}
	}
	t.Fatalf("no %s reason in %s", code, diagString(d))
	return dialer.Reason{}
}

// checkReason checks r's message (it contains each of parts), count (-1:
// absent) and until (zero: absent).
func checkReason(t *testing.T, r dialer.Reason, count int, until time.Time, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(r.Message, p) {
			t.Errorf("%s message %q does not contain %q", r.Code, r.Message, p)
		}
	}
	switch {
	case count < 0 && r.Count != nil:
		t.Errorf("%s count = %d, want none", r.Code, *r.Count)
	case count >= 0 && (r.Count == nil || *r.Count != count):
		t.Errorf("%s count = %v, want %d", r.Code, derefInt(r.Count), count)
	}
	switch {
	case until.IsZero() && r.Until != nil:
		t.Errorf("%s until = %v, want none", r.Code, r.Until)
	case !until.IsZero() && (r.Until == nil || !r.Until.Equal(until)):
		t.Errorf("%s until = %v, want %v", r.Code, r.Until, until.UTC())
	}
}

// checkUntilIn checks that r has an until in [lo, hi].
func checkUntilIn(t *testing.T, r dialer.Reason, lo, hi time.Time) {
	t.Helper()
	if r.Until == nil || r.Until.Before(lo) || r.Until.After(hi) {
		t.Fatalf("%s until = %v, want within [%v, %v]", r.Code, r.Until, lo.UTC(), hi.UTC())
	}
}

func derefInt(p *int) string {
	if p == nil {
		return "none"
	}
	return fmt.Sprint(*p)
}

// TestDiagnoseDraftCancelledNotFound: a draft says not_running, start it,
// and nothing else (no queue is read); a cancelled one says it was
// cancelled; an unknown campaign and another organization's are not found.
func TestDiagnoseDraftCancelledNotFound(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: quickCalls})
	c := h.campaign(3, store.Settings{MaxConcurrency: 7}, nil)
	d := h.diagNow(c.ID)
	if d.CampaignID != c.ID {
		t.Fatalf("campaign_id = %d, want %d", d.CampaignID, c.ID)
	}
	diagWant{state: store.StateDraft, maxConc: 7, reasons: []string{dialer.ReasonNotRunning}}.check(t, d)
	checkReason(t, d.Reasons[0], -1, time.Time{}, "draft", "start it")

	h.do(c.ID, store.OpCancel)
	d = h.diagNow(c.ID)
	diagWant{state: store.StateCancelled, maxConc: 7, reasons: []string{dialer.ReasonNotRunning}}.check(t, d)
	checkReason(t, d.Reasons[0], -1, time.Time{}, "cancelled")

	ctx := context.Background()
	other, _, err := h.db.CreateAPIKey(ctx, "other", "test", store.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		org, id int64
	}{{other.OrganizationID, c.ID}, {h.org, c.ID + 1000}} {
		if _, err := h.eng.Diagnose(ctx, tc.org, tc.id); store.ErrorCode(err) != store.ENOTFOUND {
			t.Errorf("Diagnose(org %d, campaign %d) error %v, want ENOTFOUND", tc.org, tc.id, err)
		}
	}
}

// TestDiagnoseCompleted: a completed campaign is not running (it completed)
// and every contact is final; neither dialing nor anything in flight.
func TestDiagnoseCompleted(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: quickCalls})
	c := h.campaign(3, store.Settings{MaxConcurrency: 2}, nil)
	h.do(c.ID, store.OpStart)
	h.waitState(c.ID, store.StateCompleted)
	// The last slot is released just after the status completing it is
	// stored: true within a second (API.md 11).
	d := h.waitDiag(c.ID, "the last slot released", func(d *dialer.Diagnosis) bool { return d.InFlight == 0 })
	diagWant{state: store.StateCompleted, maxConc: 2, reasons: []string{dialer.ReasonNotRunning, dialer.ReasonAllFinal}}.check(t, d)
	checkReason(t, d.Reasons[0], -1, time.Time{}, "completed")
	checkReason(t, d.Reasons[1], -1, time.Time{}, "final")
}

// TestDiagnoseAllFinalWhileRunning: the moment between the last contact
// becoming final and the campaign completing (held open here by a trigger
// that ignores the completion) reads all_final without not_running; the
// call placed a moment ago still counts as dialing for 5 s. Once it
// completes, not_running comes first.
// SQLite-specific: holds the completion with a SQLite trigger.
func TestDiagnoseAllFinalWhileRunning(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: quickCalls}, onSQLite())
	h.rawExec(`CREATE TRIGGER hold_completion BEFORE UPDATE OF state ON campaigns
		WHEN NEW.state = 'completed' BEGIN SELECT RAISE(IGNORE); END`)
	c := h.campaign(2, store.Settings{MaxConcurrency: 2}, nil)
	h.clock.Set(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	h.do(c.ID, store.OpStart)
	d := h.waitDiag(c.ID, "every contact final, nothing in flight", func(d *dialer.Diagnosis) bool {
		return hasCode(d, dialer.ReasonAllFinal) && d.InFlight == 0
	})
	diagWant{state: store.StateRunning, dialing: true, maxConc: 2, reasons: []string{dialer.ReasonAllFinal}}.check(t, d)
	checkReason(t, d.Reasons[0], -1, time.Time{}, "every contact has a final outcome")

	h.advance(6 * time.Second)
	diagWant{state: store.StateRunning, maxConc: 2, reasons: []string{dialer.ReasonAllFinal}}.check(t, h.diagNow(c.ID))

	h.rawExec(`DROP TRIGGER hold_completion`)
	h.eng.Wake(c.ID)
	h.waitState(c.ID, store.StateCompleted)
	d = h.waitDiag(c.ID, "no slot in use", func(d *dialer.Diagnosis) bool { return d.InFlight == 0 })
	diagWant{state: store.StateCompleted, maxConc: 2, reasons: []string{dialer.ReasonNotRunning, dialer.ReasonAllFinal}}.check(t, d)
}

// TestDiagnosePausedByUser: paused by a user while a call is in flight: the
// message says who paused it and the call still counts in flight until it
// ends.
func TestDiagnosePausedByUser(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: func(ci twiliosim.CallInfo) twiliosim.Script {
		return twiliosim.Script{Outcome: twiliosim.Human, TalkDuration: twiliosim.Never}
	}})
	c := h.campaign(3, store.Settings{MaxConcurrency: 1}, nil)
	h.do(c.ID, store.OpStart)
	h.waitFor("a call in flight", func() bool { return h.countAttempts(c.ID, store.AttemptInFlight) == 1 })
	h.do(c.ID, store.OpPause)
	d := h.diagNow(c.ID)
	diagWant{state: store.StatePaused, inFlight: 1, maxConc: 1, reasons: []string{dialer.ReasonNotRunning}}.check(t, d)
	checkReason(t, d.Reasons[0], -1, time.Time{}, "paused by a user", "resume")

	h.hangUp(h.sim.Calls()[0].SID)
	d = h.waitDiag(c.ID, "the call over", func(d *dialer.Diagnosis) bool { return d.InFlight == 0 })
	diagWant{state: store.StatePaused, maxConc: 1, reasons: []string{dialer.ReasonNotRunning}}.check(t, d)
}

// TestDiagnosePausedByBreaker: the circuit breaker's pause names the
// breaker; resumed and paused again by a user, the newest pause wins.
func TestDiagnosePausedByBreaker(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: failing})
	cb := store.CircuitBreaker{Enabled: true, FailureThreshold: 0.5, WindowSeconds: 60, MinCallsInWindow: 5}
	c := h.campaign(20, store.Settings{MaxConcurrency: 1, CircuitBreaker: cb}, nil)
	h.do(c.ID, store.OpStart)
	h.waitTrip(c.ID, 1)
	d := h.waitDiag(c.ID, "the last slot released", func(d *dialer.Diagnosis) bool { return d.InFlight == 0 })
	diagWant{state: store.StatePaused, maxConc: 1, reasons: []string{dialer.ReasonNotRunning}}.check(t, d)
	checkReason(t, d.Reasons[0], -1, time.Time{}, "paused by the circuit breaker")

	// Resumed and paused by a user before the breaker trips again (every
	// call fails; a fresh window needs five of them).
	h.sim.SetFault(func(r twiliosim.Request) *twiliosim.Fault {
		if r.Op == twiliosim.OpCreate {
			return twiliosim.TooManyRequests() // holds every call back
		}
		return nil
	})
	h.do(c.ID, store.OpResume)
	h.do(c.ID, store.OpPause)
	checkReason(t, reasonOf(t, h.diagNow(c.ID), dialer.ReasonNotRunning), -1, time.Time{}, "paused by a user")
}

// TestDiagnosePausedByProviderAuth: a 401 from the provider pauses the
// campaign; the message says the credentials were refused.
func TestDiagnosePausedByProviderAuth(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: quickCalls})
	h.sim.SetUnauthorized(true)
	c := h.campaign(3, store.Settings{MaxConcurrency: 1}, nil)
	h.do(c.ID, store.OpStart)
	h.waitState(c.ID, store.StatePaused)
	d := h.waitDiag(c.ID, "the refused request put back", func(d *dialer.Diagnosis) bool { return d.InFlight == 0 })
	diagWant{state: store.StatePaused, maxConc: 1, reasons: []string{dialer.ReasonNotRunning}}.check(t, d)
	checkReason(t, d.Reasons[0], -1, time.Time{}, "provider refused", "credentials", "401")
}

// TestDiagnoseFailed: a campaign that failed says why, from its
// campaign_failed entry.
func TestDiagnoseFailed(t *testing.T) {
	h := newHarness(t, twiliosim.Config{}, withNewCarrier(func(provider string, creds map[string]any, opts carrier.Options) (carrier.Carrier, error) {
		if provider == carrier.Plivo {
			return nil, fmt.Errorf("plivo: credentials cannot be read")
		}
		return carrier.New(provider, creds, opts)
	}))
	cfg, err := h.db.CreateTelephonyConfig(context.Background(), h.org, store.TelephonyConfig{Name: "plivo", Provider: "plivo",
		Credentials: store.Credentials{"auth_id": "MA123", "auth_token": "secret-token", "application_id": "", "machine_detection": false}})
	if err != nil {
		t.Fatal(err)
	}
	h.cfgID = cfg.ID
	c := h.campaign(2, store.Settings{MaxConcurrency: 3}, nil)
	h.do(c.ID, store.OpStart)
	h.waitState(c.ID, store.StateFailed)
	// Dispatches under way when it failed put their attempts back.
	d := h.waitDiag(c.ID, "the attempts put back", func(d *dialer.Diagnosis) bool { return d.InFlight == 0 })
	diagWant{state: store.StateFailed, maxConc: 3, reasons: []string{dialer.ReasonNotRunning}}.check(t, d)
	checkReason(t, d.Reasons[0], -1, time.Time{}, "the campaign failed", "cannot place calls", "credentials cannot be read")
}
