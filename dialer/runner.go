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
	// recount asks the run loop to count the campaign's slots again from
	// the database (statuses applied by other nodes; lease.go).
	recount atomic.Bool
	// lease is the campaign's lease, taken when the run loop starts
	// (lease.go); it fences the runner's claims and placements.
	lease store.Lease
	done  atomic.Bool
	// halted is set by halt and when the runner stops by itself: its
	// dispatches that have not asked the provider yet put their attempts
	// back instead (checked under cs.gate, see campaignState).
	halted atomic.Bool

	// cs is the engine's state of the campaign (active count, gate),
	// shared by the runners the campaign has over time.
	cs *campaignState

	mu sync.RWMutex // guards nextDeadline

	// Owned by the run goroutine; win, groups and campaignLoc are also read
	// by dispatches (checks.go), under gmu.
	gmu         sync.RWMutex
	c           *store.Campaign
	win         *window
	groups      map[string]*zoneGroup // contact timezone → its clocks (zones.go)
	tzs         []string
	campaignLoc *time.Location
	policy      *store.VersionedPolicy // the organization's, at the last load
	orgLimit    int                    // the organization's max_concurrent_calls at the last load (0: none)
	hours       *window                // its calling hours; nil: disabled
	pace        bucket
	// waiting is the event logged while the campaign waits for its window
	// or calling hours ("" when not waiting); nextDial is the next_dial_at
	// recorded meanwhile.
	waiting  string
	nextDial time.Time

	nextDeadline time.Time // guarded by mu

	bmu sync.Mutex // guards brk (statuses arrive on other goroutines)
	// abandonWatch: the last count of the abandonment limit saw the rate
	// above max_rate short of min_answered (abandonlimit.go).
	abandonWatch atomic.Bool
	brk          breaker

	cmu     sync.Mutex // guards cshared, the campaign as status handlers see it
	cshared *store.Campaign

	hold hold // set by dispatches that found the campaign cannot dial (hold.go)
}

func newRunner(e *Engine, id int64, cs *campaignState) *runner {
	r := &runner{e: e, id: id, wake: make(chan struct{}, 1), cs: cs}
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

// halt stops new dispatches and ends the run loop. Requests already under
// way are not waited for (Engine.Halt does that).
func (r *runner) halt() {
	r.halted.Store(true)
	r.poke(true)
}

func (r *runner) isHalted() bool { return r.halted.Load() }

func (r *runner) run(ctx context.Context) {
	l, ok := r.e.acquire(ctx, r.id)
	for !ok {
		// Another node dials the campaign (or the lease could not be
		// taken: the scan of orphaned campaigns tries again). A wake that
		// came meanwhile (the other node changed the campaign, or handed
		// its lease back) keeps the runner: exit does not remove it then,
		// so it tries again rather than stay in the engine's map, never
		// running, where every later wake would only poke it.
		if r.exit(ctx) {
			return
		}
		l, ok = r.e.acquire(ctx, r.id)
	}
	r.lease = l
	// The campaign's slots as the database has them: a count this node
	// kept while another node dialed it (statuses it applied) means
	// nothing now.
	if err := r.e.recount(ctx, r.id, r.cs); err != nil {
		r.recount.Store(true)
	}
	if d, err := r.e.db.NextDeadline(ctx, r.id); err == nil {
		r.setDeadline(d)
	}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		next, finished := r.step(ctx)
		next = earliest(next, r.cs.refused.next())
		if finished {
			if r.exit(ctx) {
				r.e.watchDeadline(ctx, r.id)
				r.e.releaseIfIdle(ctx, r.id)
				return
			}
			continue
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
			r.exit(ctx)
			return
		case <-r.wake:
		case <-tc:
		}
	}
}

// exit ends the runner unless it was woken after it decided to stop (a
// resume racing a reload that saw the campaign paused): Wake pokes a runner
// that is not done yet under the engine's lock, so checking for a poke under
// the same lock loses none. A runner that ends halts its dispatches that
// have not asked the provider yet.
func (r *runner) exit(ctx context.Context) bool {
	e := r.e
	e.mu.Lock()
	defer e.mu.Unlock()
	if !r.isHalted() && ctx.Err() == nil {
		select {
		case <-r.wake:
			r.reload.Store(true)
			return false
		default:
		}
	}
	r.halted.Store(true)
	r.done.Store(true)
	if e.runners[r.id] == r {
		delete(e.runners, r.id)
		e.forgetCampaignLocked(r.id)
	}
	return true
}

