package dialer

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"time"

	"github.com/outdial/outdial/dialer/carrier"
	"github.com/outdial/outdial/store"
)

// Placing a call: an attempt's path from its claim (runner.step, which took
// its slot) to the provider's answer to the place request. Each way out
// either records the call in flight (MarkPlaced; its status then arrives
// through apply.go), puts the attempt back in the queue (requeue.go: its
// slot is freed once the store put it back), or ends it through apply
// (initiationFailed).

// dispatch places one claimed attempt. The attempt is already durably
// claimed (dialing), so a crash from here on never places it twice.
func (e *Engine) dispatch(r *runner, c *store.Campaign, a *store.Attempt) {
	defer e.wg.Done()
	start := e.dispatchStart()
	// The bookkeeping after the provider's answer must not be lost when the
	// engine stops meanwhile: a placed call must be recorded in flight and
	// an attempt that was not sent must go back to the queue (not end
	// unknown at the next start).
	ctx := e.ctx
	book := context.WithoutCancel(ctx)
	if r.isHalted() {
		e.requeue(book, r, a, a.DueAt)
		return
	}
	car, spec, err := e.carrierFor(ctx, c.OrganizationID, c.TelephonyConfigurationID)
	if err != nil && ctx.Err() != nil {
		e.requeue(book, r, a, a.DueAt) // stopping: not sent, dialled after the restart
		return
	}
	if err != nil && carrierGone(err) {
		// The configuration is gone or no carrier can be built from it (a
		// provider without dialing support, unreadable credentials): no
		// attempt could succeed, so the campaign fails (an unrecoverable
		// error) instead of failing every contact. The attempt goes back
		// to the queue untouched.
		e.requeue(book, r, a, a.DueAt)
		why := err.Error() // errCannotDial says it already
		if !errors.Is(err, errCannotDial) {
			why = errCannotDial.Error() + ": " + store.ErrorMessage(err)
		}
		if failed, ferr := e.db.FailCampaign(book, c.ID, why,
			map[string]any{"telephony_configuration_id": c.TelephonyConfigurationID}); ferr == nil && failed {
			r.halt()
			e.touched(c.ID)
		}
		return
	}
	if err != nil {
		// Transient (the database busy): the campaign holds its claims
		// for a back-off and the attempt goes back untouched (hold.go).
		until := r.hold.transient(e.now(), holdCarrier)
		e.requeue(book, r, a, a.DueAt)
		e.aggregateLog(book, c.ID, store.LogWarning, "carrier_unavailable",
			"the telephony configuration could not be loaded; dialing retries shortly",
			map[string]any{"error": err.Error(), "retry_at": until.UTC().Format(time.RFC3339)})
		return
	}
	r.hold.carrierOK()
	now := e.now()
	callerID, ok, err := e.db.PickCallerID(ctx, c.TelephonyConfigurationID, now)
	if err != nil {
		due := now.Add(time.Second) // a database hiccup: try again shortly
		if ctx.Err() != nil {
			due = a.DueAt // stopping: due again at the restart
		}
		e.requeue(book, r, a, due)
		return
	}
	if !ok && spec.Provider != carrier.ARI {
		// The configuration's problem, not the contact's: the campaign
		// waits for a number (hold.go), the attempt goes back untouched.
		e.waitForCallerID(book, r, c)
		e.requeue(book, r, a, a.DueAt)
		return
	}
	if ok {
		r.hold.callerIDFound()
	}
	call := carrier.Call{
		AttemptID: a.ID, To: a.PhoneNumber, From: callerID,
		AnswerURL:   e.callbackURL(spec.Provider, "answer", a.ID),
		StatusURL:   e.callbackURL(spec.Provider, "status", a.ID),
		RingTimeout: RingTimeout,
		TimeLimit:   time.Duration(e.cfg.MaxCallSeconds) * time.Second,
	}
	if da, ok := car.(carrier.DialAnswerer); ok && da.AnswerAtDial() {
		call.Answer = e.answerAtDial(ctx, c.ID, a)
	}
	// The guard rails, right before the request, under the organization's
	// suppression gate until the provider answered (guard.go).
	gate := e.suppressionGate(c.OrganizationID)
	gate.RLock()
	ck := e.check(ctx, r, c, a)
	if ck.verdict != pass {
		gate.RUnlock()
		e.held(book, r, a, ck)
		return
	}
	e.live.add(a)
	sent := e.db.Now() // the store's clock, as the resume time it is compared with
	placed, ok, err := r.place(ctx, car, call)
	gate.RUnlock()
	pl := store.Placement{AttemptID: a.ID, CampaignID: c.ID, OrganizationID: c.OrganizationID, PhoneNumber: a.PhoneNumber,
		CallerID: callerID, At: e.now(), Evidence: ck.ev.json()}
	// notPlaced: the provider did not place the call (the request was not
	// sent or was refused), so the attempt cap does not count it.
	notPlaced := func() {
		if ck.reserved {
			e.releaseCap(book, c, a)
		}
	}
	if !ok {
		notPlaced()
		e.requeueWith(book, r, a, a.DueAt, pl.Evidence)
		return
	}
	e.observePlace(spec.Provider, start, err)
	if err != nil && ctx.Err() != nil && carrier.KindOf(err) == "" {
		// Stopping: the request may or may not have gone out; the attempt
		// stays dialing and is reconciled at the next start.
		return
	}
	ctx = book
	var perr *carrier.Error
	errors.As(err, &perr)
	switch {
	case err == nil:
		e.limiter(c.TelephonyConfigurationID).succeeded()
		r.cs.placed(e.now())
		deadline := e.now().Add(e.callDeadline())
		pl.ProviderCallID, pl.Deadline = placed.ProviderCallID, deadline
		if _, err := e.db.MarkPlaced(ctx, pl); err != nil {
			e.log.Error("dialer: mark placed", slog.Int64("attempt_id", a.ID), slog.String("error", err.Error()))
		}
		e.live.placed(a.ID, placed.ProviderCallID, callerID)
		r.noteDeadline(deadline)
		e.touched(c.ID)
	case perr != nil && perr.Kind == carrier.RateLimited:
		// Due as it was (not a retry of the contact): the provider's
		// back-off holds every claim of the configuration until then.
		until := e.limiter(c.TelephonyConfigurationID).limited(e.now(), perr.RetryAfter)
		notPlaced()
		e.requeueWith(ctx, r, a, a.DueAt, pl.Evidence)
		e.aggregateLog(ctx, c.ID, store.LogWarning, "provider_rate_limited",
			"the provider is rate limiting call requests; dialing slowed down", map[string]any{"retry_at": until.UTC().Format(time.RFC3339)})
	case perr != nil && perr.Kind == carrier.AuthFailed:
		notPlaced()
		e.requeueWith(ctx, r, a, a.DueAt, pl.Evidence)
		// A 401 to a request sent before the campaign was last resumed
		// (another request's 401 paused it, the credentials were fixed and
		// it was resumed) does not pause it again.
		if paused, err := e.db.PauseCampaignFor(ctx, c.ID, sent, "provider_auth_failed",
			"the provider refused the configuration's credentials; fix them and resume",
			map[string]any{"http_status": perr.HTTPStatus, "code": perr.Code}); err == nil && paused {
			r.halt()
			e.wakeIfRunning(c.ID)
			e.touched(c.ID)
		}
	case perr != nil:
		// The provider refused this call (a 4xx): definite.
		notPlaced()
		e.initiationFailed(ctx, r, a, err.Error(), pl.Evidence)
	case requestNotSent(err):
		// The request never left (no route, no DNS answer, connection
		// refused): the provider is unreachable, not the contact's fault.
		until := r.hold.transient(e.now(), holdUnreachable)
		notPlaced()
		e.requeueWith(ctx, r, a, a.DueAt, pl.Evidence)
		e.aggregateLog(ctx, c.ID, store.LogWarning, "provider_unreachable",
			"the provider could not be reached; dialing retries shortly",
			map[string]any{"error": err.Error(), "retry_at": until.UTC().Format(time.RFC3339)})
	default:
		pl.Deadline = e.now().Add(e.callDeadline())
		e.unconfirmed(ctx, r, a, pl, err)
	}
}

