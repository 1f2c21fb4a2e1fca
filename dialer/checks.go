package dialer

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/outdial/outdial/dialer/carrier"
	"github.com/outdial/outdial/store"
)

// The guard rails' checks right before a provider request (API.md 12): the
// suppression list as it is at that moment, the calling hours in the
// callee's zones, the recall hold of numbers whose calls were abandoned
// (API.md 19), the attempt cap across the organization's campaigns. What
// they saw is the attempt's evidence (12.5), stored in the transaction that
// records the attempt's placement, its hold, or its suppressed end.

// verdict is what the checks decided.
type verdict int

const (
	pass        verdict = iota // place the call
	suppressed                 // end the attempt: outcome suppressed
	heldHours                  // back to the queue until the calling hours open
	heldCap                    // back to the queue until the cap allows a call
	heldRecall                 // back to the queue until the abandoned call's recall hold ends
	checkFailed                // a check could not be made: back to the queue, retried (fail closed)
)

// Evidence is what the guard rails saw for one attempt (API.md 12.5).
type Evidence struct {
	CheckedAt         time.Time `json:"checked_at"`
	Suppression       string    `json:"suppression"` // clear | suppressed
	SuppressionID     *int64    `json:"suppression_id,omitempty"`
	SuppressionSource string    `json:"suppression_source,omitempty"`
	Timezones         []string  `json:"timezones"`
	TimezoneSource    string    `json:"timezone_source"`      // contact | number | campaign | none
	LocalTime         string    `json:"local_time,omitempty"` // RFC 3339 in the first zone
	CallingHours      string    `json:"calling_hours"`        // open | held | disabled
	AttemptCap        string    `json:"attempt_cap"`          // clear | held | disabled | not_checked
	AttemptsInWindow  *int      `json:"attempts_in_window,omitempty"`
	WindowHours       int       `json:"window_hours,omitempty"`
	MaxAttempts       int       `json:"max_attempts,omitempty"`
	// AbandonedRecall is the recall hold (API.md 19): clear | held |
	// disabled; AbandonedRecallUntil (held) is when it ends, the abandoned
	// call's answer + RecallAfterHours.
	AbandonedRecall      string     `json:"abandoned_recall"`
	AbandonedRecallUntil *time.Time `json:"abandoned_recall_until,omitempty"`
	RecallAfterHours     *int       `json:"recall_after_hours,omitempty"`
	PolicyVersion        int64      `json:"policy_version"`
}

func (ev *Evidence) json() []byte {
	b, _ := json.Marshal(ev)
	return b
}

// checked is the result of the checks for one attempt.
type checked struct {
	verdict  verdict
	ev       *Evidence
	hit      *store.SuppressionHit
	until    time.Time // heldHours, heldCap, heldRecall: when to look again (zero: when poked)
	reserved bool      // the cap recorded this call: release it if not sent
	err      error
}

// check runs the guard rails for attempt a of campaign c, for runner r. The
// caller holds c's organization's suppression gate for reading.
func (e *Engine) check(ctx context.Context, r *runner, c *store.Campaign, a *store.Attempt) checked {
	now := e.now()
	p, err := e.policy(ctx, c.OrganizationID)
	if err != nil {
		return checked{verdict: checkFailed, err: err}
	}
	ev := &Evidence{CheckedAt: now.UTC(), Suppression: "clear", PolicyVersion: p.Version,
		CallingHours: "disabled", AttemptCap: "disabled", AbandonedRecall: "disabled", Timezones: []string{}}
	hit, err := e.db.ActiveSuppression(ctx, c.OrganizationID, a.PhoneNumber, now)
	if err != nil {
		return checked{verdict: checkFailed, err: err}
	}
	if err := e.checkRecall(ctx, p.Abandonment, c.OrganizationID, a.PhoneNumber, now, ev); err != nil {
		return checked{verdict: checkFailed, err: err}
	}
	g := attemptGroup(r.groupOf(a.Timezone), a, r.loc())
	ev.Timezones, ev.TimezoneSource = append(ev.Timezones, g.names...), g.source
	if len(g.hours) > 0 {
		ev.LocalTime = now.In(g.hours[0]).Format(time.RFC3339)
	}
	// Every rule's state is recorded, also those an earlier rule made moot;
	// the cap, which counts by reserving, is only asked when the call is
	// otherwise allowed ("not_checked" before).
	hours := callingHours(p.CallingHours)
	if hours != nil {
		ev.CallingHours = "open"
		if !hoursOpen(hours, g, now) {
			ev.CallingHours = "held"
		}
	}
	if p.AttemptCap.Enabled {
		ev.AttemptCap, ev.WindowHours, ev.MaxAttempts = "not_checked", p.AttemptCap.WindowHours, p.AttemptCap.MaxAttempts
	}
	if hit != nil {
		ev.Suppression, ev.SuppressionID, ev.SuppressionSource = "suppressed", &hit.ID, hit.Source
		return checked{verdict: suppressed, ev: ev, hit: hit}
	}
	if ev.CallingHours == "held" {
		return checked{verdict: heldHours, ev: ev, until: nextCallable(r.window(), hours, g, now)}
	}
	if ev.AbandonedRecall == "held" {
		return checked{verdict: heldRecall, ev: ev, until: *ev.AbandonedRecallUntil}
	}
	if p.AttemptCap.Enabled {
		window := time.Duration(p.AttemptCap.WindowHours) * time.Hour
		cc, err := e.db.ReserveNumberCall(ctx, c.OrganizationID, a.PhoneNumber, a.ID, now, p.AttemptCap.MaxAttempts, window)
		if err != nil {
			return checked{verdict: checkFailed, err: err}
		}
		n := cc.InWindow
		ev.AttemptsInWindow, ev.AttemptCap = &n, "clear"
		if !cc.Allowed {
			ev.AttemptCap = "held"
			return checked{verdict: heldCap, ev: ev, until: cc.Until}
		}
		return checked{verdict: pass, ev: ev, reserved: true}
	}
	return checked{verdict: pass, ev: ev}
}