// load re-reads the campaign and rebuilds its schedule; it reports whether
// the campaign is running. An error (the database busy) is logged and
// returned.
func (r *runner) load(ctx context.Context) (bool, error) {
	c, err := r.e.db.CampaignByID(ctx, r.id)
	if err != nil {
		if ctx.Err() == nil { // not the node stopping
			r.e.log.Error("dialer: load campaign", slog.Int64("campaign_id", r.id), slog.String("error", err.Error()))
		}
		return false, err
	}
	r.c = c
	r.cmu.Lock()
	r.cshared = c
	r.cmu.Unlock()
	if c.State != store.StateRunning {
		return false, nil
	}
	// The organization's limit and policy are read before anything is
	// claimed: a runner that cannot read them claims nothing (the guard
	// rails fail closed).
	lim, err := r.e.orgLimit(ctx, c.OrganizationID)
	if err != nil {
		r.e.log.Error("dialer: organization limits", slog.Int64("campaign_id", r.id), slog.String("error", err.Error()))
		return false, err
	}
	r.orgLimit = lim
	p, err := r.e.policy(ctx, c.OrganizationID)
	if err != nil {
		r.e.log.Error("dialer: compliance policy", slog.Int64("campaign_id", r.id), slog.String("error", err.Error()))
		return false, err
	}
	loc := time.UTC
	if c.ScheduleConfig != nil && c.ScheduleConfig.Timezone != "" {
		if l, err := time.LoadLocation(c.ScheduleConfig.Timezone); err == nil {
			loc = l
		}
	}
	r.gmu.Lock()
	r.policy, r.hours = p, callingHours(p.CallingHours)
	r.win = newWindow(c.ScheduleConfig)
	r.tzs, r.groups, r.campaignLoc = c.Timezones, zoneGroups(c), loc
	r.gmu.Unlock()
	return true, nil
}

// step does what can be done now and returns when to look again (zero:
// only when poked) and whether the runner is finished.
func (r *runner) step(ctx context.Context) (time.Time, bool) {
	if r.isHalted() {
		return time.Time{}, true
	}
	r.retryRefused(ctx, r.e.now())
	if r.reload.Swap(false) {
		r.hold.poked()
		running, err := r.load(ctx)
		switch {
		case err != nil && (ctx.Err() != nil || store.ErrorCode(err) == store.ENOTFOUND):
			return time.Time{}, true
		case err != nil:
			// A transient error must not leave a running campaign
			// without a runner: look again in a second.
			r.reload.Store(true)
			return r.e.now().Add(time.Second), false
		case !running:
			// Paused, cancelled or over: no new calls, but the calls in
			// flight past their deadline are still reconciled.
			if d, err := r.e.db.NextDeadline(ctx, r.id); err == nil && !d.IsZero() && !r.e.now().Before(d) {
				r.expire(ctx, r.e.now())
			}
			return time.Time{}, true
		}
	}
	if r.recount.Swap(false) {
		if err := r.e.recount(ctx, r.id, r.cs); err != nil {
			r.recount.Store(true)
			return r.e.now().Add(time.Second), false
		}
	}
	now := r.e.now()
	if d := r.deadline(); !d.IsZero() && !now.Before(d) {
		r.expire(ctx, now)
	}
	free := r.c.MaxConcurrency - r.cs.inUse()
	if free <= 0 {
		return r.deadline(), false
	}
	if !r.e.leaseValid(r.lease) {
		// Nothing is claimed that could not be sent: the next renewal
		// pokes the runner (or finds the lease lost and halts it).
		return earliest(now.Add(r.e.leaseTTL()/3), r.deadline()), false
	}
	if until, _ := r.e.limiter(r.c.TelephonyConfigurationID).blockedUntil(); now.Before(until) {
		return until, false
	}
	if until, held := r.hold.held(now); held {
		return earliest(until, r.deadline()), false
	}
	open := r.openTimezones(now)
	if len(open) > 0 {
		n := r.pace.take(now, r.c.RateLimitPerSecond, free)
		r.cs.paced(r.pace.next())
		if n == 0 {
			return earliest(r.pace.next(), r.deadline()), false
		}
		deadline := now.Add(r.e.callDeadline())
		claimed, orgHeld, err := r.e.db.ClaimAttemptsShared(ctx, r.lease, now, deadline, open, n, r.shareOf())
		if r.e.leaseLost(r.id, err) {
			r.pace.refund(n, r.c.RateLimitPerSecond)
			return time.Time{}, true
		}
		if err != nil {
			r.e.log.Error("dialer: claim", slog.Int64("campaign_id", r.id), slog.String("error", err.Error()))
			r.pace.refund(n, r.c.RateLimitPerSecond)
			return now.Add(time.Second), false
		}
		r.e.writesWork()
		r.pace.refund(n-len(claimed), r.c.RateLimitPerSecond)
		r.cs.paced(r.pace.next())
		if len(claimed) > 0 {
			r.windowOpened(ctx)
			c := r.c
			r.cs.take(len(claimed))
			r.noteDeadline(deadline)
			for _, a := range claimed {
				r.e.wg.Add(1)
				go r.e.dispatch(r, c, a)
			}
			if len(claimed) == n {
				r.setOrgHeld(false)
				return earliest(r.pace.next(), r.deadline()), false
			}
		}
		r.setOrgHeld(orgHeld)
		if orgHeld {
			// The organization's other calls hold its slots: claim again
			// when one ends here, or soon (one ending elsewhere).
			return earliest(r.e.orgRetry(now), r.deadline()), false
		}
	}
	return r.idle(ctx, now)
}

