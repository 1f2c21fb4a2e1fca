package dialer_test

// The suppression list through the engine (API.md 12.1, 12.4, 12.5): checked
// right before each provider request, under the organization's suppression
// gate, failing closed; a suppressed contact's outcome, counters, log and
// evidence.

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite" // the second connection of the fail-closed test

	"github.com/outdial/outdial/dialer/carrier/twiliosim"
	"github.com/outdial/outdial/store"
)

// TestSuppressedBetweenClaimAndRequest: the list is checked right before
// the provider request, not at the claim: a number added while its attempt
// is claimed (dialing) is not called.
func TestSuppressedBetweenClaimAndRequest(t *testing.T) {
	p := newBuildPause()
	h := newHarness(t, twiliosim.Config{Script: quickCalls}, p.option())
	c := h.campaign(2, store.Settings{MaxConcurrency: 1}, nil)
	p.armed.Store(true)
	h.do(c.ID, store.OpStart)
	p.wait(t)
	var claimed *store.Attempt
	for _, a := range h.attempts(c.ID) {
		if a.State == store.AttemptDialing {
			claimed = a
		}
	}
	if claimed == nil || claimed.PhoneNumber != number(0) {
		t.Fatalf("attempts %s: want %s claimed while its dispatch builds the carrier", describe(h.attempts(c.ID)), number(0))
	}
	// The dispatch holds no gate yet: SuppressionsAdded answers at once.
	h.suppress(store.NewSuppressions{Reason: "asked", Source: store.SourceAPI}, number(0))
	p.open()

	done := h.waitState(c.ID, store.StateCompleted)
	checkCounters(t, done, 2, 0, 1, 2)
	if got := h.sim.CreatesByTo(); len(got) != 1 || got[number(1)] != 1 {
		t.Fatalf("calls %v, want %s alone (%s was suppressed after its claim)", got, number(1), number(0))
	}
	for _, a := range h.attempts(c.ID) {
		if a.PhoneNumber == number(0) {
			checkSuppressedEvidence(t, a, h.suppressionOf(number(0)))
		} else if ev := evidenceOf(t, a); ev.Suppression != "clear" || ev.SuppressionID != nil {
			t.Fatalf("%s evidence %s, want clear", a.PhoneNumber, a.Compliance)
		}
	}
}

// TestSuppressionsAddedWaitsForRequests: SuppressionsAdded returns only
// once the requests that checked the list before the addition have been
// answered, and a request checked after it returned sees the addition.
func TestSuppressionsAddedWaitsForRequests(t *testing.T) {
	hc := &holdCreates{next: &http.Transport{}, release: make(chan struct{})}
	h := newHarness(t, twiliosim.Config{Script: quickCalls}, withProviderClient(&http.Client{Transport: hc}))
	t.Cleanup(hc.open)
	c := h.campaign(3, store.Settings{MaxConcurrency: 2}, nil)
	hc.on.Store(true)
	h.do(c.ID, store.OpStart)
	h.waitFor("two create requests held after their checks", func() bool { return hc.waiting.Load() == 2 })

	// number(0) is being requested; number(2) waits for a slot.
	if _, err := h.db.AddSuppressions(context.Background(), h.org, store.NewSuppressions{Source: store.SourceAPI},
		[]string{number(0), number(2)}); err != nil {
		t.Fatal(err)
	}
	added := make(chan struct{})
	go func() { h.eng.SuppressionsAdded(context.Background(), h.org); close(added) }()
	h.steady("SuppressionsAdded waiting for the requests under way", func() bool {
		select {
		case <-added:
			return false
		default:
			return true
		}
	})
	hc.open()
	select {
	case <-added:
	case <-time.After(waitTimeout):
		t.Fatal("SuppressionsAdded did not return once the requests were answered")
	}
	if got := h.sim.Stats().CreateRequests; got != 2 {
		t.Fatalf("SuppressionsAdded returned with %d create requests answered, want 2", got)
	}

	done := h.waitState(c.ID, store.StateCompleted)
	checkCounters(t, done, 3, 0, 2, 3)
	if got := h.sim.CreatesByTo(); len(got) != 2 || got[number(0)] != 1 || got[number(1)] != 1 {
		t.Fatalf("calls %v, want %s and %s once (checked before the addition), %s never", got, number(0), number(1), number(2))
	}
	for _, a := range h.attempts(c.ID) {
		switch a.PhoneNumber {
		case number(2):
			checkSuppressedEvidence(t, a, h.suppressionOf(number(2)))
		default:
			if ev := evidenceOf(t, a); ev.Suppression != "clear" || deref(a.Outcome) != "answered" {
				t.Fatalf("%s: outcome %s evidence %s, want answered and clear (checked before the addition)", a.PhoneNumber, deref(a.Outcome), a.Compliance)
			}
		}
	}
}

