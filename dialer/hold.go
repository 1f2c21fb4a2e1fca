package dialer

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/outdial/outdial/store"
)

// Holds: a campaign that cannot place calls for a reason that is not its
// contacts' (its configuration could not be loaded for a moment; its last
// caller id went away) stops claiming instead of ending attempts: the
// attempt that found out goes back to the queue untouched, and the runner
// claims nothing until the hold ends. No contact's outcome changes.
//
//   - transient: the configuration could not be read (a database error, a
//     carrier whose construction failed for a temporary reason). The runner
//     claims again after a back-off that doubles from holdFirst up to
//     holdMax and resets once a carrier is had.
//   - no caller id: the configuration has no active number. The runner
//     waits until a number is added or reactivated (CallerIDsChanged pokes
//     it), or callerIDRecheck passes, and logs caller_id_missing once until
//     a caller id is found again.

const (
	holdFirst       = time.Second
	holdMax         = 30 * time.Second
	callerIDRecheck = time.Minute
)

// errCannotDial wraps a carrier construction error that no retry cures (a
// provider this build does not know, credentials that cannot be read): the
// campaign fails.
var errCannotDial = errors.New("the telephony configuration cannot place calls")

// temporary is implemented by errors that say whether retrying may help.
type temporary interface{ Temporary() bool }

// carrierGone reports whether err, from carrierFor, means no call of the
// configuration can ever be placed: the configuration is gone, or no
// carrier can be built from it.
func carrierGone(err error) bool {
	return store.ErrorCode(err) == store.ENOTFOUND || errors.Is(err, errCannotDial)
}

// hold is a runner's hold; dispatches set it, the run loop reads it.
type hold struct {
	mu       sync.Mutex
	until    time.Time     // no claims before until (zero: not held)
	why      string        // the transient hold's cause (hold* constants)
	backoff  time.Duration // the next transient hold
	callerID bool          // held for want of a caller id
	logged   bool          // caller_id_missing logged for this absence
	// guarded is, per guard rail that put attempts back at their check
	// (heldHours, heldCap, heldRecall), the earliest time one of them falls
	// due (zero: none pending): what the campaign waits for when nothing
	// else is due.
	guarded [heldRecall + 1]time.Time
}

// guardHeld notes an attempt guard rail v put back until until.
func (h *hold) guardHeld(v verdict, until time.Time) {
	if v != heldHours && v != heldCap && v != heldRecall {
		return
	}
	h.mu.Lock()
	if h.guarded[v].IsZero() || until.Before(h.guarded[v]) {
		h.guarded[v] = until
	}
	h.mu.Unlock()
}

// guardUntil returns when the earliest attempt guard rail v put back falls
// due, or zero when none is pending after now.
func (h *hold) guardUntil(v verdict, now time.Time) time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.guarded[v].After(now) {
		h.guarded[v] = time.Time{}
	}
	return h.guarded[v]
}

// held reports whether the runner may not claim at now, and until when.
func (h *hold) held(now time.Time) (time.Time, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.until.IsZero() || !now.Before(h.until) {
		h.until, h.callerID = time.Time{}, false
		return time.Time{}, false
	}
	return h.until, true
}

// Causes of a transient hold, as the diagnosis words them.
const (
	holdCarrier     = "the telephony configuration could not be loaded"
	holdUnreachable = "the provider could not be reached"
	holdChecks      = "the guard rails (suppression list, attempt cap, abandoned-call recall hold) could not be checked"
)

// transient holds the runner after a transient failure (why) and returns
// when it claims again.
func (h *hold) transient(now time.Time, why string) time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.backoff = min(max(2*h.backoff, holdFirst), holdMax)
	h.until, h.why, h.callerID = now.Add(h.backoff), why, false
	return h.until
}

// transientUntil returns the cause of a transient hold in force at now and
// its end ("" when none).
func (h *hold) transientUntil(now time.Time) (string, time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.callerID || h.until.IsZero() || !now.Before(h.until) {
		return "", time.Time{}
	}
	return h.why, h.until
}

// carrierOK ends the back-off of transient failures.
func (h *hold) carrierOK() {
	h.mu.Lock()
	h.backoff = 0
	h.mu.Unlock()
}

// noCallerID holds the runner until a poke or callerIDRecheck; it reports
// whether caller_id_missing is to be logged (once per absence).
func (h *hold) noCallerID(now time.Time) (logIt bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.until, h.callerID = now.Add(callerIDRecheck), true
	logIt = !h.logged
	h.logged = true
	return logIt
}

// callerIDFound ends an absence of caller ids.
func (h *hold) callerIDFound() {
	h.mu.Lock()
	h.logged = false
	h.mu.Unlock()
}

// poked ends a caller-id hold: the campaign or its numbers changed.
func (h *hold) poked() {
	h.mu.Lock()
	if h.callerID {
		h.until, h.callerID = time.Time{}, false
	}
	h.mu.Unlock()
}

// CallerIDsChanged tells the engine that telephony configuration configID's
// phone numbers changed (added, updated, deleted): its running campaigns
// waiting for a caller id look again at once.
func (e *Engine) CallerIDsChanged(configID int64) {
	e.mu.Lock()
	var poke []*runner
	for _, r := range e.runners {
		if c := r.campaign(); c != nil && c.TelephonyConfigurationID == configID {
			poke = append(poke, r)
		}
	}
	e.mu.Unlock()
	for _, r := range poke {
		r.poke(true)
	}
}

// waitForCallerID holds runner r of campaign c, which has no caller id.
func (e *Engine) waitForCallerID(ctx context.Context, r *runner, c *store.Campaign) {
	if !r.hold.noCallerID(e.now()) {
		return
	}
	e.log.Warn("dialer: no caller id", slog.Int64("campaign_id", c.ID), slog.Int64("telephony_configuration_id", c.TelephonyConfigurationID))
	e.addLog(ctx, c.ID, store.LogWarning, "caller_id_missing",
		"the telephony configuration has no active phone number to call from; dialing resumes when one is added or reactivated",
		map[string]any{"telephony_configuration_id": c.TelephonyConfigurationID})
}
