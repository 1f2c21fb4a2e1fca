package dialer

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/outdial/outdial/dialer/carrier"
	"github.com/outdial/outdial/store"
)

// Why is nothing dialing (API.md 11): the diagnosis of a campaign, computed
// from the engine's state (slots in use, the pacing bucket, the provider's
// back-off, the last placement) and the queue as it is now.

// Diagnosis codes, most important first.
const (
	ReasonNotRunning     = "not_running"
	ReasonAllFinal       = "all_final"
	ReasonNoCallerID     = "no_caller_id"
	ReasonProviderBack   = "provider_backoff"
	ReasonWindowClosed   = "calling_window_closed"
	ReasonCallingHours   = "calling_hours"
	ReasonAttemptCap     = "attempt_cap"
	ReasonRecall         = "abandoned_recall"
	ReasonMaxConcurrency = "max_concurrency"
	ReasonOrgConcurrency = "org_concurrency"
	ReasonRateLimit      = "rate_limit"
	ReasonRetries        = "waiting_for_retries"
)

var reasonOrder = []string{ReasonNotRunning, ReasonAllFinal, ReasonNoCallerID, ReasonProviderBack, ReasonWindowClosed,
	ReasonCallingHours, ReasonAttemptCap, ReasonRecall, ReasonMaxConcurrency, ReasonOrgConcurrency, ReasonRateLimit, ReasonRetries}

// recentlyDialing is how long after a placement a campaign counts as
// dialing.
const recentlyDialing = 5 * time.Second

// Reason is one thing holding a campaign's calls back.
type Reason struct {
	Code    string
	Message string
	Count   *int
	Until   *time.Time
}

// Diagnosis is the answer of GET /campaign/{id}/diagnosis.
type Diagnosis struct {
	CampaignID     int64
	State          string
	Dialing        bool
	InFlight       int
	MaxConcurrency int
	ReadyContacts  int
	Reasons        []Reason
	// AbandonedRate24h is the campaign's and its organization's
	// abandoned_rate_24h (API.md 19).
	AbandonedRate24h AbandonedRates
}

// reasons collects reasons by code, summing counts and keeping the
// earliest until.
type reasons map[string]*Reason

func (rs reasons) add(code, msg string, count int, until time.Time) {
	r := rs[code]
	if r == nil {
		r = &Reason{Code: code, Message: msg}
		rs[code] = r
	}
	if count > 0 {
		n := count
		if r.Count != nil {
			n += *r.Count
		}
		r.Count = &n
	}
	if !until.IsZero() && (r.Until == nil || until.Before(*r.Until)) {
		u := until.UTC()
		r.Until = &u
	}
}

func (rs reasons) sorted() []Reason {
	out := make([]Reason, 0, len(rs))
	for _, code := range reasonOrder {
		if r := rs[code]; r != nil {
			out = append(out, *r)
		}
	}
	return out
}

