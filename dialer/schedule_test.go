package dialer

import (
	"testing"
	"time"

	"github.com/outdial/outdial/store"
)

func mustLoc(t *testing.T, name string) *time.Location {
	t.Helper()
	l, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestWindowOpen(t *testing.T) {
	ny := mustLoc(t, "America/New_York")
	tokyo := mustLoc(t, "Asia/Tokyo")
	// 2026-11-23 is a Monday (day_of_week 0).
	w := newWindow(&store.ScheduleConfig{Enabled: true, Slots: []store.Slot{
		{DayOfWeek: 0, StartTime: "09:00", EndTime: "17:00"},
		{DayOfWeek: 1, StartTime: "20:00", EndTime: "24:00"},
	}})
	tests := []struct {
		name string
		at   time.Time
		loc  *time.Location
		want bool
	}{
		{"monday start is inclusive", time.Date(2026, 11, 23, 9, 0, 0, 0, ny), ny, true},
		{"monday end is exclusive", time.Date(2026, 11, 23, 17, 0, 0, 0, ny), ny, false},
		{"monday before start", time.Date(2026, 11, 23, 8, 59, 59, 0, ny), ny, false},
		{"tuesday slot to 24:00, last minute", time.Date(2026, 11, 24, 23, 59, 0, 0, ny), ny, true},
		{"wednesday midnight after 24:00 slot", time.Date(2026, 11, 25, 0, 0, 0, 0, ny), ny, false},
		{"same instant, contact in Tokyo (Tuesday 00:00)", time.Date(2026, 11, 23, 10, 0, 0, 0, ny), tokyo, false},
		{"Tokyo contact on its own Monday morning", time.Date(2026, 11, 23, 10, 0, 0, 0, tokyo), tokyo, true},
		{"sunday closed", time.Date(2026, 11, 22, 12, 0, 0, 0, ny), ny, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := w.open(tc.at, tc.loc); got != tc.want {
				t.Fatalf("open(%v in %v) = %v, want %v", tc.at, tc.loc, got, tc.want)
			}
		})
	}
	if (*window)(nil).open(time.Now(), ny) != true {
		t.Fatal("no schedule must always be open")
	}
}

func TestWindowNextOpen(t *testing.T) {
	ny := mustLoc(t, "America/New_York")
	berlin := mustLoc(t, "Europe/Berlin")
	monday9 := &store.ScheduleConfig{Enabled: true, Slots: []store.Slot{{DayOfWeek: 0, StartTime: "09:00", EndTime: "17:00"}}}
	night := &store.ScheduleConfig{Enabled: true, Slots: []store.Slot{{DayOfWeek: 6, StartTime: "02:30", EndTime: "04:00"}}}
	tests := []struct {
		name string
		sc   *store.ScheduleConfig
		at   time.Time
		loc  *time.Location
		want time.Time
	}{
		{"open now returns now", monday9, time.Date(2026, 11, 23, 10, 0, 0, 0, ny), ny, time.Date(2026, 11, 23, 10, 0, 0, 0, ny)},
		{"later today", monday9, time.Date(2026, 11, 23, 7, 0, 0, 0, ny), ny, time.Date(2026, 11, 23, 9, 0, 0, 0, ny)},
		{"after today's slot: next week", monday9, time.Date(2026, 11, 23, 18, 0, 0, 0, ny), ny, time.Date(2026, 11, 30, 9, 0, 0, 0, ny)},
		// 2027-03-28 (a Sunday) Berlin springs forward at 02:00 → 03:00; a
		// 02:30 start does not exist that day and opens at 03:30 CEST.
		{"DST gap start moves forward", night, time.Date(2027, 3, 27, 12, 0, 0, 0, berlin), berlin, time.Date(2027, 3, 28, 3, 30, 0, 0, berlin)},
		// 2026-11-01 New York falls back: 09:00 EST is 14:00 UTC, not 13:00.
		{"after DST fall back, wall clock kept", monday9, time.Date(2026, 10, 27, 12, 0, 0, 0, ny), ny, time.Date(2026, 11, 2, 9, 0, 0, 0, ny)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := newWindow(tc.sc).nextOpen(tc.at, tc.loc)
			if !got.Equal(tc.want) {
				t.Fatalf("nextOpen = %v, want %v", got.In(tc.loc), tc.want)
			}
		})
	}
	never := newWindow(&store.ScheduleConfig{Enabled: true})
	if got := never.nextOpen(time.Now(), ny); !got.IsZero() {
		t.Fatalf("a schedule without slots opened at %v", got)
	}
}

