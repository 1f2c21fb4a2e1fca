package dialer_test

// The evidence of every decision (API.md 12.5) with every guard rail on: a
// placed call, a suppressed contact, an attempt held by the cap.

import (
	"slices"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer/carrier/twiliosim"
	"github.com/outdial/outdial/store"
)

// everyRuleOn turns on the calling hours (08:00–21:00) and a cap of one
// call a day; it returns the policy's version.
func (h *harness) everyRuleOn() int64 {
	h.t.Helper()
	h.setPolicy(func(p *store.Policy) {
		p.AttemptCap = store.AttemptCap{Enabled: true, MaxAttempts: 1, WindowHours: 24}
	})
	return h.enableHours()
}

func TestEvidenceWithEveryRuleOn(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: quickCalls})
	version := h.everyRuleOn()
	// Monday 2026-06-01 16:00 UTC: 12:00 EDT.
	h.clock.Set(time.Date(2026, 6, 1, 16, 0, 0, 0, time.UTC))
	const callee, optedOut = "+12125550100", "+12125550101"
	h.suppress(store.NewSuppressions{Reason: "dnc", Source: store.SourceAPI}, optedOut)
	entry := h.suppressionOf(optedOut)

	first := h.campaignOf([]string{callee, optedOut}, store.Settings{MaxConcurrency: 1}, nil)
	h.do(first.ID, store.OpStart)
	checkCounters(t, h.waitState(first.ID, store.StateCompleted), 2, 0, 1, 2)
	second := h.campaignOf([]string{callee}, store.Settings{}, nil)
	h.do(second.ID, store.OpStart)
	h.waitFor("the second campaign's call held by the cap", func() bool { return h.attempts(second.ID)[0].Compliance != nil })

	ny := mustLoadLocation(t, "America/New_York")
	common := func(a *store.Attempt) {
		t.Helper()
		ev := evidenceOf(t, a)
		local, err := time.Parse(time.RFC3339, ev.LocalTime)
		if err != nil || !local.Equal(ev.CheckedAt.Truncate(time.Second)) || ev.LocalTime != ev.CheckedAt.In(ny).Format(time.RFC3339) ||
			ev.LocalTime[19:] != "-04:00" {
			t.Fatalf("attempt %d local_time %q, want checked_at %v in New York (EDT)", a.ID, ev.LocalTime, ev.CheckedAt)
		}
		if !slices.Equal(ev.Timezones, []string{"America/New_York"}) || ev.TimezoneSource != "number" || ev.PolicyVersion != version {
			t.Fatalf("attempt %d evidence %s, want New York from the number, policy %d", a.ID, a.Compliance, version)
		}
	}
	var placed *store.Attempt
	for _, a := range h.attempts(first.ID) {
		common(a)
		ev := evidenceOf(t, a)
		switch a.PhoneNumber {
		case callee:
			placed = a
			if ev.Suppression != "clear" || ev.SuppressionID != nil || ev.CallingHours != "open" || ev.AttemptCap != "clear" ||
				ev.AttemptsInWindow == nil || *ev.AttemptsInWindow != 0 || ev.MaxAttempts != 1 || ev.WindowHours != 24 || a.ProviderCallID == nil {
				t.Fatalf("placed attempt evidence %s, want clear, hours open, cap clear with 0 calls in 24 h", a.Compliance)
			}
		case optedOut:
			checkSuppressedEvidence(t, a, entry)
		}
	}
	capped := h.attempts(second.ID)[0]
	common(capped)
	ev := evidenceOf(t, capped)
	if ev.Suppression != "clear" || ev.CallingHours != "open" || ev.AttemptCap != "held" || ev.AttemptsInWindow == nil ||
		*ev.AttemptsInWindow != 1 || ev.MaxAttempts != 1 || ev.WindowHours != 24 || capped.State != store.AttemptQueued ||
		!capped.DueAt.Equal(evidenceOf(t, placed).CheckedAt.Truncate(time.Millisecond).Add(24*time.Hour)) {
		t.Fatalf("capped attempt (due %v) evidence %s, want hours open, cap held with 1 call in 24 h", capped.DueAt, capped.Compliance)
	}
	if ev.CheckedAt.Before(evidenceOf(t, placed).CheckedAt) {
		t.Fatalf("capped attempt checked at %v, before the call it is capped by (%v)", ev.CheckedAt, evidenceOf(t, placed).CheckedAt)
	}
}

// TestEvidenceOfRulesNotReached: a rule an earlier rule made moot (the
// calling hours and the cap of a suppressed attempt, the cap of one held by
// the hours) is recorded as it stood ("open"/"held", "not_checked" for the
// cap, which counts by reserving), never as "disabled" while the policy has
// it on.
func TestEvidenceOfRulesNotReached(t *testing.T) {
	p := newBuildPause()
	h := newHarness(t, twiliosim.Config{Script: quickCalls}, p.option())
	h.everyRuleOn()
	h.clock.Set(time.Date(2026, 6, 1, 16, 0, 0, 0, time.UTC)) // 12:00 EDT
	h.suppress(store.NewSuppressions{Source: store.SourceAPI}, "+12125550101")
	c := h.campaignOf([]string{"+12125550100", "+12125550101"}, store.Settings{MaxConcurrency: 1}, nil)
	p.armed.Store(true)
	h.do(c.ID, store.OpStart)
	p.wait(t)
	h.clock.Set(time.Date(2026, 6, 2, 1, 0, 5, 0, time.UTC)) // 21:00:05 EDT: the first attempt is held by the hours
	p.open()
	h.waitFor("the first attempt held", func() bool { return h.attempts(c.ID)[0].Compliance != nil })
	check := func(a *store.Attempt) {
		t.Helper()
		if ev := evidenceOf(t, a); ev.CallingHours == "disabled" || ev.AttemptCap == "disabled" {
			t.Errorf("%s (%s) evidence %s says a rule was disabled; both are on", a.PhoneNumber, a.State, a.Compliance)
		}
	}
	check(h.attempts(c.ID)[0]) // held by the hours

	h.clock.Set(time.Date(2026, 6, 2, 12, 0, 0, 0, time.UTC)) // 08:00 EDT
	h.eng.Wake(c.ID)
	h.waitState(c.ID, store.StateCompleted)
	check(h.attempts(c.ID)[1]) // suppressed
}

func mustLoadLocation(t *testing.T, name string) *time.Location {
	t.Helper()
	l, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return l
}
