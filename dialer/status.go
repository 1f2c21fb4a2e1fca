package dialer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/outdial/outdial/dialer/carrier"
	"github.com/outdial/outdial/store"
)

// Webhook errors the web layer maps to statuses.
var (
	// ErrForbidden: bad token, bad signature, or an attempt that does not
	// belong to the provider in the URL. Answered 403; nothing changes.
	ErrForbidden = errors.New("forbidden")
	// ErrMalformed: an authentic (or unsigned) webhook whose payload the
	// carrier cannot read. Answered 400; nothing changes.
	ErrMalformed = errors.New("malformed webhook")
)

// retryPolicy is API.md 4.5: busy / no_answer / voicemail are retried when
// the campaign's retry_config allows it and fewer than max_retries retries
// were made; the retry is due retry_delay_seconds after now.
func (e *Engine) retryPolicy(rc store.RetryConfig, attempt int64, outcome string) (bool, time.Time) {
	if !rc.Enabled || attempt-1 >= int64(rc.MaxRetries) {
		return false, time.Time{}
	}
	switch {
	case outcome == carrier.OutcomeBusy && rc.RetryOnBusy,
		outcome == carrier.OutcomeNoAnswer && rc.RetryOnNoAnswer,
		outcome == carrier.OutcomeVoicemail && rc.RetryOnVoicemail:
		return true, e.now().Add(time.Duration(rc.RetryDelaySeconds) * time.Second)
	}
	return false, time.Time{}
}

// finish applies a status to an attempt and does what follows in memory:
// frees the slot, feeds the circuit breaker, wakes the runner.
func (e *Engine) finish(ctx context.Context, attemptID int64, st carrier.Status, errText string) {
	if _, err := e.apply(ctx, attemptID, st, errText); err != nil {
		e.log.Error("dialer: apply status", slog.Int64("attempt_id", attemptID), slog.String("error", err.Error()))
	}
}

func (e *Engine) apply(ctx context.Context, attemptID int64, st carrier.Status, errText string) (store.Applied, error) {
	now := e.now()
	// Held until the campaign's active count is settled; see countMu.
	e.countMu.RLock()
	res, err := e.db.ApplyStatus(ctx, attemptID, store.StatusUpdate{
		At: now, Raw: st.Raw, ProviderCallID: st.ProviderCallID, RequestID: st.RequestID, Answered: st.Answered, AnsweredBy: st.AnsweredBy,
		Sequence: st.Sequence, Final: st.Final, Outcome: st.Outcome, DurationSeconds: st.DurationSeconds, Error: errText,
		Machine: carrier.IsMachine,
	}, e.retryPolicy)
	if err == nil && !res.Ignored && !res.Final {
		e.live.progressed(attemptID, st.Sequence, st)
	}
	if err != nil || res.Ignored || !res.Final {
		e.countMu.RUnlock()
		return res, err
	}
	e.live.remove(attemptID)
	e.mu.Lock()
	cs := e.camps[res.CampaignID]
	r := e.runners[res.CampaignID]
	e.mu.Unlock()
	tripped := false
	if r != nil && res.Completed {
		r.halt()
	} else if r != nil {
		// The breaker decides before the slot is freed, so a trip pauses
		// the campaign before another call can take the slot.
		tripped = e.checkBreaker(ctx, r, res.Outcome == carrier.OutcomeFailed, now)
	}
	if cs != nil {
		cs.active.Add(-1)
	}
	e.countMu.RUnlock()
	if tripped {
		e.wakeIfRunning(res.CampaignID)
	}
	if r != nil {
		r.poke(false)
	}
	return res, nil
}

// checkBreaker records an attempt end and pauses the campaign when the
// failure share over the window reaches the threshold; it reports whether
// it did.
func (e *Engine) checkBreaker(ctx context.Context, r *runner, failed bool, now time.Time) bool {
	c := r.campaign()
	if c == nil || !c.CircuitBreaker.Enabled {
		return false
	}
	cb := c.CircuitBreaker
	r.bmu.Lock()
	calls, failures := r.brk.record(now, failed, time.Duration(cb.WindowSeconds)*time.Second, now)
	r.bmu.Unlock()
	if calls < cb.MinCallsInWindow || float64(failures)/float64(calls) < cb.FailureThreshold {
		return false
	}
	rate := float64(failures) / float64(calls)
	paused, err := e.db.PauseCampaignFor(ctx, r.id, time.Time{}, "circuit_breaker_tripped",
		fmt.Sprintf("%d of the last %d calls failed (%.0f%%); campaign paused", failures, calls, 100*rate),
		map[string]any{"failure_rate": rate, "failures": failures, "calls": calls,
			"threshold": cb.FailureThreshold, "window_seconds": cb.WindowSeconds})
	if err != nil {
		e.log.Error("dialer: trip breaker", slog.Int64("campaign_id", r.id), slog.String("error", err.Error()))
		return false
	}
	if paused {
		r.halt()
	}
	return paused
}