// unconfirmed keeps open an attempt whose place request may have reached
// the provider (a 5xx, a timeout, a reset after sending, an unreadable
// 2xx; API.md 4.5): it holds its slot like a call in flight, its status
// webhooks (they carry its token) are applied when they come, and its
// deadline reconciles it (reconcile.go: by the call id a webhook gave, or
// the one derived from the attempt); else it ends unknown. It is never
// placed again, and it does not feed the circuit breaker.
func (e *Engine) unconfirmed(ctx context.Context, r *runner, a *store.Attempt, pl store.Placement, reqErr error) {
	// Webhooks read the attempt from the database from now on: it has no
	// provider call id to check theirs against until one names it.
	e.live.remove(a.ID)
	reason := "the provider's answer to the call request was lost or unreadable: " + reqErr.Error()
	if _, err := e.db.MarkUnconfirmed(ctx, pl, reason); err != nil {
		// Still dialing: its claim's deadline reconciles it the same way.
		e.log.Error("dialer: mark unconfirmed", slog.Int64("attempt_id", a.ID), slog.String("error", err.Error()))
	}
	r.noteDeadline(pl.Deadline)
	e.aggregateLog(ctx, a.CampaignID, store.LogWarning, "call_request_unconfirmed",
		"the provider's answer to a call request was lost; the call is followed until its status is known", map[string]any{"last_error": reqErr.Error()})
}

