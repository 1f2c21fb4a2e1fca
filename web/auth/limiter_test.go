package auth

import (
	"testing"
	"time"
)

func TestThrottle(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ago := func(d ...time.Duration) []time.Time {
		ts := make([]time.Time, len(d))
		for i, x := range d {
			ts[i] = now.Add(-x)
		}
		return ts
	}
	// n failures, the oldest 'oldest' ago, the others a second apart after it.
	spread := func(n int, oldest time.Duration) []time.Time {
		ts := make([]time.Time, n)
		for i := range ts {
			ts[i] = now.Add(-oldest + time.Duration(i)*time.Second)
		}
		return ts
	}
	const minute, second = time.Minute, time.Second
	tests := []struct {
		name        string
		failures    []time.Time
		wantLimited bool
		wantRetry   time.Duration
	}{
		{"none", nil, false, 0},
		{"nine", spread(9, 5*minute), false, 0},
		{"ten, oldest 5 min ago", spread(10, 5*minute), true, 10 * minute},
		{"ten at now", ago(0, 0, 0, 0, 0, 0, 0, 0, 0, 0), true, 15 * minute},
		{"ten, oldest 14:59 ago", spread(10, 14*minute+59*second), true, 1 * second},
		{"ten, oldest 14:59.9 ago: rounded up to 1 s", spread(10, 14*minute+59*second+900*time.Millisecond), true, 1 * second},
		{"ten, oldest 14:58.5 ago: rounded up", spread(10, 14*minute+58*second+500*time.Millisecond), true, 2 * second},
		{"ten, oldest exactly 15 min ago: out of the window", spread(10, 15*minute), false, 0},
		{"ten, oldest 15:00.001 ago", spread(10, 15*minute+time.Millisecond), false, 0},
		{"eleven, oldest out of the window", spread(11, 15*minute), true, 1 * second},
		{"old failures do not count", append(ago(20*minute, 16*minute, 15*minute), spread(9, 1*minute)...), false, 0},
		{"unordered", ago(1*minute, 9*minute, 2*minute, 8*minute, 3*minute, 7*minute, 4*minute, 6*minute, 5*minute, 10*minute), true, 5 * minute},
		// With more than ten, Retry-After waits until fewer than ten
		// remain: here the three oldest (12, 11 and 9 min ago) must leave.
		{"twelve: until the tenth newest leaves", ago(12*minute, 11*minute, 9*minute, 8*minute, 7*minute, 6*minute, 5*minute, 4*minute, 3*minute, 2*minute, 1*minute, 0), true, 6 * minute},
		{"a failure stamped in the future counts", append(spread(9, 5*minute), now.Add(time.Minute)), true, 10 * minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			retry, limited := Throttle(tt.failures, now)
			if limited != tt.wantLimited || retry != tt.wantRetry {
				t.Fatalf("Throttle = %v, %v, want %v, %v", retry, limited, tt.wantRetry, tt.wantLimited)
			}
		})
	}
}

// Waiting Retry-After lets the next attempt through, and no earlier.
func TestThrottleRetryAfterIsExact(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var failures []time.Time
	for i := range 10 {
		failures = append(failures, now.Add(-13*time.Minute+time.Duration(i)*7300*time.Millisecond))
	}
	retry, limited := Throttle(failures, now)
	if !limited {
		t.Fatalf("ten failures in the window: not limited")
	}
	if retry%time.Second != 0 {
		t.Fatalf("Retry-After %v is not whole seconds", retry)
	}
	if _, limited := Throttle(failures, now.Add(retry)); limited {
		t.Fatalf("still limited after waiting Retry-After (%v)", retry)
	}
	if _, limited := Throttle(failures, now.Add(retry-time.Second)); !limited {
		t.Fatalf("not limited a second before Retry-After (%v): it is not the least wait", retry)
	}
}

func TestThrottleDoesNotReorderInput(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var failures []time.Time
	for i := range 10 {
		failures = append(failures, now.Add(-time.Duration(i)*time.Minute))
	}
	first := failures[0]
	Throttle(failures, now)
	if !failures[0].Equal(first) {
		t.Fatalf("Throttle reordered the caller's slice")
	}
}
