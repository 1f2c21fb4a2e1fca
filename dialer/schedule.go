package dialer

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/outdial/outdial/store"
)

// window is a campaign's weekly calling schedule, evaluated on the wall
// clock of a timezone, so it is right across midnight and DST changes by
// construction: a slot 09:00–17:00 is open whenever the local clock shows a
// time in it.
type window struct {
	slots []slotMinutes
}

type slotMinutes struct {
	day        int // 0 = Monday
	start, end int // minutes since local midnight; end may be 1440
}

// ParseClock parses "HH:MM" (24-hour; "24:00" allowed when end is true) into
// minutes since midnight.
func ParseClock(s string, end bool) (int, error) {
	h, m, ok := strings.Cut(s, ":")
	if !ok || len(h) != 2 || len(m) != 2 {
		return 0, fmt.Errorf("must be HH:MM, got %q", s)
	}
	hh, err1 := strconv.Atoi(h)
	mm, err2 := strconv.Atoi(m)
	if err1 != nil || err2 != nil || hh < 0 || mm < 0 || mm > 59 || hh > 24 || (hh == 24 && (mm != 0 || !end)) {
		return 0, fmt.Errorf("must be HH:MM between 00:00 and %s, got %q", map[bool]string{true: "24:00", false: "23:59"}[end], s)
	}
	return hh*60 + mm, nil
}

func newWindow(sc *store.ScheduleConfig) *window {
	if sc == nil || !sc.Enabled {
		return nil
	}
	w := &window{}
	for _, s := range sc.Slots {
		start, err1 := ParseClock(s.StartTime, false)
		end, err2 := ParseClock(s.EndTime, true)
		if err1 != nil || err2 != nil || start >= end {
			continue // validated on input; a bad stored slot never opens
		}
		w.slots = append(w.slots, slotMinutes{day: s.DayOfWeek, start: start, end: end})
	}
	return w
}

// mondayBased returns t's weekday with Monday = 0.
func mondayBased(t time.Time) int { return (int(t.Weekday()) + 6) % 7 }

// open reports whether t falls in a slot on loc's wall clock.
func (w *window) open(t time.Time, loc *time.Location) bool {
	if w == nil {
		return true
	}
	lt := t.In(loc)
	day, min := mondayBased(lt), lt.Hour()*60+lt.Minute()
	for _, s := range w.slots {
		if s.day == day && min >= s.start && min < s.end {
			return true
		}
	}
	return false
}

// nextOpen returns t when the window is open at t, else the earliest time
// after t at which it opens, or the zero time when it never does.
func (w *window) nextOpen(t time.Time, loc *time.Location) time.Time {
	if w.open(t, loc) {
		return t
	}
	lt := t.In(loc)
	var best time.Time
	for d := 0; d <= 7; d++ {
		day := time.Date(lt.Year(), lt.Month(), lt.Day()+d, 0, 0, 0, 0, loc)
		wd := mondayBased(day)
		for _, s := range w.slots {
			if s.day != wd {
				continue
			}
			// time.Date normalises a wall time inside a DST gap forward.
			at := time.Date(day.Year(), day.Month(), day.Day(), s.start/60, s.start%60, 0, 0, loc)
			if !at.After(t) {
				// The slot started earlier today; it opens at t only if still
				// open, which open() already ruled out.
				continue
			}
			if best.IsZero() || at.Before(best) {
				best = at
			}
		}
		if !best.IsZero() {
			return best.UTC()
		}
	}
	return best
}
