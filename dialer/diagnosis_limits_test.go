package dialer_test

// The diagnosis of the engine's own limits (API.md 11): slots, the pacing
// bucket, the provider's 429 back-off, a configuration without a caller id;
// and whether the campaign counts as dialing. Helpers are in
// diagnosis_test.go.

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer"
	"github.com/outdial/outdial/dialer/carrier"
	"github.com/outdial/outdial/dialer/carrier/twiliosim"
	"github.com/outdial/outdial/store"
)

// TestDiagnoseMaxConcurrency: with max_concurrency 1 and a call held in
// flight by the simulator, the other contacts are ready and wait for the
// slot; dialing stays true for 5 s after the placement, then false.
func TestDiagnoseMaxConcurrency(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: func(ci twiliosim.CallInfo) twiliosim.Script {
		if ci.N == 1 {
			return twiliosim.Script{Outcome: twiliosim.Human, TalkDuration: twiliosim.Never}
		}
		return quickCalls(ci)
	}})
	c := h.campaign(3, store.Settings{MaxConcurrency: 1}, nil)
	h.clock.Set(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	h.do(c.ID, store.OpStart)
	h.waitFor("a call in flight", func() bool { return h.countAttempts(c.ID, store.AttemptInFlight) == 1 })
	d := h.diagNow(c.ID)
	want := diagWant{state: store.StateRunning, dialing: true, inFlight: 1, maxConc: 1, ready: 2, reasons: []string{dialer.ReasonMaxConcurrency}}
	want.check(t, d)
	checkReason(t, d.Reasons[0], -1, time.Time{}, "in flight", "max_concurrency")

	h.advance(6*time.Second, c.ID)
	want.dialing = false
	want.check(t, h.diagNow(c.ID))

	h.hangUp(h.sim.Calls()[0].SID)
	h.waitState(c.ID, store.StateCompleted)
}

// TestDiagnoseRateLimit: at 0.1 calls per second the first call goes at
// once and the bucket holds the next one for 10 s: rate_limit until the
// next token, the other contacts ready.
func TestDiagnoseRateLimit(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: quickCalls})
	c := h.campaign(3, store.Settings{RateLimitPerSecond: 0.1}, nil)
	h.clock.Set(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	before := h.clock.Now()
	h.do(c.ID, store.OpStart)
	h.waitFor("the first call over", func() bool { return h.countAttempts(c.ID, store.AttemptDone) == 1 })
	after := h.clock.Now()
	d := h.waitDiag(c.ID, "the slot free", func(d *dialer.Diagnosis) bool { return d.InFlight == 0 })
	want := diagWant{state: store.StateRunning, dialing: true, maxConc: 10, ready: 2, reasons: []string{dialer.ReasonRateLimit}}
	want.check(t, d)
	r := d.Reasons[0]
	// The token came at the claim, the next one 10 s later (the bucket
	// makes up at most 20 ms of a late wake-up).
	checkUntilIn(t, r, before.Add(10*time.Second-20*time.Millisecond), after.Add(10*time.Second))
	checkReason(t, r, -1, *r.Until, "0.1 new calls per second")
	if n := h.sim.Stats().CreateRequests; n != 1 {
		t.Fatalf("%d calls requested, want 1", n)
	}

	h.advance(6*time.Second, c.ID)
	d = h.diagNow(c.ID)
	want.dialing = false
	want.check(t, d)
	checkReason(t, d.Reasons[0], -1, *r.Until)

	h.clock.Set(r.Until.Add(time.Millisecond))
	h.eng.Wake(c.ID)
	h.waitSim("the second call", func(s twiliosim.Stats) bool { return s.CreateRequests == 2 })
}

