package dialer_test

// The attempt cap across campaigns (API.md 12.3, 12.5): a number is called
// at most max_attempts times in any window_hours, whatever campaign calls
// it; an attempt over the cap waits (not a failure) until the oldest call
// leaves the window.

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer/carrier/twiliosim"
	"github.com/outdial/outdial/store"
)

func TestAttemptCapAcrossCampaigns(t *testing.T) {
	for _, max := range []int{1, 2} {
		t.Run(fmt.Sprintf("max_attempts %d", max), func(t *testing.T) {
			h := newHarness(t, twiliosim.Config{Script: quickCalls})
			h.setPolicy(func(p *store.Policy) {
				p.AttemptCap = store.AttemptCap{Enabled: true, MaxAttempts: max, WindowHours: 24}
			})
			h.clock.Set(time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC))
			// max+1 campaigns dial the same number at once.
			var ids []int64
			for range max + 1 {
				ids = append(ids, h.campaign(1, store.Settings{}, nil).ID)
			}
			for _, id := range ids {
				h.do(id, store.OpStart)
			}
			var held *store.Attempt
			var heldCampaign int64
			var placed []*store.Attempt
			h.waitFor("all but one campaign completed, the last one's attempt held", func() bool {
				held, placed = nil, nil
				for _, id := range ids {
					c := h.get(id)
					a := h.attempts(id)[0]
					switch {
					case c.State == store.StateCompleted:
						placed = append(placed, a)
					case a.State == store.AttemptQueued && a.Compliance != nil:
						held, heldCampaign = a, id
					}
				}
				return len(placed) == max && held != nil
			})
			h.eng.Wake(heldCampaign)
			h.steady("no call over the cap", func() bool { return h.sim.CreatesTo(number(0)) == max })
			if c := h.get(heldCampaign); c.State != store.StateRunning || c.FailedRows != 0 || c.ProcessedRows != 0 {
				t.Fatalf("held campaign: state %s processed %d failed %d, want running, nothing processed", c.State, c.ProcessedRows, c.FailedRows)
			}

			// The placed calls saw 0..max-1 calls in the window; the held
			// one saw max and waits until the oldest leaves the window.
			var seen []int
			oldest := time.Time{}
			for _, a := range placed {
				ev := evidenceOf(t, a)
				if ev.AttemptCap != "clear" || ev.AttemptsInWindow == nil || ev.MaxAttempts != max || ev.WindowHours != 24 || a.ProviderCallID == nil {
					t.Fatalf("placed attempt %d evidence %s, want cap clear", a.ID, a.Compliance)
				}
				seen = append(seen, *ev.AttemptsInWindow)
				if oldest.IsZero() || ev.CheckedAt.Before(oldest) {
					oldest = ev.CheckedAt
				}
			}
			slices.Sort(seen)
			for i, n := range seen {
				if n != i {
					t.Fatalf("attempts_in_window of the placed calls %v, want 0..%d", seen, max-1)
				}
			}
			ev := evidenceOf(t, held)
			due := oldest.Truncate(time.Millisecond).Add(24 * time.Hour)
			if ev.AttemptCap != "held" || ev.AttemptsInWindow == nil || *ev.AttemptsInWindow != max || ev.MaxAttempts != max ||
				ev.WindowHours != 24 || ev.Suppression != "clear" || ev.CallingHours != "disabled" || !held.DueAt.Equal(due) {
				t.Fatalf("held attempt due %v, evidence %s; want cap held with %d in the window, due %v", held.DueAt, held.Compliance, max, due)
			}

			// The campaign waits for the cap: next_dial_at and the log say
			// until when.
			h.waitFor("attempt_cap_reached", func() bool { return len(h.logs(heldCampaign, "attempt_cap_reached")) == 1 })
			if n := h.get(heldCampaign).NextDialAt; n == nil || !n.Equal(due) {
				t.Fatalf("next_dial_at %v, want %v", n, due)
			}
			if at := h.logs(heldCampaign, "attempt_cap_reached")[0].Details["next_dial_at"]; at != due.UTC().Format(time.RFC3339) {
				t.Fatalf("attempt_cap_reached next_dial_at %v, want %s", at, due.UTC().Format(time.RFC3339))
			}

			// A minute before the window passes: still held.
			h.clock.Set(due.Add(-time.Minute))
			h.eng.Wake(heldCampaign)
			h.steady("no call before the window passed", func() bool { return h.sim.CreatesTo(number(0)) == max })
			// Once it passed, the same attempt is placed.
			h.clock.Set(due)
			h.eng.Wake(heldCampaign)
			done := h.waitState(heldCampaign, store.StateCompleted)
			checkCounters(t, done, 1, 0, 1, 1)
			list := h.attempts(heldCampaign)
			if len(list) != 1 || list[0].ID != held.ID || h.sim.CreatesTo(number(0)) != max+1 {
				t.Fatalf("attempts %s, calls %d: want the held attempt placed, %d calls in all", describe(list), h.sim.CreatesTo(number(0)), max+1)
			}
			if ev := evidenceOf(t, list[0]); ev.AttemptCap != "clear" || *ev.AttemptsInWindow > max-1 {
				t.Fatalf("evidence %s, want cap clear with at most %d calls in the window", list[0].Compliance, max-1)
			}
			ev2 := h.events(heldCampaign)
			if reached, released := slices.Index(ev2, "attempt_cap_reached"), slices.Index(ev2, "attempt_cap_released"); reached < 0 || released < reached || done.NextDialAt != nil {
				t.Fatalf("log events %v, next_dial_at %v: want attempt_cap_reached then attempt_cap_released, then null", ev2, done.NextDialAt)
			}
		})
	}
}
