package dialer_test

// The abandonment policy in the engine (API.md 19): abandon_after_ms from
// the policy whether enabled or not, the pause at max_rate, the recall hold
// of abandoned numbers across the organization's campaigns. The harness's
// answers stream to a voice agent that never reports: every call a person
// answers is abandoned.

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer"
	"github.com/outdial/outdial/dialer/carrier/twiliosim"
	"github.com/outdial/outdial/store"
)

const silentAgent = "wss://agent.example.test/stream"

func TestAbandonAfterFromThePolicy(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: quickCalls})
	ctx := context.Background()
	if got := h.eng.AbandonAfter(ctx, h.org); got != store.DefaultAbandonAfter {
		t.Fatalf("default: %v, want %v", got, store.DefaultAbandonAfter)
	}
	for _, tc := range []struct {
		enabled bool
		ms      int
		want    time.Duration
	}{
		{false, 5000, 5 * time.Second}, // disabled: the figure applies all the same
		{true, 1500, 1500 * time.Millisecond},
		{false, 0, time.Nanosecond}, // 0 ms: only audio at the answer is in time
	} {
		h.setPolicy(func(p *store.Policy) { p.Abandonment.Enabled, p.Abandonment.AbandonAfterMs = tc.enabled, tc.ms })
		if got := h.eng.AbandonAfter(ctx, h.org); got != tc.want {
			t.Fatalf("enabled %v, %d ms: %v, want %v", tc.enabled, tc.ms, got, tc.want)
		}
	}
}

// An agent that never reports: with the policy enabled, max_rate 0.3 and
// min_answered 3, the campaign pauses when its third call ends, not
// before (two abandoned of two are over the rate but short of
// min_answered), and places no fourth call; the log and the diagnosis say
// why. Disabled, the same campaign runs to the end.
func TestAbandonmentLimitPauses(t *testing.T) {
	for _, enabled := range []bool{true, false} {
		t.Run(map[bool]string{true: "enabled", false: "disabled"}[enabled], func(t *testing.T) {
			h := newHarness(t, twiliosim.Config{Script: quickCalls}, withAgentURL(silentAgent))
			h.setPolicy(func(p *store.Policy) {
				p.Abandonment = store.AbandonmentPolicy{Enabled: enabled, AbandonAfterMs: 2000, MaxRate: 0.3, WindowHours: 24,
					MinAnswered: 3, RecallAfterHours: 72}
			})
			h.clock.Set(time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC))
			c := h.campaign(6, store.Settings{MaxConcurrency: 1}, nil)
			h.do(c.ID, store.OpStart)
			if !enabled {
				done := h.waitState(c.ID, store.StateCompleted)
				if done.ProcessedRows != 6 || len(h.logs(c.ID, dialer.AbandonmentLimitEvent)) != 0 {
					t.Fatalf("disabled: processed %d, log %v; want 6 calls and no pause", done.ProcessedRows, h.events(c.ID))
				}
				for _, a := range h.attempts(c.ID) {
					if a.Abandoned == nil || !*a.Abandoned {
						t.Fatalf("attempt %d abandoned = %v, want true (measured with the policy off)", a.ID, a.Abandoned)
					}
				}
				return
			}
			paused := h.waitState(c.ID, store.StatePaused)
			h.steady("no call after the pause", func() bool { return h.sim.Stats().Created == 3 })
			if paused.ProcessedRows != 3 {
				t.Fatalf("processed %d, want the pause at the third call", paused.ProcessedRows)
			}
			logs := h.logs(c.ID, dialer.AbandonmentLimitEvent)
			if len(logs) != 1 {
				t.Fatalf("abandonment_limit entries %d; log %v", len(logs), h.events(c.ID))
			}
			d := logs[0].Details
			if d["abandoned_rate"] != 1.0 || d["abandoned"] != 3.0 || d["answered"] != 3.0 || d["max_rate"] != 0.3 ||
				d["min_answered"] != 3.0 || d["window_hours"] != 24.0 || logs[0].Level != store.LogWarning {
				t.Fatalf("abandonment_limit %s details %v", logs[0].Level, d)
			}
			diag := h.diagNow(c.ID)
			if len(diag.Reasons) == 0 || diag.Reasons[0].Code != dialer.ReasonNotRunning || !strings.Contains(diag.Reasons[0].Message, "abandonment limit") {
				t.Fatalf("diagnosis reasons %+v, want not_running paused by the abandonment limit", diag.Reasons)
			}
		})
	}
}