// attemptOf returns attempt id (from the attempts this process placed, else
// the database) and its campaign.
func (e *Engine) attemptOf(ctx context.Context, id int64) (*store.Attempt, *campaignInfo, error) {
	a := e.live.get(id)
	if a == nil {
		var err error
		if a, err = e.db.GetAttempt(ctx, id); err != nil {
			return nil, nil, err
		}
	}
	c, err := e.campaignInfo(ctx, a.CampaignID)
	if err != nil {
		return nil, nil, err
	}
	return a, c, nil
}

// webhookTarget loads what a webhook for attempt id needs, checking its
// token and that the attempt's configuration uses provider.
func (e *Engine) webhookTarget(ctx context.Context, provider string, attemptID int64, token string) (*store.Attempt, *campaignInfo, carrier.Carrier, error) {
	if !e.ValidToken(attemptID, token) {
		return nil, nil, nil, ErrForbidden
	}
	a, c, err := e.attemptOf(ctx, attemptID)
	if store.ErrorCode(err) == store.ENOTFOUND {
		return nil, nil, nil, ErrForbidden
	}
	if err != nil {
		return nil, nil, nil, err
	}
	car, spec, err := e.carrierFor(ctx, c.orgID, c.configID)
	if err != nil {
		return nil, nil, nil, err
	}
	if spec.Provider != provider {
		return nil, nil, nil, ErrForbidden
	}
	return a, c, car, nil
}