// idle runs when nothing can be claimed now: it completes the campaign when
// nothing is left, else works out when the next attempt becomes due or its
// window opens, logging window changes.
func (r *runner) idle(ctx context.Context, now time.Time) (time.Time, bool) {
	queued, err := r.e.db.QueuedByTimezone(ctx, r.id, r.tzs)
	if err != nil {
		r.e.log.Error("dialer: queued attempts", slog.Int64("campaign_id", r.id), slog.String("error", err.Error()))
		return now.Add(time.Second), false
	}
	if len(queued) == 0 {
		if r.cs.inUse() <= 0 {
			done, err := r.e.db.CompleteIfDone(ctx, r.id)
			if err != nil {
				r.e.log.Error("dialer: complete", slog.Int64("campaign_id", r.id), slog.String("error", err.Error()))
			}
			if done {
				r.e.touched(r.id)
			}
			if done || err == nil {
				return time.Time{}, true
			}
		}
		return r.deadline(), false
	}
	var next time.Time
	waitingFor := ""
	for tz, due := range queued {
		at := due
		if at.Before(now) {
			at = now
		}
		g := r.groups[tz]
		if g == nil {
			g = groupFor(tz, nil, r.campaignLoc, "")
		}
		open := nextCallable(r.win, r.hours, g, at)
		if open.IsZero() {
			continue // never callable as things stand: a poke (PATCH, policy) looks again
		}
		if open.After(at) && !due.After(now) && waitingFor != eventWindowClosed {
			// The window wins when both are closed: it is the campaign's own.
			waitingFor = eventHoursClosed
			if !r.win.open(at, g.winLoc) {
				waitingFor = eventWindowClosed
			}
		}
		if next.IsZero() || open.Before(next) {
			next = open
		}
	}
	if waitingFor == "" && next.After(now) {
		// Nothing is due: when the next to fall due is an attempt the
		// check put back for the calling hours or the cap, the campaign
		// waits for them (next_dial_at).
		if hu := r.hold.guardUntil(heldHours, now); !hu.IsZero() && !hu.After(next) {
			waitingFor = eventHoursClosed
		} else if cu := r.hold.guardUntil(heldCap, now); !cu.IsZero() && !cu.After(next) {
			waitingFor = eventCapReached
		}
	}
	if waitingFor != "" {
		r.waitingAt(ctx, waitingFor, next)
	}
	return earliest(next, r.deadline()), false
}

// Waiting for a window: the events logged when a campaign starts and stops
// waiting for its calling window or for the calling hours.
const (
	eventWindowClosed = "schedule_window_closed"
	eventHoursClosed  = "calling_hours_closed"
	eventCapReached   = "attempt_cap_reached"
)

var waitEvents = map[string]struct{ closed, openedEvent, opened string }{
	eventWindowClosed: {"outside the calling window; dialing resumes when it opens",
		"schedule_window_opened", "the calling window opened; dialing resumed"},
	eventHoursClosed: {"outside the organization's calling hours in the callees' time zones; dialing resumes when they open",
		"calling_hours_opened", "calling hours opened; dialing resumed"},
	eventCapReached: {"the contacts left were called as often as the attempt cap allows; dialing resumes when it allows another call",
		"attempt_cap_released", "the attempt cap allows calls again; dialing resumed"},
}

// waitingAt records that the campaign waits for its window or calling hours
// (event) until next: next_dial_at, and the event when it starts waiting.
// While it waits, a changed next (a PATCH of the schedule, a retry falling
// due in another slot) only moves next_dial_at.
func (r *runner) waitingAt(ctx context.Context, event string, next time.Time) {
	if r.waiting != "" && next.Equal(r.nextDial) {
		return
	}
	logIt := r.waiting == ""
	if logIt {
		r.waiting = event
	}
	r.nextDial = next
	var at *time.Time
	details := map[string]any{}
	if !next.IsZero() {
		at = &next
		details["next_dial_at"] = next.UTC().Format(time.RFC3339)
	}
	if err := r.e.db.SetNextDialAt(ctx, r.id, at); err != nil {
		r.e.log.Error("dialer: next dial time", slog.String("error", err.Error()))
	}
	r.e.touched(r.id)
	if logIt {
		r.e.addLog(ctx, r.id, store.LogInfo, event, waitEvents[event].closed, details)
	}
}

// windowOpened ends a wait: dialing resumed.
func (r *runner) windowOpened(ctx context.Context) {
	if r.waiting == "" {
		return
	}
	event := r.waiting
	r.waiting, r.nextDial = "", time.Time{}
	if err := r.e.db.SetNextDialAt(ctx, r.id, nil); err != nil {
		r.e.log.Error("dialer: next dial time", slog.String("error", err.Error()))
	}
	r.e.addLog(ctx, r.id, store.LogInfo, waitEvents[event].openedEvent, waitEvents[event].opened, nil)
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

func (r *runner) noteDeadline(d time.Time) {
	// Deadlines only grow over time for new calls, so the earliest pending
	// one is kept; the run loop re-reads it after expiring attempts.
	r.mu.Lock()
	if r.nextDeadline.IsZero() || d.Before(r.nextDeadline) {
		r.nextDeadline = d
	}
	r.mu.Unlock()
}
