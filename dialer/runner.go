package dialer

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/outdial/outdial/store"
)

// runner dials one running campaign. It sleeps until something can change
// what it may do (a poke from a status, a PATCH, start/resume; a retry or
// window timer; the next pacing token; a deadline) and never polls.
type runner struct {
	e  *Engine
	id int64

	wake   chan struct{}
	reload atomic.Bool
	done   atomic.Bool

	// mu guards halted: a dispatch checks it right before its provider
	// request, so once Halt returns no new call of the campaign starts.
	mu     sync.RWMutex
	halted bool

	// active counts the campaign's attempts dialing or in flight. It is the
	// engine's counter of the campaign, shared by the runners a campaign has
	// over time, so a dispatch of an earlier runner still settles it.
	active *atomic.Int64

	// Owned by the run goroutine.
	c            *store.Campaign
	win          *window
	locs         map[string]*time.Location // contact timezone → location ("" = campaign's)
	tzs          []string
	pace         bucket
	windowClosed bool

	nextDeadline time.Time // guarded by mu

	bmu sync.Mutex // guards brk (statuses arrive on other goroutines)
	brk breaker

	cmu     sync.Mutex // guards cshared, the campaign as status handlers see it
	cshared *store.Campaign
}

func newRunner(e *Engine, id int64, active *atomic.Int64) *runner {
	r := &runner{e: e, id: id, wake: make(chan struct{}, 1), active: active}
	r.reload.Store(true)
	return r
}

func (r *runner) isDone() bool { return r.done.Load() }

// poke wakes the run loop; reload asks it to re-read the campaign first.
func (r *runner) poke(reload bool) {
	if reload {
		r.reload.Store(true)
	}
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// halt stops new dispatches at once and ends the run loop.
func (r *runner) halt() {
	r.mu.Lock()
	r.halted = true
	r.mu.Unlock()
	r.poke(true)
}

func (r *runner) isHalted() bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.halted
}

func (r *runner) run(ctx context.Context) {
	defer r.done.Store(true)
	if d, err := r.e.db.NextDeadline(ctx, r.id); err == nil {
		r.setDeadline(d)
	}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		next, finished := r.step(ctx)
		if finished {
			return
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		var tc <-chan time.Time
		if !next.IsZero() {
			d := next.Sub(r.e.now())
			if d < 0 {
				d = 0
			}
			timer.Reset(d)
			tc = timer.C
		}
		select {
		case <-ctx.Done():
			return
		case <-r.wake:
		case <-tc:
		}
	}
}

// load re-reads the campaign and rebuilds its schedule; it reports false when
// the campaign is not running.
func (r *runner) load(ctx context.Context) bool {
	c, err := r.e.db.CampaignByID(ctx, r.id)
	if err != nil {
		r.e.log.Error("dialer: load campaign", slog.Int64("campaign_id", r.id), slog.String("error", err.Error()))
		return false
	}
	r.c = c
	r.cmu.Lock()
	r.cshared = c
	r.cmu.Unlock()
	if c.State != store.StateRunning {
		return false
	}
	r.win = newWindow(c.ScheduleConfig)
	tzs, err := r.e.db.CampaignTimezones(ctx, r.id)
	if err != nil {
		r.e.log.Error("dialer: campaign timezones", slog.Int64("campaign_id", r.id), slog.String("error", err.Error()))
		return false
	}
	r.tzs, r.locs = tzs, map[string]*time.Location{}
	campaignLoc := time.UTC
	if c.ScheduleConfig != nil && c.ScheduleConfig.Timezone != "" {
		if l, err := time.LoadLocation(c.ScheduleConfig.Timezone); err == nil {
			campaignLoc = l
		}
	}
	for _, tz := range tzs {
		r.locs[tz] = campaignLoc
		if tz != "" {
			if l, err := time.LoadLocation(tz); err == nil {
				r.locs[tz] = l
			}
		}
	}
	return true
}