func TestParseClock(t *testing.T) {
	tests := []struct {
		in      string
		end     bool
		want    int
		wantErr bool
	}{
		{"00:00", false, 0, false},
		{"09:30", false, 570, false},
		{"23:59", false, 1439, false},
		{"24:00", true, 1440, false},
		{"24:00", false, 0, true},
		{"24:01", true, 0, true},
		{"9:30", false, 0, true},
		{"12:60", false, 0, true},
		{"ab:cd", false, 0, true},
		{"", false, 0, true},
	}
	for _, tc := range tests {
		got, err := ParseClock(tc.in, tc.end)
		if (err != nil) != tc.wantErr || (err == nil && got != tc.want) {
			t.Fatalf("ParseClock(%q, %v) = %d, %v; want %d, err %v", tc.in, tc.end, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestBucketPacesAtRate(t *testing.T) {
	var b bucket
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	total := 0
	// Ask every 3 ms for 10 s at 100/s: at most 1000 (+1 for the first).
	for now := start; now.Before(start.Add(10 * time.Second)); now = now.Add(3 * time.Millisecond) {
		total += b.take(now, 100, 500)
	}
	if total < 990 || total > 1001 {
		t.Fatalf("calls started in 10 s at 100/s = %d, want about 1000", total)
	}
	// Burst 1: after a long idle period only about one call may start at once.
	if n := b.take(start.Add(time.Hour), 100, 500); n > 2 {
		t.Fatalf("burst after idle = %d, want at most 2", n)
	}
}

func TestBreakerWindow(t *testing.T) {
	var b breaker
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	w := 10 * time.Second
	for i := 0; i < 4; i++ {
		b.record(t0.Add(time.Duration(i)*time.Second), i%2 == 0, w, t0.Add(time.Duration(i)*time.Second))
	}
	calls, failures := b.record(t0.Add(4*time.Second), true, w, t0.Add(4*time.Second))
	if calls != 5 || failures != 3 {
		t.Fatalf("window = %d calls, %d failures; want 5, 3", calls, failures)
	}
	calls, failures = b.record(t0.Add(13*time.Second), false, w, t0.Add(13*time.Second))
	if calls != 3 || failures != 1 {
		t.Fatalf("after sliding = %d calls, %d failures; want 3, 1 (events at 3,4,13 s)", calls, failures)
	}
	b.reset()
	if calls, _ := b.record(t0, false, w, t0); calls != 1 {
		t.Fatalf("after reset = %d calls, want 1", calls)
	}
}

func TestProviderLimiterBacksOff(t *testing.T) {
	var l providerLimiter
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if u := l.limited(t0, 0, "a"); !u.Equal(t0.Add(time.Second)) {
		t.Fatalf("first back-off until %v, want +1s", u)
	}
	if u := l.limited(t0.Add(100*time.Millisecond), 0, "b"); !u.Equal(t0.Add(time.Second)) {
		t.Fatalf("a 429 during the back-off extended it to %v", u)
	}
	if u := l.limited(t0.Add(2*time.Second), 0, "c"); !u.Equal(t0.Add(4 * time.Second)) {
		t.Fatalf("second back-off until %v, want +2s after the 429", u)
	}
	if u := l.limited(t0.Add(5*time.Second), 30*time.Second, "d"); !u.Equal(t0.Add(35 * time.Second)) {
		t.Fatalf("Retry-After not honoured: %v", u)
	}
	if u, cause := l.blockedUntil(); !u.Equal(t0.Add(35*time.Second)) || cause != "d" {
		t.Fatalf("blocked until %v for %q, want +35s for the last refusal's cause", u, cause)
	}
	l.succeeded()
	if u := l.limited(t0.Add(40*time.Second), 0, "e"); !u.Equal(t0.Add(41 * time.Second)) {
		t.Fatalf("back-off not reset after success: %v", u)
	}
}