// HandleStatus verifies and applies a status webhook for attempt id. A bad
// token or signature is ErrForbidden and changes nothing; duplicates and
// late non-final events are accepted and ignored.
func (e *Engine) HandleStatus(ctx context.Context, provider string, attemptID int64, token string, w carrier.Webhook) error {
	a, c, car, err := e.webhookTarget(ctx, provider, attemptID, token)
	if err != nil {
		return err
	}
	st, err := car.ParseStatus(w)
	if errors.Is(err, carrier.ErrForged) {
		return ErrForbidden
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if st.ProviderCallID != "" && a.ProviderCallID != nil && *a.ProviderCallID != st.ProviderCallID &&
		(st.RequestID == "" || *a.ProviderCallID != st.RequestID) {
		return ErrForbidden // a signed event of another call sent to this attempt's URL
	}
	res, err := e.apply(ctx, attemptID, st, "")
	if err != nil || res.Ignored {
		return err
	}
	callID := st.ProviderCallID
	if callID == "" && a.ProviderCallID != nil {
		callID = *a.ProviderCallID
	}
	switch {
	case st.NeedsAnswer && !res.Final:
		e.answerByCommand(ctx, car, c, a, callID)
	case st.HangUp && !res.Final:
		if err := car.HangUp(ctx, callID); err != nil {
			e.log.Warn("dialer: hang up after the answer", slog.Int64("attempt_id", attemptID), slog.String("error", err.Error()))
		}
	}
	return nil
}

// answerByCommand gives the provider the answer of an answered call as REST
// commands (carrier.Answerer, Telnyx). When that fails the call is hung up
// rather than left silent until the callee gives up.
func (e *Engine) answerByCommand(ctx context.Context, car carrier.Carrier, c *campaignInfo, a *store.Attempt, callID string) {
	ans, ok := car.(carrier.Answerer)
	if !ok || callID == "" {
		return
	}
	answer, err := e.answerFor(ctx, c, a)
	if err == nil {
		err = ans.Answered(ctx, callID, answer)
	}
	if err == nil {
		return
	}
	e.log.Warn("dialer: answer the call", slog.Int64("attempt_id", a.ID), slog.String("error", err.Error()))
	if err := car.HangUp(ctx, callID); err != nil {
		e.log.Warn("dialer: hang up an unanswerable call", slog.Int64("attempt_id", a.ID), slog.String("error", err.Error()))
	}
}

// Answer verifies an answer webhook and returns the markup that tells the
// provider what to do with the answered call (API.md 6). A status event
// sent to the answer URL (carrier.ErrStatusEvent: Vobiz's Ring and Hangup)
// is applied as a status webhook and answered with no markup (ct "").
func (e *Engine) Answer(ctx context.Context, provider string, attemptID int64, token string, w carrier.Webhook) (string, []byte, error) {
	a, c, car, err := e.webhookTarget(ctx, provider, attemptID, token)
	if err != nil {
		return "", nil, err
	}
	answeredBy, err := car.VerifyAnswer(w)
	if errors.Is(err, carrier.ErrStatusEvent) {
		// A status event at the answer URL: applied as one, answered with
		// no markup (ct "").
		return "", nil, e.HandleStatus(ctx, provider, attemptID, token, w)
	}
	if errors.Is(err, carrier.ErrForged) {
		return "", nil, ErrForbidden
	}
	if err != nil {
		return "", nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if _, err := e.apply(ctx, attemptID, carrier.Status{Raw: "answered", Answered: true, AnsweredBy: answeredBy, Sequence: int(a.Sequence)}, ""); err != nil {
		return "", nil, err
	}
	ans, err := e.answerFor(ctx, c, a)
	if err != nil {
		return "", nil, err
	}
	ct, body := car.AnswerMarkup(ans)
	return ct, body, nil
}

// expire reconciles the runner's in-flight attempts past their deadline:
// the provider's status when it can be asked, else unknown.
func (r *runner) expire(ctx context.Context, now time.Time) {
	e := r.e
	list, err := e.db.ExpiredAttempts(ctx, r.id, now)
	if err != nil {
		e.log.Error("dialer: expired attempts", slog.String("error", err.Error()))
		return
	}
	for _, a := range list {
		e.reconcile(ctx, r.c, a, "no final status before the deadline")
	}
	d, err := e.db.NextDeadline(ctx, r.id)
	if err == nil {
		r.setDeadline(d)
	}
}

// reconcile asks the provider for an attempt's status and applies it when
// final; otherwise (or when the provider cannot say) the attempt ends
// unknown.
func (e *Engine) reconcile(ctx context.Context, c *store.Campaign, a *store.Attempt, why string) {
	var car carrier.Carrier
	if a.ProviderCallID != nil && *a.ProviderCallID != "" {
		car, _, _ = e.carrierFor(ctx, c.OrganizationID, c.TelephonyConfigurationID)
	}
	if car != nil {
		if st, err := car.Query(ctx, *a.ProviderCallID); err == nil && st.Final {
			e.finish(ctx, a.ID, st, "")
			return
		}
	}
	e.finish(ctx, a.ID, carrier.Status{Final: true, Outcome: carrier.OutcomeUnknown, Raw: "unknown"}, why)
	if car != nil {
		// The call may still be queued, ringing or up at the provider
		// (a Plivo request still queued rings later): it is ended, so no
		// call outlives its attempt.
		if err := car.HangUp(ctx, *a.ProviderCallID); err != nil {
			e.log.Warn("dialer: hang up a call past its deadline", slog.Int64("attempt_id", a.ID), slog.String("error", err.Error()))
		}
	}
}

// reconcileAtStart settles attempts a previous process left unfinished. A
// dialing attempt's request may or may not have reached the provider; with
// no provider call id to ask about it ends unknown and is never placed
// again. One whose call id is known (a status webhook came before the
// process could record the placement) was placed: it is recorded in flight
// like the others. An in-flight attempt is asked about; a final answer is
// applied, and the others stay in flight (their statuses still arrive, and
// the deadline reconciles them).
func (e *Engine) reconcileAtStart(ctx context.Context) error {
	list, err := e.db.UnfinishedAttempts(ctx)
	if err != nil {
		return err
	}
	for _, a := range list {
		c, err := e.db.CampaignByID(ctx, a.CampaignID)
		if err != nil {
			return err
		}
		if a.State == store.AttemptDialing && a.ProviderCallID == nil {
			if e.followDerived(ctx, c, a) {
				continue
			}
			e.finish(ctx, a.ID, carrier.Status{Final: true, Outcome: carrier.OutcomeUnknown, Raw: "interrupted"},
				"the service stopped while the call was being placed; not placed again")
			continue
		}
		if a.ProviderCallID == nil {
			continue
		}
		if a.State == store.AttemptDialing {
			deadline := e.now().Add(RingTimeout + time.Duration(e.cfg.MaxCallSeconds)*time.Second)
			if _, err := e.db.MarkPlaced(ctx, a.ID, c.ID, *a.ProviderCallID, "", deadline); err != nil {
				return err
			}
		}
		car, _, err := e.carrierFor(ctx, c.OrganizationID, c.TelephonyConfigurationID)
		if err != nil {
			continue
		}
		if st, err := car.Query(ctx, *a.ProviderCallID); err == nil && st.Final {
			e.finish(ctx, a.ID, st, "")
		}
	}
	return nil
}

// followDerived looks up, with its provider, an attempt left dialing whose
// call id is derived from the attempt id (carrier.CallIDDeriver, ARI): a
// call the provider has is recorded in flight and followed (true); a final
// answer is applied (true). When the provider has no such call or cannot be
// asked, it returns false and the attempt ends unknown; it is never placed
// again (Asterisk would dial a destroyed channel's id again).
func (e *Engine) followDerived(ctx context.Context, c *store.Campaign, a *store.Attempt) bool {
	car, _, err := e.carrierFor(ctx, c.OrganizationID, c.TelephonyConfigurationID)
	if err != nil {
		return false
	}
	d, ok := car.(carrier.CallIDDeriver)
	if !ok {
		return false
	}
	id := d.CallID(a.ID)
	st, err := car.Query(ctx, id)
	if err != nil {
		return false
	}
	if st.Final {
		st.ProviderCallID = id
		e.finish(ctx, a.ID, st, "the service stopped while the call was being placed; not placed again")
		return true
	}
	deadline := e.now().Add(RingTimeout + time.Duration(e.cfg.MaxCallSeconds)*time.Second)
	if _, err := e.db.MarkPlaced(ctx, a.ID, c.ID, id, "", deadline); err != nil {
		e.log.Error("dialer: mark placed", slog.Int64("attempt_id", a.ID), slog.String("error", err.Error()))
		return false
	}
	if st.Answered {
		e.finish(ctx, a.ID, st, "")
	}
	return true
}