// Diagnose explains what holds campaign id of organization org back:
// ENOTFOUND when org has no such campaign.
func (e *Engine) Diagnose(ctx context.Context, org, id int64) (*Diagnosis, error) {
	c, err := e.db.GetCampaign(ctx, org, id)
	if err != nil {
		return nil, err
	}
	now := e.now()
	d := &Diagnosis{CampaignID: c.ID, State: c.State, MaxConcurrency: c.MaxConcurrency}
	cs := e.countedCampaign(c.ID)
	if cs == nil {
		// Not dialled by this process yet: its calls in flight are in the
		// database (a finished campaign's state is not kept in memory).
		n, err := e.db.CountActiveAttempts(ctx, c.ID)
		if err != nil {
			return nil, err
		}
		cs = &campaignState{}
		cs.active.Store(int64(n))
	}
	d.InFlight = cs.inUse()
	if d.AbandonedRate24h, err = e.AbandonedRates(ctx, org, c.ID); err != nil {
		return nil, err
	}
	rs := reasons{}
	final := c.TotalRows > 0 && c.ProcessedRows >= c.TotalRows
	if final {
		rs.add(ReasonAllFinal, "every contact has a final outcome", 0, time.Time{})
	}
	if c.State != store.StateRunning {
		msg, err := e.notRunning(ctx, c)
		if err != nil {
			return nil, err
		}
		rs.add(ReasonNotRunning, msg, 0, time.Time{})
		d.Reasons = rs.sorted()
		return d, nil
	}
	if err := e.diagnoseQueue(ctx, c, now, d, rs); err != nil {
		return nil, err
	}
	blocked := false
	if d.InFlight >= c.MaxConcurrency {
		rs.add(ReasonMaxConcurrency, fmt.Sprintf("the calls in flight (%d) have reached the campaign's max_concurrency", d.InFlight), 0, time.Time{})
		blocked = true
	}
	if cs.orgHeld.Load() && d.InFlight < c.MaxConcurrency {
		lim, _ := e.orgLimit(ctx, c.OrganizationID)
		rs.add(ReasonOrgConcurrency, fmt.Sprintf("the organization's calls in flight have reached its max_concurrent_calls (%d); "+
			"the campaign gets its share as they end", lim), 0, time.Time{})
		blocked = true
	}
	if until, cause := e.limiter(c.TelephonyConfigurationID).blockedUntil(); now.Before(until) {
		rs.add(ReasonProviderBack, cause+"; the campaign waits before its next call", 0, until)
		blocked = true
	}
	if why, until := e.transientHold(c.ID, now); why != "" {
		// Not a code of its own in the contract: a short back-off of the
		// provider's side or ours, with its cause and end.
		rs.add(ReasonProviderBack, why+"; dialing retries at the time given", 0, until)
		blocked = true
	}
	if e.lacksCallerID(ctx, c) {
		rs.add(ReasonNoCallerID, "the telephony configuration has no active phone number to call from; add or reactivate one", 0, time.Time{})
		blocked = true
	}
	if until := cs.paceUntil(); d.ReadyContacts > 0 && now.Before(until) {
		rs.add(ReasonRateLimit, fmt.Sprintf("the rate limit (%g new calls per second) holds the next call", c.RateLimitPerSecond), 0, until)
		blocked = true
	}
	d.Dialing = cs.placing.Load() > 0 || now.Sub(cs.lastPlacedAt()) < recentlyDialing || (d.ReadyContacts > 0 && !blocked)
	d.Reasons = rs.sorted()
	return d, nil
}

// diagnoseQueue counts the campaign's contacts ready now and those the
// window, the calling hours, the attempt cap, the abandoned-call recall
// hold and retry delays hold.
func (e *Engine) diagnoseQueue(ctx context.Context, c *store.Campaign, now time.Time, d *Diagnosis, rs reasons) error {
	p, err := e.policy(ctx, c.OrganizationID)
	if err != nil {
		return err
	}
	win, hours := newWindow(c.ScheduleConfig), callingHours(p.CallingHours)
	groups := zoneGroups(c)
	stats, err := e.db.QueueStats(ctx, c.ID, now)
	if err != nil {
		return err
	}
	for _, q := range stats {
		g := groups[q.Timezone]
		if g == nil {
			g = groupFor(q.Timezone, nil, time.UTC, "")
		}
		switch {
		case q.CapHeld:
			rs.add(ReasonAttemptCap, "these contacts were called as often as the attempt cap allows in its window; they wait until it allows another call", q.Count, q.NextDue)
		case q.RecallHeld:
			rs.add(ReasonRecall, "a call to these contacts' numbers was abandoned (a person answered and heard nothing); "+
				"they are not called again until the abandonment policy's recall_after_hours have passed since that answer", q.Count, q.NextDue)
		case q.HoursHeld:
			rs.add(ReasonCallingHours, "outside the organization's calling hours in these callees' time zones", q.Count, q.NextDue)
		case !q.Due:
			rs.add(ReasonRetries, "these contacts wait for their retry delay", q.Count, q.NextDue)
		case !win.open(now, g.winLoc):
			rs.add(ReasonWindowClosed, "the campaign's calling window (schedule_config) is closed for these contacts", q.Count, win.nextOpen(now, g.winLoc))
		case !hoursOpen(hours, g, now):
			if err := e.hoursReason(ctx, c, g, hours, now, q.Count, rs); err != nil {
				return err
			}
		default:
			d.ReadyContacts += q.Count
		}
	}
	return nil
}

