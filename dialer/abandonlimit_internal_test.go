package dialer

import (
	"testing"
	"time"

	"github.com/outdial/outdial/store"
)

// The abandonment limit's rule: over once the window has min_answered
// person-answered calls and its rate exceeds max_rate (equal is within);
// watched while the rate exceeds max_rate short of min_answered.
func TestOverAbandonmentLimit(t *testing.T) {
	pol := store.AbandonmentPolicy{Enabled: true, MaxRate: 0.03, MinAnswered: 100, WindowHours: 24}
	for _, tc := range []struct {
		name                string
		abandoned, answered int64
		over, watch         bool
	}{
		{"nothing answered", 0, 0, false, false},
		{"none abandoned", 0, 500, false, false},
		{"at the rate, at min_answered", 3, 100, false, false},
		{"just over the rate, at min_answered", 4, 100, true, false},
		{"over the rate, one short of min_answered", 4, 99, false, true},
		{"far over, short of min_answered", 10, 10, false, true},
		{"at the rate with many calls", 30, 1000, false, false},
		{"just over with many calls", 31, 1000, true, false},
		{"under the rate short of min_answered", 1, 50, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			over, watch := overAbandonmentLimit(pol, tc.abandoned, tc.answered)
			if over != tc.over || watch != tc.watch {
				t.Fatalf("over, watch = %v, %v; want %v, %v", over, watch, tc.over, tc.watch)
			}
		})
	}
	zero := pol
	zero.MaxRate = 0
	if over, _ := overAbandonmentLimit(zero, 1, 100); !over {
		t.Fatal("max_rate 0: one abandoned call of 100 is not over")
	}
	if over, _ := overAbandonmentLimit(zero, 0, 100); over {
		t.Fatal("max_rate 0: no abandoned call is over")
	}
	whole := pol
	whole.MaxRate, whole.MinAnswered = 1, 1
	if over, _ := overAbandonmentLimit(whole, 5, 5); over {
		t.Fatal("max_rate 1: every call abandoned is over")
	}
}

// The recall hold ends recall_after_hours after the abandoned call's
// answer; 0 h holds nothing.
func TestRecallUntil(t *testing.T) {
	t0 := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	if got := recallUntil(t0, 72); !got.Equal(t0.Add(72 * time.Hour)) {
		t.Fatalf("until = %v", got)
	}
	if got := recallUntil(t0, 0); got.After(t0) {
		t.Fatalf("0 h: until = %v, after the answer", got)
	}
}
