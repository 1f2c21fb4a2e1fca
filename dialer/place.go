package dialer

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/outdial/outdial/dialer/carrier"
	"github.com/outdial/outdial/store"
)

// Placing a call: an attempt's path from its claim (runner.step, which took
// its slot) to the provider's answer to the place request, in the steps of
// dispatch. Each way out either records the call in flight (MarkPlaced;
// its status then arrives through apply.go), puts the attempt back in the
// queue (requeue.go: its slot is freed once the store put it back), or ends
// it through apply (initiationFailed, a suppressed number).

// placing is one dispatch under way: a claimed attempt of campaign c that
// runner r handed over, on its way to the provider.
type placing struct {
	e     *Engine
	r     *runner
	c     *store.Campaign
	a     *store.Attempt
	start time.Time // for metrics (dispatchStart)
	// ctx is the engine's, which ends when it stops; book is for the
	// bookkeeping after the provider's answer, which must not be lost when
	// the engine stops meanwhile: a placed call must be recorded in flight
	// and an attempt that was not sent must go back to the queue (not end
	// unknown at the next start).
	ctx, book context.Context

	car      carrier.Carrier
	spec     carrier.Spec
	callerID string
}

// asked is the outcome of the checks and the place request.
type asked struct {
	ck     checked
	pl     store.Placement
	placed carrier.Placed
	err    error     // the provider's answer
	sent   time.Time // the store's clock when the request was sent
}

// dispatch places one claimed attempt. The attempt is already durably
// claimed (dialing), so a crash from here on never places it twice. Its
// steps: resolve the carrier, pick the caller id, build the call, check and
// place, settle; a step that returns false ended the dispatch (the attempt
// put back, ended, or left dialing for reconciliation).
func (e *Engine) dispatch(r *runner, c *store.Campaign, a *store.Attempt) {
	defer e.wg.Done()
	p := &placing{e: e, r: r, c: c, a: a, start: e.dispatchStart(), ctx: e.ctx}
	p.book = context.WithoutCancel(p.ctx)
	if r.isHalted() {
		e.requeue(p.book, r, a, a.DueAt)
		return
	}
	if !p.resolveCarrier() || !p.pickCallerID() {
		return
	}
	if res, ok := p.checkAndPlace(p.buildCall()); ok {
		p.settle(res)
	}
}

// resolveCarrier finds the campaign's carrier. When it cannot, the attempt
// goes back to the queue untouched, and the campaign fails (no carrier can
// ever be had) or holds its claims for a back-off (a transient error).
func (p *placing) resolveCarrier() bool {
	e, r, c, a := p.e, p.r, p.c, p.a
	car, spec, err := e.carrierFor(p.ctx, c.OrganizationID, c.TelephonyConfigurationID)
	switch {
	case err == nil:
		r.hold.carrierOK()
		p.car, p.spec = car, spec
		return true
	case p.ctx.Err() != nil:
		e.requeue(p.book, r, a, a.DueAt) // stopping: not sent, dialled after the restart
	case carrierGone(err):
		// The configuration is gone or no carrier can be built from it (a
		// provider without dialing support, unreadable credentials): no
		// attempt could succeed, so the campaign fails (an unrecoverable
		// error) instead of failing every contact.
		e.requeue(p.book, r, a, a.DueAt)
		why := err.Error() // errCannotDial says it already
		if !errors.Is(err, errCannotDial) {
			why = errCannotDial.Error() + ": " + store.ErrorMessage(err)
		}
		if failed, ferr := e.db.FailCampaign(p.book, c.ID, why,
			map[string]any{"telephony_configuration_id": c.TelephonyConfigurationID}); ferr == nil && failed {
			r.halt()
			e.touched(c.ID)
		}
	default:
		// Transient (the database busy): the campaign holds its claims
		// for a back-off (hold.go).
		until := r.hold.transient(e.now(), holdCarrier)
		e.requeue(p.book, r, a, a.DueAt)
		e.aggregateLog(p.book, c.ID, store.LogWarning, "carrier_unavailable",
			"the telephony configuration could not be loaded; dialing retries shortly",
			map[string]any{"error": err.Error(), "retry_at": until.UTC().Format(time.RFC3339)})
	}
	return false
}