// step does what can be done now and returns when to look again (zero:
// only when poked) and whether the runner is finished.
func (r *runner) step(ctx context.Context) (time.Time, bool) {
	if r.isHalted() {
		return time.Time{}, true
	}
	if r.reload.Swap(false) && !r.load(ctx) {
		return time.Time{}, true
	}
	now := r.e.now()
	if d := r.deadline(); !d.IsZero() && !now.Before(d) {
		r.expire(ctx, now)
	}
	free := r.c.MaxConcurrency - int(r.active.Load())
	if free <= 0 {
		return r.deadline(), false
	}
	if until := r.e.limiter(r.c.TelephonyConfigurationID).blockedUntil(); now.Before(until) {
		return until, false
	}
	open := r.openTimezones(now)
	if len(open) > 0 {
		n := r.pace.take(now, r.c.RateLimitPerSecond, free)
		if n == 0 {
			return earliest(r.pace.next(), r.deadline()), false
		}
		claimed, err := r.e.db.ClaimAttempts(ctx, r.id, now, open, n)
		if err != nil {
			r.e.log.Error("dialer: claim", slog.Int64("campaign_id", r.id), slog.String("error", err.Error()))
			r.pace.refund(n, r.c.RateLimitPerSecond)
			return now.Add(time.Second), false
		}
		r.pace.refund(n-len(claimed), r.c.RateLimitPerSecond)
		if len(claimed) > 0 {
			r.windowOpened(ctx)
			c := r.c
			for _, a := range claimed {
				r.active.Add(1)
				r.e.wg.Add(1)
				go r.e.dispatch(r, c, a)
			}
			if len(claimed) == n {
				return earliest(r.pace.next(), r.deadline()), false
			}
		}
	}
	return r.idle(ctx, now)
}

// openTimezones returns the contact timezones whose calling window is open.
func (r *runner) openTimezones(now time.Time) []string {
	if r.win == nil {
		return r.tzs
	}
	open := make([]string, 0, len(r.tzs))
	for _, tz := range r.tzs {
		if r.win.open(now, r.locs[tz]) {
			open = append(open, tz)
		}
	}
	return open
}

// idle runs when nothing can be claimed now: it completes the campaign when
// nothing is left, else works out when the next attempt becomes due or its
// window opens, logging window changes.
func (r *runner) idle(ctx context.Context, now time.Time) (time.Time, bool) {
	queued, err := r.e.db.QueuedByTimezone(ctx, r.id)
	if err != nil {
		r.e.log.Error("dialer: queued attempts", slog.Int64("campaign_id", r.id), slog.String("error", err.Error()))
		return now.Add(time.Second), false
	}
	if len(queued) == 0 {
		if r.active.Load() <= 0 {
			done, err := r.e.db.CompleteIfDone(ctx, r.id)
			if err != nil {
				r.e.log.Error("dialer: complete", slog.Int64("campaign_id", r.id), slog.String("error", err.Error()))
			}
			if done || err == nil {
				return time.Time{}, true
			}
		}
		return r.deadline(), false
	}
	var next time.Time
	waitingForWindow := false
	for tz, due := range queued {
		at := due
		if at.Before(now) {
			at = now
		}
		if r.win != nil {
			loc := r.locs[tz]
			if loc == nil {
				loc = time.UTC
			}
			open := r.win.nextOpen(at, loc)
			if open.IsZero() {
				continue // no slot at all: these contacts never become dialable
			}
			if open.After(at) && !due.After(now) {
				waitingForWindow = true
			}
			at = open
		}
		if next.IsZero() || at.Before(next) {
			next = at
		}
	}
	if waitingForWindow {
		r.windowClosedAt(ctx, next)
	}
	return earliest(next, r.deadline()), false
}

func (r *runner) windowClosedAt(ctx context.Context, next time.Time) {
	if r.windowClosed {
		return
	}
	r.windowClosed = true
	var at *time.Time
	details := map[string]any{}
	if !next.IsZero() {
		at = &next
		details["next_dial_at"] = next.UTC().Format(time.RFC3339)
	}
	if err := r.e.db.SetNextDialAt(ctx, r.id, at); err != nil {
		r.e.log.Error("dialer: next dial time", slog.String("error", err.Error()))
	}
	r.e.addLog(ctx, r.id, store.LogInfo, "schedule_window_closed", "outside the calling window; dialing resumes when it opens", details)
}

func (r *runner) windowOpened(ctx context.Context) {
	if !r.windowClosed {
		return
	}
	r.windowClosed = false
	if err := r.e.db.SetNextDialAt(ctx, r.id, nil); err != nil {
		r.e.log.Error("dialer: next dial time", slog.String("error", err.Error()))
	}
	r.e.addLog(ctx, r.id, store.LogInfo, "schedule_window_opened", "the calling window opened; dialing resumed", nil)
}

func earliest(a, b time.Time) time.Time {
	switch {
	case a.IsZero():
		return b
	case b.IsZero() || a.Before(b):
		return a
	}
	return b
}

// deadline returns the earliest known deadline of an in-flight attempt.
func (r *runner) deadline() time.Time {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.nextDeadline
}

func (r *runner) setDeadline(d time.Time) {
	r.mu.Lock()
	r.nextDeadline = d
	r.mu.Unlock()
}

// campaign returns the runner's last loaded campaign (read by status
// handlers on other goroutines).
func (r *runner) campaign() *store.Campaign {
	r.cmu.Lock()
	defer r.cmu.Unlock()
	return r.cshared
}
