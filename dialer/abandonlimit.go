package dialer

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/outdial/outdial/store"
)

// The abandonment limit (API.md 19): with the organization's abandonment
// policy enabled, a campaign whose abandoned rate over window_hours exceeds
// max_rate, once it has min_answered person-answered calls in the window,
// pauses itself, logging abandonment_limit with the figures.
//
// The rate is counted by the database (AbandonedRate: one range of the
// call_attempts_abandonment index) and only when a final status could have
// made it cross: a call that ended abandoned, which raises the rate. A call
// that ended in time lowers it, except when it brings the window to
// min_answered while the rate is above max_rate: so while the last count saw
// the rate above max_rate short of min_answered (runner.abandonWatch), calls
// that end in time are counted too. The rate also moves when old calls leave
// the window; that alone never pauses a campaign: the next abandoned call
// does, if the rate is still over.

// AbandonmentLimitEvent is the campaign log event of the pause.
const AbandonmentLimitEvent = "abandonment_limit"

// checkAbandonment decides, after a final status of runner r's campaign
// whose verdict is abandoned (true or false: a person answered), whether
// the campaign must pause for the abandonment limit, pauses it, and reports
// whether it did.
func (e *Engine) checkAbandonment(ctx context.Context, r *runner, abandoned bool, now time.Time) bool {
	if !abandoned && !r.abandonWatch.Load() {
		return false
	}
	c := r.campaign()
	if c == nil {
		return false
	}
	p, err := e.policy(ctx, c.OrganizationID)
	if err != nil {
		e.log.Warn("dialer: abandonment limit: compliance policy", slog.Int64("campaign_id", r.id), slog.String("error", err.Error()))
		return false
	}
	pol := p.Abandonment
	if !pol.Enabled {
		r.abandonWatch.Store(false)
		return false
	}
	ab, an, err := e.db.AbandonedRate(ctx, c.OrganizationID, r.id, now.Add(-time.Duration(pol.WindowHours)*time.Hour))
	if err != nil {
		e.log.Warn("dialer: abandonment limit: rate", slog.Int64("campaign_id", r.id), slog.String("error", err.Error()))
		return false
	}
	over, watch := overAbandonmentLimit(pol, ab, an)
	r.abandonWatch.Store(watch)
	if !over {
		return false
	}
	rate := float64(ab) / float64(an)
	paused, err := e.db.PauseCampaignFor(ctx, r.id, time.Time{}, AbandonmentLimitEvent,
		fmt.Sprintf("%d of the %d calls answered by a person in the last %d h were abandoned (%.1f%%, above the limit of %.1f%%); campaign paused",
			ab, an, pol.WindowHours, 100*rate, 100*pol.MaxRate),
		map[string]any{"abandoned_rate": rate, "abandoned": ab, "answered": an, "max_rate": pol.MaxRate,
			"min_answered": pol.MinAnswered, "window_hours": pol.WindowHours})
	if err != nil {
		e.log.Error("dialer: abandonment limit: pause", slog.Int64("campaign_id", r.id), slog.String("error", err.Error()))
		return false
	}
	if paused {
		r.halt()
		e.touched(r.id)
	}
	return paused
}

// overAbandonmentLimit applies policy pol to a window's abandoned and
// answered (by a person) calls: over when the window has min_answered
// calls and its rate exceeds max_rate (equal is within the limit); watch
// when the rate exceeds max_rate short of min_answered, so that a call
// ending in time may still make the window reach the limit.
func overAbandonmentLimit(pol store.AbandonmentPolicy, abandoned, answered int64) (over, watch bool) {
	if answered == 0 || float64(abandoned) <= pol.MaxRate*float64(answered) {
		return false, false
	}
	if answered < int64(pol.MinAnswered) {
		return false, true
	}
	return true, false
}