// TestSuppressionCheckFailsClosed: while the list cannot be read (its
// table renamed away through another connection to the database file) no
// call is placed; once it can, the same attempt is placed.
// SQLite-specific: renames the table through a second connection to the SQLite file.
func TestSuppressionCheckFailsClosed(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: quickCalls}, onSQLite())
	side, err := sql.Open("sqlite", "file:"+h.dbPath+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { side.Close() })
	exec := func(q string) {
		t.Helper()
		if _, err := side.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	h.clock.Set(time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC))
	c := h.campaign(1, store.Settings{}, nil)
	exec("ALTER TABLE suppressions RENAME TO suppressions_away")
	h.do(c.ID, store.OpStart)
	h.waitFor("compliance_check_failed", func() bool { return len(h.logs(c.ID, "compliance_check_failed")) > 0 })
	h.waitFor("the attempt back in the queue", func() bool { return h.countAttempts(c.ID, store.AttemptQueued) == 1 })
	h.eng.Wake(c.ID)
	h.steady("no call while the list cannot be read", func() bool { return h.sim.Stats().CreateRequests == 0 })
	entry := h.logs(c.ID, "compliance_check_failed")[0]
	if entry.Level != store.LogWarning || !strings.Contains(fmt.Sprint(entry.Details["error"]), "suppression") {
		t.Fatalf("compliance_check_failed %+v, want a warning naming the suppression check", entry)
	}

	exec("ALTER TABLE suppressions_away RENAME TO suppressions")
	h.advance(31*time.Second, c.ID) // past the longest back-off
	done := h.waitState(c.ID, store.StateCompleted)
	checkCounters(t, done, 1, 0, 1, 1)
	list := h.attempts(c.ID)
	if len(list) != 1 || list[0].Attempt != 1 || deref(list[0].Outcome) != "answered" || h.sim.CreatesTo(number(0)) != 1 {
		t.Fatalf("attempts %s, calls %d: want the first attempt placed once", describe(list), h.sim.CreatesTo(number(0)))
	}
	if ev := evidenceOf(t, list[0]); ev.Suppression != "clear" {
		t.Fatalf("evidence %s, want clear", list[0].Compliance)
	}
}

// TestSuppressedContacts: a suppressed contact ends suppressed at once:
// processed, not failed nor executed, never retried, ignored by the
// breaker, one contacts_suppressed entry with a count. An expired entry
// no longer suppresses.
func TestSuppressedContacts(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: quickCalls})
	past, future := time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	h.suppress(store.NewSuppressions{Reason: "dnc", Source: store.SourceCSV}, number(1), number(2), number(4))
	h.suppress(store.NewSuppressions{Source: store.SourceAPI, ExpiresAt: &future}, number(5))
	h.suppress(store.NewSuppressions{Source: store.SourceAPI, ExpiresAt: &past}, number(3))
	// Were suppressed contacts failures, 4 of 6 would trip this breaker.
	c := h.campaign(6, store.Settings{
		RetryConfig:    store.RetryConfig{Enabled: true, MaxRetries: 3, RetryDelaySeconds: 1, RetryOnBusy: true, RetryOnNoAnswer: true, RetryOnVoicemail: true},
		CircuitBreaker: store.CircuitBreaker{Enabled: true, FailureThreshold: 0.5, WindowSeconds: 600, MinCallsInWindow: 2},
	}, nil)
	h.do(c.ID, store.OpStart)
	done := h.waitState(c.ID, store.StateCompleted)
	checkCounters(t, done, 6, 0, 2, 6)
	if got := h.sim.CreatesByTo(); len(got) != 2 || got[number(0)] != 1 || got[number(3)] != 1 {
		t.Fatalf("calls %v, want %s and %s (expired entry) once", got, number(0), number(3))
	}
	suppressed := map[string]bool{number(1): true, number(2): true, number(4): true, number(5): true}
	list := h.attempts(c.ID)
	if len(list) != 6 {
		t.Fatalf("%d attempts, want 6: a suppressed contact is never retried", len(list))
	}
	for _, a := range list {
		if suppressed[a.PhoneNumber] {
			checkSuppressedEvidence(t, a, h.suppressionOf(a.PhoneNumber))
		} else if deref(a.Outcome) != "answered" {
			t.Fatalf("%s ended %s, want answered", a.PhoneNumber, deref(a.Outcome))
		}
	}
	for _, ct := range h.contacts(c.ID) {
		if want := suppressed[ct.PhoneNumber]; want != (deref(ct.Outcome) == store.OutcomeSuppressed) || !ct.IsFinal || ct.Attempts != 1 {
			t.Fatalf("contact %s: outcome %s final %v attempts %d", ct.PhoneNumber, deref(ct.Outcome), ct.IsFinal, ct.Attempts)
		}
	}
	logged := h.logs(c.ID, "contacts_suppressed")
	if len(logged) != 1 || logged[0].Details["count"] != float64(4) {
		t.Fatalf("contacts_suppressed entries %+v, want one with count 4", logged)
	}
	if n := len(h.logs(c.ID, "circuit_breaker_tripped")); n != 0 {
		t.Fatalf("the breaker tripped %d times on suppressed contacts", n)
	}
}