// groupOf returns the group of contact timezone tz as the runner last
// loaded it (nil when unknown).
func (r *runner) groupOf(tz string) *zoneGroup {
	r.gmu.RLock()
	defer r.gmu.RUnlock()
	if g := r.groups[tz]; g != nil {
		return g
	}
	return groupFor(tz, nil, r.campaignLocLocked(), "")
}

func (r *runner) loc() *time.Location {
	r.gmu.RLock()
	defer r.gmu.RUnlock()
	return r.campaignLocLocked()
}

func (r *runner) campaignLocLocked() *time.Location {
	if r.campaignLoc == nil {
		return time.UTC
	}
	return r.campaignLoc
}

func (r *runner) window() *window {
	r.gmu.RLock()
	defer r.gmu.RUnlock()
	return r.win
}

// suppress ends attempt a, whose number is on the suppression list, with
// outcome suppressed and its evidence, and logs contacts_suppressed
// (aggregated per minute, with a count).
func (e *Engine) suppress(ctx context.Context, a *store.Attempt, ck checked) {
	e.aggregateLog(ctx, a.CampaignID, store.LogInfo, "contacts_suppressed",
		"contacts on the suppression list were not called", map[string]any{"last_suppression_id": ck.hit.ID, "last_source": ck.hit.Source})
	e.finishWith(ctx, a.CampaignID, a.ID, carrier.Status{Final: true, Outcome: store.OutcomeSuppressed, Raw: "suppressed"},
		"the number is on the suppression list", fromService, ck.ev.json())
}

// held puts back an attempt the guard rails did not let through, or ends it
// when its number is suppressed.
func (e *Engine) held(ctx context.Context, r *runner, a *store.Attempt, ck checked) {
	switch ck.verdict {
	case suppressed:
		e.suppress(ctx, a, ck)
	case heldHours, heldCap, heldRecall:
		// Due again when the hours open, the cap allows a call or the
		// recall hold ends: the
		// runner does not claim it before, so a hold costs one claim.
		// Unknown (zero): due as it was; its group is closed in the
		// runner until a poke changes that.
		due := ck.until
		if due.IsZero() {
			due = a.DueAt
		}
		r.hold.guardHeld(ck.verdict, due)
		e.requeueWith(ctx, r, a, due, ck.ev.json())
	default:
		// Fail closed: not placed, retried after a back-off.
		until := r.hold.transient(e.now(), holdChecks)
		e.requeue(ctx, r, a, a.DueAt)
		e.aggregateLog(ctx, a.CampaignID, store.LogWarning, "compliance_check_failed",
			"the guard rails could not be checked; calls wait and are retried shortly",
			map[string]any{"error": ck.err.Error(), "retry_at": until.UTC().Format(time.RFC3339)})
	}
}

// checkRecall records in ev whether the recall hold of policy pol holds
// number of org at now: held while the newest abandoned call to it was
// answered less than recall_after_hours ago (API.md 19). One search of a
// primary key, made only when the policy is enabled.
func (e *Engine) checkRecall(ctx context.Context, pol store.AbandonmentPolicy, org int64, number string, now time.Time, ev *Evidence) error {
	if !pol.Enabled {
		return nil
	}
	hours := pol.RecallAfterHours
	ev.AbandonedRecall, ev.RecallAfterHours = "clear", &hours
	answered, found, err := e.db.LastAbandonedAnswer(ctx, org, number, now)
	if err != nil || !found {
		return err
	}
	if until := recallUntil(answered, hours); until.After(now) {
		u := until.UTC()
		ev.AbandonedRecall, ev.AbandonedRecallUntil = "held", &u
	}
	return nil
}

// recallUntil is when the recall hold of a call abandoned after an answer
// at answered ends.
func recallUntil(answered time.Time, hours int) time.Time {
	return answered.Add(time.Duration(hours) * time.Hour)
}

// releaseCap forgets the attempt cap's record of attempt a of campaign c,
// which the provider did not place.
func (e *Engine) releaseCap(ctx context.Context, c *store.Campaign, a *store.Attempt) {
	if err := e.db.ReleaseNumberCall(ctx, c.OrganizationID, a.PhoneNumber, a.ID); err != nil {
		// Kept: the number's count is one too high for a window, the safe
		// side of a cap.
		e.log.Warn("dialer: release attempt cap", slog.Int64("attempt_id", a.ID), slog.String("error", err.Error()))
	}
}
