package auth

import (
	"slices"
	"time"
)

// The sign-in throttle of API.md 17: after MaxFailures failed sign-ins for
// an email, or from an address, within Window, the next attempt is refused
// (429) until enough of them have aged out of the window.
const (
	Window      = 15 * time.Minute
	MaxFailures = 10
)

// Throttle decides whether a sign-in is refused, given the times of the
// failed attempts of one email or one address (in any order; the caller
// keeps them, drops those older than Window at will and counts failed
// second factors but not refused attempts) and the current time.
//
// A failure counts while it is less than Window old: one at now-Window
// exactly no longer counts, so the window is the half-open interval
// (now-Window, now] (failures stamped after now, from a clock that stepped
// back, count too). With MaxFailures or more counted, the attempt is
// limited and retryAfter is the time until enough have aged out that fewer
// than MaxFailures count: with exactly MaxFailures (the usual case, as
// refused attempts are not failures) that is until the oldest of them is
// Window old, as the contract's Retry-After says; with more it is until the
// oldest of the newest MaxFailures is, so a client that waits is not
// refused again. It is rounded up to whole seconds and at least one second,
// so that Retry-After never sends a client back too early. Otherwise it
// returns (0, false).
func Throttle(failures []time.Time, now time.Time) (retryAfter time.Duration, limited bool) {
	var counted []time.Time
	for _, f := range failures {
		if now.Sub(f) < Window {
			counted = append(counted, f)
		}
	}
	if len(counted) < MaxFailures {
		return 0, false
	}
	slices.SortFunc(counted, func(a, b time.Time) int { return a.Compare(b) })
	// Once this one is Window old, MaxFailures-1 remain.
	pivot := counted[len(counted)-MaxFailures]
	wait := pivot.Add(Window).Sub(now)
	if r := wait % time.Second; r != 0 {
		wait += time.Second - r
	}
	return max(wait, time.Second), true
}