// pickCallerID picks the number to call from. Without one (ARI may dial
// without) the campaign waits for a number and the attempt goes back
// untouched; a database error puts it back due a second later.
func (p *placing) pickCallerID() bool {
	e, r, a := p.e, p.r, p.a
	now := e.now()
	callerID, ok, err := e.db.PickCallerID(p.ctx, p.c.TelephonyConfigurationID, now)
	switch {
	case err != nil:
		due := now.Add(time.Second) // a database hiccup: try again shortly
		if p.ctx.Err() != nil {
			due = a.DueAt // stopping: due again at the restart
		}
		e.requeue(p.book, r, a, due)
		return false
	case !ok && p.spec.Provider != carrier.ARI:
		// The configuration's problem, not the contact's (hold.go).
		e.waitForCallerID(p.book, r, p.c)
		e.requeue(p.book, r, a, a.DueAt)
		return false
	case ok:
		r.hold.callerIDFound()
	}
	p.callerID = callerID
	return true
}

// buildCall is the provider request of the attempt.
func (p *placing) buildCall() carrier.Call {
	e, a := p.e, p.a
	call := carrier.Call{
		AttemptID: a.ID, To: a.PhoneNumber, From: p.callerID,
		AnswerURL:   e.callbackURL(p.spec.Provider, "answer", a.ID),
		StatusURL:   e.callbackURL(p.spec.Provider, "status", a.ID),
		RingTimeout: RingTimeout,
		TimeLimit:   time.Duration(e.cfg.MaxCallSeconds) * time.Second,
	}
	if da, ok := p.car.(carrier.DialAnswerer); ok && da.AnswerAtDial() {
		call.Answer = e.answerAtDial(p.ctx, p.c.ID, a)
	}
	return call
}

// checkAndPlace runs the guard rails right before the request and asks the
// provider, under the organization's suppression gate until the provider
// answered (guard.go). It returns false when the attempt was held or ended
// by the checks, put back because the runner was halted, or left dialing
// because the engine stopped while the request was under way (reconciled
// at the next start).
func (p *placing) checkAndPlace(call carrier.Call) (asked, bool) {
	e, r, c, a := p.e, p.r, p.c, p.a
	gate := e.suppressionGate(c.OrganizationID)
	gate.RLock()
	ck := e.check(p.ctx, r, c, a)
	if ck.verdict != pass {
		gate.RUnlock()
		e.held(p.book, r, a, ck)
		return asked{}, false
	}
	e.live.add(a)
	sent := e.db.Now() // the store's clock, as the resume time it is compared with
	placed, ok, err := r.place(p.ctx, p.car, call)
	gate.RUnlock()
	res := asked{ck: ck, placed: placed, err: err, sent: sent,
		pl: store.Placement{AttemptID: a.ID, CampaignID: c.ID, OrganizationID: c.OrganizationID, PhoneNumber: a.PhoneNumber,
			CallerID: p.callerID, At: e.now(), Evidence: ck.ev.json(), Lease: r.lease}}
	if !ok {
		p.notPlaced(res)
		e.requeueWith(p.book, r, a, a.DueAt, res.pl.Evidence)
		return asked{}, false
	}
	e.observePlace(p.spec.Provider, p.start, err)
	if err != nil && p.ctx.Err() != nil && carrier.KindOf(err) == "" {
		// Stopping: the request may or may not have gone out; the attempt
		// stays dialing and is reconciled at the next start.
		return asked{}, false
	}
	return res, true
}

// notPlaced undoes the attempt cap's record of a call the provider did not
// place (the request was not sent or was refused).
func (p *placing) notPlaced(res asked) {
	if res.ck.reserved {
		p.e.releaseCap(p.book, p.c, p.a)
	}
}