// hoursReason adds the calling_hours reason of count contacts of group g:
// until when their hours open, or, when their time zone is unknown, which
// rows they are.
func (e *Engine) hoursReason(ctx context.Context, c *store.Campaign, g *zoneGroup, hours *window, now time.Time, count int, rs reasons) error {
	if len(g.hours) > 0 {
		rs.add(ReasonCallingHours, "outside the organization's calling hours in these callees' time zones", count, nextCallable(nil, hours, g, now))
		return nil
	}
	rows, err := e.db.RowsWithTimezone(ctx, c.ID, g.key, 10)
	if err != nil {
		return err
	}
	list := make([]string, len(rows))
	for i, r := range rows {
		list[i] = strconv.FormatInt(r, 10)
	}
	msg := "the callee's time zone is unknown (no timezone column, a number whose numbering plan gives none, and no schedule_config.timezone), so calling hours cannot be checked; contact rows " +
		strings.Join(list, ", ")
	if count > len(rows) {
		msg += fmt.Sprintf(" and %d more", count-len(rows))
	}
	rs.add(ReasonCallingHours, msg, count, time.Time{})
	// Merged with contacts of known zones, whichever group came first (the
	// queued part is read before the contacts not queued yet), the message
	// names the rows of unknown zone: those are what an operator can fix.
	rs[ReasonCallingHours].Message = msg
	return nil
}

// notRunning says why campaign c, which is not running, is not: its state,
// and for a pause, who or what paused it (the newest pause event).
func (e *Engine) notRunning(ctx context.Context, c *store.Campaign) (string, error) {
	switch c.State {
	case store.StateDraft:
		return "the campaign is a draft: start it", nil
	case store.StateCompleted:
		return "the campaign completed: every contact has a final outcome", nil
	case store.StateCancelled:
		return "the campaign was cancelled", nil
	}
	logs, err := e.db.RecentLogs(ctx, c.ID)
	if err != nil {
		return "", err
	}
	for _, l := range slices.Backward(logs) {
		switch l.Event {
		case "circuit_breaker_tripped":
			return "paused by the circuit breaker: too many calls failed; resume when the cause is fixed", nil
		case AbandonmentLimitEvent:
			return "paused by the abandonment limit: more of the calls answered by a person were abandoned than the compliance policy's max_rate allows " +
				"(the abandonment_limit log entry has the figures); resume when the voice agents keep up", nil
		case "provider_auth_failed":
			return "paused because the provider refused the configuration's credentials (401/403); fix them and resume", nil
		case "campaign_paused":
			return "paused by a user; resume it to dial", nil
		case "campaign_failed":
			return "the campaign failed: " + l.Message, nil
		}
	}
	return "the campaign is " + c.State, nil
}

// lacksCallerID reports whether c's configuration has no active number to
// call from (ARI needs none).
func (e *Engine) lacksCallerID(ctx context.Context, c *store.Campaign) bool {
	_, spec, err := e.carrierFor(ctx, c.OrganizationID, c.TelephonyConfigurationID)
	if err != nil || spec.Provider == carrier.ARI {
		return false
	}
	n, err := e.db.CountCallerIDs(ctx, c.TelephonyConfigurationID)
	return err == nil && n == 0
}

// transientHold returns the cause and end of the transient hold of
// campaign id's runner, if one is in force.
func (e *Engine) transientHold(id int64, now time.Time) (string, time.Time) {
	e.mu.Lock()
	r := e.runners[id]
	e.mu.Unlock()
	if r == nil {
		return "", time.Time{}
	}
	return r.hold.transientUntil(now)
}
