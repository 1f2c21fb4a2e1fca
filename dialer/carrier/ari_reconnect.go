package carrier

// The ARI events websocket's reconnect policy: its timing (exponential
// backoff with full jitter, capped; what resets it; how often a waiting
// call may cut a wait short) and its rate-limited failure log. The loop
// that applies it is ari.Events (ari_events.go).

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"time"
)

// ariTiming are the event stream's delays and clock; tests shorten them
// or replace the sleep with a simulated clock's.
type ariTiming struct {
	// backoff is the wait before reconnect attempt n (0 for the first
	// retry after a failure).
	backoff func(n int) time.Duration
	// sleep waits d, or until ctx ends, or until kick (nil: never) has a
	// value; it reports whether kick ended it. Tests advance a simulated
	// clock instead of sleeping.
	sleep func(ctx context.Context, d time.Duration, kick <-chan struct{}) bool
	// stable is how long a connection must stay up for the backoff to
	// start over: one closed sooner counts as a failed attempt, so a server
	// that accepts and drops the websocket at once gets no faster
	// reconnects than one that refuses it. 0: every connection resets it.
	stable time.Duration
	// kickEvery is how often a call waiting for the websocket may cut a
	// backoff wait short (see awaitEvents): at most once per kickEvery,
	// so waiting calls add at most one attempt per kickEvery to the
	// backoff's. 0: every time.
	kickEvery time.Duration
	// logEvery is how often a failed attempt is logged: at most one line
	// per configuration per logEvery, counting the failures since the
	// last line. 0: every failure.
	logEvery time.Duration
	// farGrace is how long a call behind Local/ whose outcome is not
	// decided yet waits for its far half's destroy after ours; it is also
	// how long a channel found gone by the reconciliation waits for events
	// still on their way before it ends as gone.
	farGrace time.Duration
	// ping is the interval of the websocket pings that detect a dead
	// connection; dialTimeout bounds a handshake.
	ping        time.Duration
	dialTimeout time.Duration
	// eventsWait is how long a call waits for the events websocket before
	// it is put off by eventsRetry (see awaitEvents); 0: no wait.
	eventsWait  time.Duration
	eventsRetry time.Duration
}

// ariDefaultTiming: reconnects after a wait drawn from [0, 250 ms) doubling
// up to [0, 30 s) (full jitter), started over after a connection that
// stayed up 10 s; a waiting call cuts a wait short at most every 30 s; one
// failure line a minute; a 1 s far-half grace, a ping every 30 s, 15 s
// handshakes, and calls waiting up to 5 s for the websocket before they are
// put off 2 s.
func ariDefaultTiming() ariTiming {
	return ariTiming{
		backoff:     ariBackoff(250*time.Millisecond, 30*time.Second, rand.Float64),
		sleep:       ariSleep,
		stable:      10 * time.Second,
		kickEvery:   30 * time.Second,
		logEvery:    time.Minute,
		farGrace:    time.Second,
		ping:        30 * time.Second,
		dialTimeout: 15 * time.Second,
		eventsWait:  5 * time.Second,
		eventsRetry: 2 * time.Second,
	}
}

// ariBackoff returns exponential backoff delays with full jitter: the wait
// before retry n is drawn uniformly from [0, min(limit, first*2^n)) with
// random (a float in [0, 1)). Spreading the waits over the whole range
// keeps the carriers of many configurations, or many processes, that lost
// the same Asterisk at once from retrying in step.
func ariBackoff(first, limit time.Duration, random func() float64) func(int) time.Duration {
	return func(n int) time.Duration {
		d := first
		for i := 0; i < n && d < limit; i++ {
			d *= 2
		}
		d = min(d, limit)
		return time.Duration(random() * float64(d))
	}
}

// ariSleep is the real ariTiming.sleep.
func ariSleep(ctx context.Context, d time.Duration, kick <-chan struct{}) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return false
	case <-kick:
		return true
	}
}

// ariEventsLog writes the events websocket's failure lines of one carrier
// (one configuration), at most one per timing.logEvery: the first failure
// is logged at once, later ones are counted and the count goes out with the
// next line allowed. Only the Events goroutine uses it.
type ariEventsLog struct {
	a        *ari
	last     time.Time // when the last failure line was written
	unlogged int       // failures since then
	reported bool      // a failure line was written since the last connection
}

// failed notes a failed attempt at now; next is when the next one is due.
func (l *ariEventsLog) failed(now time.Time, err error, status int, next time.Time) {
	l.unlogged++
	if !l.last.IsZero() && now.Sub(l.last) < l.a.timing.logEvery {
		return
	}
	attrs := []any{slog.Any("carrier", l.a), slog.String("error", err.Error()),
		slog.Int("failures", l.unlogged), slog.Time("next_try", next), slog.Duration("retry_in", next.Sub(now))}
	if status != 0 {
		attrs = append(attrs, slog.Int("http_status", status))
	}
	l.a.log.Warn("ari: events websocket connection failed", attrs...)
	l.last, l.unlogged, l.reported = now, 0, true
}

// connected notes a connection after failures failed attempts: it is
// logged when a failure line was written since the last one, so every
// reported outage has its end.
func (l *ariEventsLog) connected(failures int) {
	if !l.reported {
		l.unlogged = 0
		return
	}
	l.a.log.Info("ari: events websocket connected", slog.Any("carrier", l.a), slog.Int("failures", failures))
	l.unlogged, l.reported = 0, false
}

// ariEventsCause says why an attempt to open the events websocket failed,
// in words an organization may read (no URL, resolved address or
// credentials): Asterisk's answer to the handshake when it gave one, else
// TransportCause's words, else "the connection failed".
func ariEventsCause(err error, status int) string {
	if status != 0 {
		return fmt.Sprintf("Asterisk answered %d (%s) to the websocket handshake", status, http.StatusText(status))
	}
	if c := TransportCause(err); c != "" {
		return c
	}
	return "the connection failed"
}

// noEventsError is the refusal of a call while the events websocket is
// down: without it the call could not be followed, and Asterisk hangs up
// an answered call whose application has no websocket. It is Unavailable,
// retried after timing.eventsRetry, and says what happened: "the events
// websocket connection to Asterisk at 10.0.0.5:8088 cannot be made
// (connection refused)".
func (a *ari) noEventsError() error {
	a.mu.Lock()
	cause := a.evCause
	a.mu.Unlock()
	msg := "the events websocket connection to Asterisk at " + a.hostPort
	if cause == "" {
		msg += " is not made yet"
	} else {
		msg += " cannot be made (" + cause + ")"
	}
	return &Error{Kind: Unavailable, Message: msg, RetryAfter: a.timing.eventsRetry}
}

// hostPort returns u's host and port (the scheme's default port when it
// names none): never its user info.
func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// withoutUser returns u as a string without its user info.
func withoutUser(u *url.URL) string {
	c := *u
	c.User = nil
	return c.String()
}
