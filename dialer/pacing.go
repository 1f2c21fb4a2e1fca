package dialer

import (
	"sync"
	"time"
)

// bucket paces a campaign's new calls: a token bucket of burst 1 kept as a
// theoretical arrival time. A late wake-up (timer slack) may use up to one
// interval of lost time, so the long-run rate stays at the configured one.
type bucket struct {
	tat time.Time
}

// take returns how many calls (at most max) may start at now.
func (b *bucket) take(now time.Time, rate float64, max int) int {
	if rate <= 0 {
		rate = 1
	}
	interval := time.Duration(float64(time.Second) / rate)
	// Time lost to a late wake-up is made up for: one interval (at most
	// 20 ms), and 20 ms for rates above 100/s, whose 1-10 ms intervals are
	// shorter than a runner's wake-up on a loaded machine (a claim waits
	// for the writer): their burst is at most 20 ms worth of calls.
	catchUp := min(interval, 20*time.Millisecond)
	if interval < 10*time.Millisecond {
		catchUp = 20 * time.Millisecond
	}
	n := 0
	for n < max && !b.tat.After(now) {
		if floor := now.Add(-catchUp); b.tat.Before(floor) {
			b.tat = floor
		}
		b.tat = b.tat.Add(interval)
		n++
	}
	return n
}

// refund gives back n unused tokens.
func (b *bucket) refund(n int, rate float64) {
	if rate <= 0 {
		rate = 1
	}
	b.tat = b.tat.Add(-time.Duration(n) * time.Duration(float64(time.Second)/rate))
}

// next returns when the next token is available.
func (b *bucket) next() time.Time { return b.tat }

// providerLimiter holds back every campaign of one telephony configuration
// after the provider answered 429 (its rate limit is per account) or could
// not take a call for another reason of its side (carrier.Unavailable: an
// ARI configuration whose events websocket cannot be made). The back-off
// doubles on each (1 s up to 60 s, or the provider's Retry-After) and
// resets after a success. It keeps the last one's cause for the diagnosis.
type providerLimiter struct {
	mu      sync.Mutex
	until   time.Time
	backoff time.Duration
	cause   string // what the last refusal was (causes.go)
}

// blockedUntil returns the end of the current back-off (zero when none)
// and its cause.
func (l *providerLimiter) blockedUntil() (time.Time, string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.until, l.cause
}

// limited records a refusal at now, whose cause is cause, and returns
// when dialing may resume.
func (l *providerLimiter) limited(now time.Time, retryAfter time.Duration, cause string) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cause = cause
	if l.until.After(now) {
		// Several requests under way hit the same limit: back off once.
		if ra := now.Add(retryAfter); ra.After(l.until) {
			l.until = ra
		}
		return l.until
	}
	if l.backoff == 0 {
		l.backoff = time.Second
	} else {
		l.backoff = min(2*l.backoff, 60*time.Second)
	}
	l.until = now.Add(max(l.backoff, retryAfter))
	return l.until
}

// holdUntil holds the configuration's campaigns until until, when later
// than the current back-off: another node's provider refused (API.md 16:
// the per-provider call rate is shared by all nodes).
func (l *providerLimiter) holdUntil(until time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if until.After(l.until) {
		l.until = until
		if l.cause == "" {
			l.cause = "the provider refused another node's request"
		}
	}
}

// succeeded resets the back-off after a request went through.
func (l *providerLimiter) succeeded() {
	l.mu.Lock()
	l.backoff = 0
	l.mu.Unlock()
}

// breaker is a campaign's circuit-breaker window: the ends of attempts over
// the last window_seconds, with running counts so recording is O(1)
// amortised.
type breaker struct {
	events   []breakerEvent
	head     int // events[:head] have left the window
	calls    int
	failures int
}

type breakerEvent struct {
	at     time.Time
	failed bool
}

// record adds an attempt end and returns the calls and failures in the
// window ending at now.
func (b *breaker) record(at time.Time, failed bool, window time.Duration, now time.Time) (calls, failures int) {
	b.events = append(b.events, breakerEvent{at: at, failed: failed})
	b.calls++
	if failed {
		b.failures++
	}
	cut := now.Add(-window)
	for b.head < len(b.events) && b.events[b.head].at.Before(cut) {
		b.calls--
		if b.events[b.head].failed {
			b.failures--
		}
		b.head++
	}
	if b.head > 1024 && b.head > len(b.events)/2 {
		b.events = append(b.events[:0], b.events[b.head:]...)
		b.head = 0
	}
	return b.calls, b.failures
}

func (b *breaker) reset() { b.events, b.head, b.calls, b.failures = nil, 0, 0, 0 }