// provider429 starts a campaign of three contacts, one call at a time,
// whose first request the simulator answers 429 with Retry-After: 30. It
// returns the diagnosis once the refused attempt is back in the queue, after
// checking its provider_backoff reason: until is the end of the back-off,
// 30 s after the 429, the retry_at of the provider_rate_limited entry.
// Storing false in the returned flag lets the simulator take calls again.
func provider429(t *testing.T) (*harness, *store.Campaign, *dialer.Diagnosis, *atomic.Bool) {
	t.Helper()
	h := newHarness(t, twiliosim.Config{Script: quickCalls})
	limited := &atomic.Bool{}
	limited.Store(true)
	h.sim.SetFault(func(r twiliosim.Request) *twiliosim.Fault {
		if r.Op == twiliosim.OpCreate && limited.Load() {
			f := twiliosim.TooManyRequests()
			f.RetryAfter = "30"
			return f
		}
		return nil
	})
	c := h.campaign(3, store.Settings{MaxConcurrency: 1}, nil)
	h.clock.Set(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	before := h.clock.Now()
	h.do(c.ID, store.OpStart)
	h.waitFor("a 429 logged", func() bool { return len(h.logs(c.ID, "provider_rate_limited")) > 0 })
	d := h.waitDiag(c.ID, "the refused request put back", func(d *dialer.Diagnosis) bool { return d.InFlight == 0 })
	after := h.clock.Now()
	if n := h.sim.Stats().RateLimited; n != 1 {
		t.Fatalf("%d 429s, want 1", n)
	}
	r := reasonOf(t, d, dialer.ReasonProviderBack)
	checkUntilIn(t, r, before.Add(30*time.Second), after.Add(30*time.Second))
	checkReason(t, r, -1, *r.Until, "429")
	retryAt, err := time.Parse(time.RFC3339, fmt.Sprint(h.logs(c.ID, "provider_rate_limited")[0].Details["retry_at"]))
	if err != nil {
		t.Fatal(err)
	}
	if !r.Until.Truncate(time.Second).Equal(retryAt) {
		t.Fatalf("provider_backoff until %v, want the logged retry_at %v", r.Until, retryAt)
	}
	return h, c, d, limited
}

// TestDiagnoseProviderBackoff: a 429 holds the campaign until the back-off
// ends; provider_backoff comes first, the two contacts not tried yet are
// ready, with the refused one (it keeps its due time: the back-off holds it),
// and nothing is dialing. After the back-off the campaign completes.
func TestDiagnoseProviderBackoff(t *testing.T) {
	h, c, d, limited := provider429(t)
	if d.State != store.StateRunning || d.Dialing || d.InFlight != 0 || d.MaxConcurrency != 1 || d.ReadyContacts != 3 ||
		d.Reasons[0].Code != dialer.ReasonProviderBack {
		t.Fatalf("diagnosis %s; want running, not dialing, 0 in flight, max_concurrency 1, 3 ready, provider_backoff first", diagString(d))
	}
	limited.Store(false)
	h.clock.Set(d.Reasons[0].Until.Add(time.Millisecond))
	h.eng.Wake(c.ID)
	h.waitState(c.ID, store.StateCompleted)
}

// TestDiagnoseProviderBackoffIsNotARetry: the attempt the provider refused
// with a 429 waits for the provider, not for a retry delay (the contact was
// never called): provider_backoff is the only reason.
//
// (dialer/place.go once put it back due at the end of the back-off, which
// Diagnose counted under waiting_for_retries.)
func TestDiagnoseProviderBackoffIsNotARetry(t *testing.T) {
	_, _, d, _ := provider429(t)
	diagWant{state: store.StateRunning, maxConc: 1, ready: 3, reasons: []string{dialer.ReasonProviderBack}}.check(t, d)
}

// TestDiagnoseNoCallerID: a Twilio configuration without an active number
// holds every call: no_caller_id, the contacts ready, nothing dialing.
// Reactivating the number lets the campaign finish.
func TestDiagnoseNoCallerID(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: quickCalls})
	ctx := context.Background()
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
	c := h.campaign(2, store.Settings{MaxConcurrency: 2}, nil)
	h.do(c.ID, store.OpStart)
	h.waitFor("caller_id_missing", func() bool { return len(h.logs(c.ID, "caller_id_missing")) == 1 })
	h.waitFor("the attempts put back", func() bool { return h.countAttempts(c.ID, store.AttemptDialing) == 0 })
	d := h.waitDiag(c.ID, "the slots free", func(d *dialer.Diagnosis) bool { return d.InFlight == 0 })
	diagWant{state: store.StateRunning, maxConc: 2, ready: 2, reasons: []string{dialer.ReasonNoCallerID}}.check(t, d)
	checkReason(t, d.Reasons[0], -1, time.Time{}, "no active phone number")
	if n := h.sim.Stats().CreateRequests; n != 0 {
		t.Fatalf("%d calls requested without a caller id", n)
	}

	setActive(true)
	h.waitState(c.ID, store.StateCompleted)
}

