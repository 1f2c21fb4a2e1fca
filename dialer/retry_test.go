package dialer_test

import (
	"testing"
	"time"

	"github.com/outdial/outdial/dialer/carrier/twiliosim"
	"github.com/outdial/outdial/store"
)

// TestRetryLimitsPerOutcome: busy / no_answer / voicemail are retried when
// their retry_on_* flag is on, up to max_retries extra attempts, each not
// before retry_delay_seconds after the previous one ended; other outcomes,
// a flag off, max_retries 0 or retries disabled make the contact final after
// one attempt.
func TestRetryLimitsPerOutcome(t *testing.T) {
	all := store.RetryConfig{Enabled: true, MaxRetries: 2, RetryDelaySeconds: 30, RetryOnBusy: true, RetryOnNoAnswer: true, RetryOnVoicemail: true}
	with := func(f func(*store.RetryConfig)) store.RetryConfig {
		rc := all
		f(&rc)
		return rc
	}
	tests := []struct {
		name    string
		play    twiliosim.Outcome
		rc      store.RetryConfig
		calls   int    // per contact
		outcome string // final outcome
	}{
		{"busy, 2 retries", twiliosim.Busy, all, 3, "busy"},
		{"no answer, 1 retry", twiliosim.NoAnswer, with(func(rc *store.RetryConfig) { rc.MaxRetries = 1 }), 2, "no_answer"},
		{"voicemail, 1 retry", twiliosim.Machine, with(func(rc *store.RetryConfig) { rc.MaxRetries = 1 }), 2, "voicemail"},
		{"busy, retry_on_busy off", twiliosim.Busy, with(func(rc *store.RetryConfig) { rc.RetryOnBusy = false }), 1, "busy"},
		{"no answer, retry_on_no_answer off", twiliosim.NoAnswer, with(func(rc *store.RetryConfig) { rc.RetryOnNoAnswer = false }), 1, "no_answer"},
		{"voicemail, retry_on_voicemail off", twiliosim.Machine, with(func(rc *store.RetryConfig) { rc.RetryOnVoicemail = false }), 1, "voicemail"},
		{"busy, max_retries 0", twiliosim.Busy, with(func(rc *store.RetryConfig) { rc.MaxRetries = 0 }), 1, "busy"},
		{"busy, retries disabled", twiliosim.Busy, with(func(rc *store.RetryConfig) { rc.Enabled = false }), 1, "busy"},
		{"answered is never retried", twiliosim.Human, all, 1, "answered"},
		{"failed is never retried", twiliosim.Failed, all, 1, "failed"},
	}
	// One campaign per case, all in one harness: case k calls numbers 2k
	// and 2k+1.
	const contacts = 2
	h := newHarness(t, twiliosim.Config{Script: func(ci twiliosim.CallInfo) twiliosim.Script {
		for k, tc := range tests {
			if ci.To == number(contacts*k) || ci.To == number(contacts*k+1) {
				return twiliosim.Script{Outcome: tc.play}
			}
		}
		return twiliosim.Script{Outcome: twiliosim.Failed}
	}}, withMachineDetection())
	h.clock.Set(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	ids := make([]int64, len(tests))
	for k, tc := range tests {
		ids[k] = h.campaignFrom(contacts*k, contacts, store.Settings{Name: tc.name, RetryConfig: tc.rc}, nil).ID
		h.do(ids[k], store.OpStart)
	}
	placed := func(round int) int { // calls placed once round rounds were dialled
		n := 0
		for _, tc := range tests {
			n += contacts * min(round, tc.calls)
		}
		return n
	}
	for round := 1; round < 3; round++ {
		h.waitSim("calls of this round", func(s twiliosim.Stats) bool { return s.Created >= placed(round) })
		for k, tc := range tests {
			if tc.calls <= round {
				continue
			}
			h.waitQueued(ids[k], contacts)
			// Each retry is due retry_delay_seconds after its
			// predecessor ended, on the injected clock.
			ended := map[int64]time.Time{}
			for _, a := range h.attempts(ids[k]) {
				if a.EndedAt != nil {
					ended[a.ContactID] = *a.EndedAt
				}
			}
			for _, a := range h.attempts(ids[k]) {
				if d := a.DueAt.Sub(ended[a.ContactID]); a.State == store.AttemptQueued && (d < 30*time.Second || d > 31*time.Second) {
					t.Fatalf("%s: retry %d due %v after the previous attempt ended, want 30 s", tc.name, a.Attempt, d)
				}
			}
		}
		// A second before the earliest retry is due nothing is dialled;
		// once the latest is due, all are.
		var first, last time.Time
		for _, id := range ids {
			for _, a := range h.attempts(id) {
				if a.State == store.AttemptQueued {
					if first.IsZero() || a.DueAt.Before(first) {
						first = a.DueAt
					}
					if a.DueAt.After(last) {
						last = a.DueAt
					}
				}
			}
		}
		h.clock.Set(first.Add(-time.Second))
		for _, id := range ids {
			h.eng.Wake(id)
		}
		h.steady("no retry before retry_delay_seconds", func() bool { return h.sim.Stats().CreateRequests == placed(round) })
		h.clock.Set(last)
		for _, id := range ids {
			h.eng.Wake(id)
		}
	}
	for k, tc := range tests {
		done := h.waitState(ids[k], store.StateCompleted)
		failed := int64(contacts)
		if tc.outcome == "answered" {
			failed = 0
		}
		t.Run(tc.name, func(t *testing.T) {
			checkCounters(t, done, contacts, failed, int64(contacts*tc.calls), int64(contacts*tc.calls))
			for i := contacts * k; i < contacts*(k+1); i++ {
				if got := h.sim.CreatesTo(number(i)); got != tc.calls {
					t.Fatalf("%s called %d times, want %d", number(i), got, tc.calls)
				}
			}
			for _, ct := range h.contacts(ids[k]) {
				if !ct.IsFinal || deref(ct.Outcome) != tc.outcome || ct.Attempts != int64(tc.calls) {
					t.Fatalf("contact %s: final %v outcome %s attempts %d; want final %s after %d",
						ct.PhoneNumber, ct.IsFinal, deref(ct.Outcome), ct.Attempts, tc.outcome, tc.calls)
				}
				if tc.play == twiliosim.Machine && deref(ct.AnsweredBy) != "machine_start" {
					t.Fatalf("contact %s answered_by = %s, want machine_start", ct.PhoneNumber, deref(ct.AnsweredBy))
				}
			}
		})
	}
}

// TestRetryDueBeforeFirstAttempts: a due retry is dialled before the
// contacts not called yet.
func TestRetryDueBeforeFirstAttempts(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: func(ci twiliosim.CallInfo) twiliosim.Script {
		switch {
		case ci.To == number(0) && ci.Attempt == 1:
			return twiliosim.Script{Outcome: twiliosim.Busy}
		case ci.To == number(1):
			// Holds the only slot until the test hangs it up.
			return twiliosim.Script{Outcome: twiliosim.Human, TalkDuration: twiliosim.Never}
		}
		return twiliosim.Script{Outcome: twiliosim.Human}
	}})
	rc := store.RetryConfig{Enabled: true, MaxRetries: 1, RetryDelaySeconds: 30, RetryOnBusy: true}
	c := h.campaign(4, store.Settings{MaxConcurrency: 1, RetryConfig: rc}, nil)
	h.clock.Set(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	h.do(c.ID, store.OpStart)
	h.waitSim("contact 1 talking", func(s twiliosim.Stats) bool { return s.Created == 2 })
	h.waitQueued(c.ID, 3) // contacts 2 and 3, and contact 0's retry
	h.advance(31*time.Second, c.ID)
	h.hangUp(h.callsTo(number(1))[0].SID)
	h.waitState(c.ID, store.StateCompleted)
	var order []string
	for _, call := range h.sim.Calls() {
		order = append(order, call.To)
	}
	want := []string{number(0), number(1), number(0), number(2), number(3)}
	if len(order) != len(want) {
		t.Fatalf("calls %v, want %v", order, want)
	}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("calls %v, want %v (the due retry first)", order, want)
		}
	}
}