// requestNotSent reports whether err says a request never reached the
// provider: the connection could not be made.
func requestNotSent(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns)
}

// answerAtDial builds the answer of attempt a for a carrier that needs it
// in the dial request (carrier.DialAnswerer); nil when it cannot be built,
// and the call is placed without it.
func (e *Engine) answerAtDial(ctx context.Context, campaignID int64, a *store.Attempt) *carrier.Answer {
	ci, err := e.campaignInfo(ctx, campaignID)
	if err != nil {
		return nil
	}
	ans, err := e.answerFor(ctx, ci, a)
	if err != nil {
		e.log.Warn("dialer: answer at dial", slog.Int64("attempt_id", a.ID), slog.String("error", err.Error()))
		return nil
	}
	return &ans
}

// place asks the provider to place call unless the runner is halted (sent
// false). It holds the campaign's gate for reading from the halted check
// until the provider answered, so Engine.Halt returns only once no request
// is under way and none can start.
func (r *runner) place(ctx context.Context, car carrier.Carrier, call carrier.Call) (placed carrier.Placed, sent bool, err error) {
	r.cs.gate.RLock()
	defer r.cs.gate.RUnlock()
	if r.isHalted() {
		return carrier.Placed{}, false, nil
	}
	r.cs.placing.Add(1)
	defer r.cs.placing.Add(-1)
	placed, err = car.Place(ctx, call)
	return placed, true, err
}

// initiationFailed ends an attempt the provider did not take as failed and
// logs call_initiation_failed (aggregated per minute).
func (e *Engine) initiationFailed(ctx context.Context, r *runner, a *store.Attempt, reason string, evidence []byte) {
	// Logged first: finishing the last attempt completes the campaign, and
	// its log must be whole by then.
	e.aggregateLog(ctx, a.CampaignID, store.LogError, "call_initiation_failed", "calls could not be placed", map[string]any{"last_error": reason})
	e.finishWith(ctx, a.CampaignID, a.ID, carrier.Status{Final: true, Outcome: carrier.OutcomeFailed, Raw: "initiation_failed"}, reason, fromService, evidence)
}