// TestOptOutDuringCall: a callee opting out during the call (the voice
// agent posts the opt-out) is never called again: the contact's retry ends
// suppressed, and so does another campaign's contact with that number.
func TestOptOutDuringCall(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: func(twiliosim.CallInfo) twiliosim.Script {
		return twiliosim.Script{Outcome: twiliosim.Human, RingDelay: twiliosim.Never}
	}})
	h.clock.Set(time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC))
	retry := store.Settings{RetryConfig: store.RetryConfig{Enabled: true, MaxRetries: 2, RetryDelaySeconds: 60, RetryOnBusy: true}}
	c := h.campaign(1, retry, nil)
	h.do(c.ID, store.OpStart)
	h.waitFor("the call ringing", func() bool {
		list := h.attempts(c.ID)
		return len(list) == 1 && list[0].State == store.AttemptInFlight && deref(list[0].RawStatus) == "ringing"
	})
	first := h.attempts(c.ID)[0]

	// The agent's opt-out, with the attempt's token, during the call.
	resp, err := http.Post(fmt.Sprintf("%s/api/v1/telephony/opt-out/%d?t=%s", h.public, first.ID, url.QueryEscape(h.eng.Token(first.ID))), "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("opt-out: status %d, want 204", resp.StatusCode)
	}
	entry := h.suppressionOf(number(0))
	if entry.Source != fmt.Sprintf("opt_out:%d", first.ID) {
		t.Fatalf("entry %+v, want source opt_out:%d", entry, first.ID)
	}
	// The call then ends busy: a retry is queued 60 s later.
	busy := url.Values{"AccountSid": {h.sim.AccountSID()}, "CallSid": {deref(first.ProviderCallID)}, "CallStatus": {"busy"},
		"CallDuration": {"0"}, "SequenceNumber": {"9"}, "To": {first.PhoneNumber}, "From": {"+14155550100"}}
	if got := h.postWebhook(fmt.Sprintf("/api/v1/telephony/twilio/status/%d?t=%s", first.ID, url.QueryEscape(h.eng.Token(first.ID))),
		busy, h.sim.AuthToken()); got != http.StatusNoContent {
		t.Fatalf("busy status: %d, want 204", got)
	}
	h.hangUp(deref(first.ProviderCallID)) // the provider's own late status is ignored
	h.waitFor("the retry queued", func() bool { return len(h.attempts(c.ID)) == 2 })
	h.advance(61*time.Second, c.ID)
	done := h.waitState(c.ID, store.StateCompleted)
	checkCounters(t, done, 1, 0, 1, 2)
	list := h.attempts(c.ID)
	if deref(list[0].Outcome) != "busy" || list[1].Attempt != 2 {
		t.Fatalf("attempts %s, want busy then a retry", describe(list))
	}
	checkSuppressedEvidence(t, list[1], entry)

	// Another campaign calling the number: suppressed too.
	other := h.campaign(1, store.Settings{}, nil)
	h.do(other.ID, store.OpStart)
	checkCounters(t, h.waitState(other.ID, store.StateCompleted), 1, 0, 0, 1)
	checkSuppressedEvidence(t, h.attempts(other.ID)[0], entry)
	if got := h.sim.CreatesTo(number(0)); got != 1 {
		t.Fatalf("%s called %d times, want once (before the opt-out)", number(0), got)
	}
}

// TestSuppressedContactsIgnoredByBreaker: suppressed contacts are neither
// failures nor successes for the breaker: two failed calls after four
// suppressed contacts are 2 failures of 2 calls, and trip it.
func TestSuppressedContactsIgnoredByBreaker(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: func(ci twiliosim.CallInfo) twiliosim.Script {
		if ci.To == number(4) || ci.To == number(5) {
			return failing(ci)
		}
		return quickCalls(ci)
	}})
	h.suppress(store.NewSuppressions{Source: store.SourceAPI}, number(0), number(1), number(2), number(3))
	c := h.campaign(7, store.Settings{MaxConcurrency: 1,
		CircuitBreaker: store.CircuitBreaker{Enabled: true, FailureThreshold: 1, WindowSeconds: 600, MinCallsInWindow: 2}}, nil)
	h.do(c.ID, store.OpStart)
	checkTrip(t, h.waitTrip(c.ID, 1), 1, 2, 2, 1, 600)
	if got := h.sim.CreatesByTo(); len(got) != 2 || got[number(4)] != 1 || got[number(5)] != 1 {
		t.Fatalf("calls %v, want %s and %s, then the breaker open", got, number(4), number(5))
	}
	checkCounters(t, h.get(c.ID), 6, 2, 2, 7)
}