// TestDiagnoseProviderBackoffAfterCapHold: an attempt the attempt cap held
// once, then refused by the provider with a 429 once the cap allowed it,
// waits for the provider: provider_backoff only.
//
// (The 429 once put the attempt back without the evidence of the check that
// let it through, so it kept its earlier "attempt_cap": "held" and Diagnose
// counted it under attempt_cap.)
func TestDiagnoseProviderBackoffAfterCapHold(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: quickCalls})
	h.setPolicy(func(p *store.Policy) { p.AttemptCap = store.AttemptCap{Enabled: true, MaxAttempts: 1, WindowHours: 24} })
	h.clock.Set(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	a := h.campaignFrom(0, 1, store.Settings{}, nil)
	h.do(a.ID, store.OpStart)
	h.waitState(a.ID, store.StateCompleted)
	b := h.campaignFrom(0, 1, store.Settings{}, nil)
	h.do(b.ID, store.OpStart)
	d := h.waitDiag(b.ID, "attempt_cap", func(d *dialer.Diagnosis) bool { return hasCode(d, dialer.ReasonAttemptCap) && d.InFlight == 0 })
	h.sim.SetFault(func(r twiliosim.Request) *twiliosim.Fault {
		if r.Op == twiliosim.OpCreate {
			f := twiliosim.TooManyRequests()
			f.RetryAfter = "30"
			return f
		}
		return nil
	})
	h.clock.Set(d.Reasons[0].Until.Add(time.Second))
	h.eng.Wake(b.ID)
	h.waitFor("a 429", func() bool { return h.sim.Stats().RateLimited == 1 })
	d = h.waitDiag(b.ID, "the refused request put back", func(d *dialer.Diagnosis) bool { return d.InFlight == 0 })
	diagWant{state: store.StateRunning, maxConc: 10, ready: 1, reasons: []string{dialer.ReasonProviderBack}}.check(t, d)
}

// TestDiagnoseTransientHoldIsNotDialing: while the engine holds a
// campaign's claims after a transient failure (here its carrier could not
// be built for a moment; also a provider that cannot be reached, or a
// guard rail that could not be checked), no call can be placed now, so the
// campaign is not dialing.
//
// API.md 11 has no code of its own for it: provider_backoff, whose message
// names the cause, until the end of the back-off.
func TestDiagnoseTransientHoldIsNotDialing(t *testing.T) {
	var failing atomic.Bool
	failing.Store(true)
	var builds atomic.Int32
	h := newHarness(t, twiliosim.Config{Script: quickCalls}, withNewCarrier(func(provider string, creds map[string]any, opts carrier.Options) (carrier.Carrier, error) {
		builds.Add(1)
		if failing.Load() {
			return nil, tempErr{}
		}
		return carrier.New(provider, creds, opts)
	}))
	c := h.campaign(3, store.Settings{MaxConcurrency: 1}, nil)
	h.clock.Set(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	h.do(c.ID, store.OpStart)
	h.waitFor("a failed carrier build", func() bool { return builds.Load() >= 1 })
	d := h.waitDiag(c.ID, "the attempt put back", func(d *dialer.Diagnosis) bool { return d.InFlight == 0 })
	diagWant{state: store.StateRunning, maxConc: 1, ready: 3, reasons: []string{dialer.ReasonProviderBack}}.check(t, d)
	if d.Reasons[0].Until == nil {
		t.Fatalf("no until: %s", diagString(d))
	}
	checkReason(t, d.Reasons[0], -1, *d.Reasons[0].Until, "telephony configuration could not be loaded")
	failing.Store(false)
	h.advance(time.Second, c.ID)
	h.waitState(c.ID, store.StateCompleted)
}