// settle does what the provider's answer calls for: records the call in
// flight, puts the attempt back (a 429, a 401, an unreachable provider),
// ends it (a refusal), or follows it unconfirmed (the answer was lost).
func (p *placing) settle(res asked) {
	e, r, c, a, ctx := p.e, p.r, p.c, p.a, p.book
	err, pl := res.err, res.pl
	var perr *carrier.Error
	errors.As(err, &perr)
	switch {
	case err == nil:
		e.limiter(c.TelephonyConfigurationID).succeeded()
		r.cs.placed(e.now())
		deadline := e.now().Add(e.callDeadline())
		pl.ProviderCallID, pl.Deadline = res.placed.ProviderCallID, deadline
		if _, err := e.db.MarkPlaced(ctx, pl); e.leaseLost(c.ID, err) {
			e.log.Error("dialer: a call placed as the campaign's lease changed hands; its statuses still apply",
				slog.Int64("attempt_id", a.ID))
		} else if err != nil {
			e.log.Error("dialer: mark placed", slog.Int64("attempt_id", a.ID), slog.String("error", err.Error()))
		}
		e.live.placed(a.ID, res.placed.ProviderCallID, p.callerID)
		r.noteDeadline(deadline)
		e.touched(c.ID)
	case perr != nil && (perr.Kind == carrier.RateLimited || perr.Kind == carrier.Unavailable):
		// Due as it was (not a retry of the contact): the provider's
		// back-off holds every claim of the configuration until then.
		// The log and the diagnosis say what happened (causes.go): a 429
		// is not an Asterisk whose events websocket cannot be made.
		cause := backoffCause(perr)
		until := e.limiter(c.TelephonyConfigurationID).limited(e.now(), perr.RetryAfter, cause)
		// The provider's limit is per account: every node backs off.
		e.notify(ctx, noteBackoff, c.TelephonyConfigurationID, strconv.FormatInt(until.UnixMilli(), 10))
		p.notPlaced(res)
		e.requeueWith(ctx, r, a, a.DueAt, pl.Evidence)
		event, then := "provider_rate_limited", "; dialing slowed down"
		if perr.Kind == carrier.Unavailable {
			event, then = "provider_unavailable", "; dialing waits for it"
		}
		e.aggregateLog(ctx, c.ID, store.LogWarning, event, cause+then,
			map[string]any{"retry_at": until.UTC().Format(time.RFC3339)})
	case perr != nil && perr.Kind == carrier.AuthFailed:
		p.notPlaced(res)
		e.requeueWith(ctx, r, a, a.DueAt, pl.Evidence)
		// A 401 to a request sent before the campaign was last resumed
		// (another request's 401 paused it, the credentials were fixed and
		// it was resumed) does not pause it again.
		if paused, err := e.db.PauseCampaignFor(ctx, c.ID, res.sent, "provider_auth_failed",
			"the provider refused the configuration's credentials; fix them and resume",
			map[string]any{"http_status": perr.HTTPStatus, "code": perr.Code}); err == nil && paused {
			r.halt()
			e.wakeIfRunning(c.ID)
			e.touched(c.ID)
		}
	case perr != nil:
		// The provider refused this call (a 4xx): definite.
		p.notPlaced(res)
		e.initiationFailed(ctx, r, a, err.Error(), pl.Evidence)
	case requestNotSent(err):
		// The request never left (no route, no DNS answer, connection
		// refused): the provider is unreachable, not the contact's fault.
		cause := unreachableCause(err)
		until := r.hold.transient(e.now(), cause)
		p.notPlaced(res)
		e.requeueWith(ctx, r, a, a.DueAt, pl.Evidence)
		e.aggregateLog(ctx, c.ID, store.LogWarning, "provider_unreachable",
			cause+"; dialing retries shortly",
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
	cause := unconfirmedCause(reqErr)
	reason := cause + ": " + reqErr.Error()
	if _, err := e.db.MarkUnconfirmed(ctx, pl, reason); err != nil {
		// Still dialing: its claim's deadline reconciles it the same way.
		e.log.Error("dialer: mark unconfirmed", slog.Int64("attempt_id", a.ID), slog.String("error", err.Error()))
	}
	r.noteDeadline(pl.Deadline)
	e.aggregateLog(ctx, a.CampaignID, store.LogWarning, "call_request_unconfirmed",
		cause+"; the call is followed until its status is known", map[string]any{"last_error": reqErr.Error()})
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
	if !r.e.leaseValid(r.lease) {
		// The lease may have lapsed (the database unreachable, this
		// process paused): another node may dial the campaign now. The
		// attempt goes back unsent; the renewal says whether it is lost.
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