// A number abandoned by one campaign is held for recall_after_hours from
// that call's answer by every campaign of the organization while the policy
// is enabled: the attempt waits (not a failure) with its evidence and the
// diagnosis abandoned_recall, and is placed at until. Disabled, nothing is
// held.
func TestAbandonedRecallAcrossCampaigns(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: quickCalls}, withAgentURL(silentAgent))
	t0 := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h.clock.Set(t0)
	policy := store.AbandonmentPolicy{Enabled: false, AbandonAfterMs: 2000, MaxRate: 0.5, WindowHours: 24, MinAnswered: 1000, RecallAfterHours: 72}
	h.setPolicy(func(p *store.Policy) { p.Abandonment = policy })

	first := h.campaign(1, store.Settings{}, nil)
	h.do(first.ID, store.OpStart)
	h.waitState(first.ID, store.StateCompleted)
	a := h.attempts(first.ID)[0]
	if a.Abandoned == nil || !*a.Abandoned || a.AnsweredAt == nil {
		t.Fatalf("first call abandoned %v answered %v, want abandoned", a.Abandoned, a.AnsweredAt)
	}
	// Disabled: a second campaign calls the number at once.
	h.clock.Set(t0.Add(time.Hour))
	second := h.campaign(1, store.Settings{}, nil)
	h.do(second.ID, store.OpStart)
	h.waitState(second.ID, store.StateCompleted)
	b := h.attempts(second.ID)[0]
	if ev := evidenceOf(t, b); ev.AbandonedRecall != "disabled" {
		t.Fatalf("disabled policy: evidence %s", b.Compliance)
	}
	until := b.AnsweredAt.Add(72 * time.Hour) // the newest abandoned call's answer

	policy.Enabled = true
	h.setPolicy(func(p *store.Policy) { p.Abandonment = policy })
	h.clock.Set(t0.Add(2 * time.Hour))
	third := h.campaign(1, store.Settings{}, nil)
	h.do(third.ID, store.OpStart)
	var held *store.Attempt
	h.waitFor("the third campaign's attempt held", func() bool {
		held = h.attempts(third.ID)[0]
		return held.State == store.AttemptQueued && held.Compliance != nil
	})
	ev := evidenceOf(t, held)
	if ev.AbandonedRecall != "held" || ev.AbandonedRecallUntil == nil || !ev.AbandonedRecallUntil.Equal(until) ||
		ev.RecallAfterHours == nil || *ev.RecallAfterHours != 72 || !held.DueAt.Equal(until) {
		t.Fatalf("held attempt due %v evidence %s, want abandoned_recall held until %v", held.DueAt, held.Compliance, until)
	}
	if c := h.get(third.ID); c.State != store.StateRunning || c.ProcessedRows != 0 || c.FailedRows != 0 {
		t.Fatalf("held campaign %s processed %d failed %d, want running with nothing processed", c.State, c.ProcessedRows, c.FailedRows)
	}
	d := h.diagNow(third.ID)
	var reason *dialer.Reason
	for i := range d.Reasons {
		if d.Reasons[i].Code == dialer.ReasonRecall {
			reason = &d.Reasons[i]
		}
	}
	if reason == nil || reason.Count == nil || *reason.Count != 1 || reason.Until == nil || !reason.Until.Equal(until) {
		t.Fatalf("diagnosis reasons %+v, want abandoned_recall count 1 until %v", d.Reasons, until)
	}

	// A minute before until: still held. At until: placed.
	h.clock.Set(until.Add(-time.Minute))
	h.eng.Wake(third.ID)
	h.steady("no call before until", func() bool { return h.sim.CreatesTo(number(0)) == 2 })
	h.clock.Set(until)
	h.eng.Wake(third.ID)
	h.waitState(third.ID, store.StateCompleted)
	if n := h.sim.CreatesTo(number(0)); n != 3 {
		t.Fatalf("calls to the number %d, want 3", n)
	}
	if ev := evidenceOf(t, h.attempts(third.ID)[0]); ev.AbandonedRecall != "clear" {
		t.Fatalf("placed at until: evidence %s, want clear", h.attempts(third.ID)[0].Compliance)
	}
}
