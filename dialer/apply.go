package dialer

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/outdial/outdial/dialer/carrier"
	"github.com/outdial/outdial/store"
)

// Applying a status: the one way an attempt becomes final. Every source of
// a status (a provider webhook, an event stream, a provider query at the
// deadline or at start, a request the provider refused) ends in apply,
// which stores it (ApplyStatus: the outcome, the contact's retry or final
// outcome, the campaign's counters and completion, in one transaction) and
// then does what follows in memory: feeds the circuit breaker, frees the
// slot on the store's word (slots.go), wakes the runner.

// statusSource says who decided a status: the provider (a webhook, an
// event, a status query: the call was placed) or the service itself (the
// provider refused the request, or could not be asked: unknown).
type statusSource bool

const (
	fromProvider statusSource = true
	fromService  statusSource = false
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

// finish applies a status to attempt attemptID of campaign campaignID and
// does what follows in memory: frees the slot, feeds the circuit breaker,
// wakes the runner.
func (e *Engine) finish(ctx context.Context, campaignID, attemptID int64, st carrier.Status, errText string, from statusSource) {
	e.finishWith(ctx, campaignID, attemptID, st, errText, from, nil)
}

// finishWith is finish storing the guard rails' evidence with the status.
func (e *Engine) finishWith(ctx context.Context, campaignID, attemptID int64, st carrier.Status, errText string, from statusSource, evidence []byte) {
	if _, err := e.apply(ctx, campaignID, attemptID, st, errText, from, evidence); err != nil {
		e.log.Error("dialer: apply status", slog.Int64("attempt_id", attemptID), slog.String("error", err.Error()))
	}
}

// apply stores status st of attempt attemptID, which belongs to campaign
// campaignID, as arrived now (applyAt).
func (e *Engine) apply(ctx context.Context, campaignID, attemptID int64, st carrier.Status, errText string, from statusSource, evidence []byte) (store.Applied, error) {
	return e.applyAt(ctx, e.now(), campaignID, attemptID, st, errText, from, evidence)
}

// applyAt is apply of a status that arrived at now. A final status goes
// through Engine.leave, so the attempt's slot is freed only when this very
// write ended the attempt; the circuit breaker decides before the slot is
// freed, and its write (a pause) is made with no lock held. A provider's
// final status that cannot be stored (a database failure, not a domain
// error) is held and stored as soon as writes work again (unstored.go); a
// stored one tells the engine that writes work.
func (e *Engine) applyAt(ctx context.Context, now time.Time, campaignID, attemptID int64, st carrier.Status, errText string, from statusSource, evidence []byte) (store.Applied, error) {
	u := store.StatusUpdate{
		At: now, Raw: st.Raw, ProviderCallID: st.ProviderCallID, RequestID: st.RequestID, Answered: st.Answered, AnsweredBy: st.AnsweredBy,
		Sequence: st.Sequence, Final: st.Final, Outcome: st.Outcome, DurationSeconds: st.DurationSeconds, Error: errText,
		FromProvider: from == fromProvider, Machine: carrier.IsMachine,
		ReplayKeys: st.ReplayKeys, ReplayUntil: now.Add(carrier.ReplayTTL), Evidence: evidence,
	}
	if st.Final {
		u.AudioAtAnswer, u.AbandonAfter = e.abandonmentInputs(ctx, campaignID)
	}
	if !st.Final {
		// Progress never moves an attempt out of dialing or in flight:
		// no slot, no ordering against the count.
		res, err := e.db.ApplyStatus(ctx, attemptID, u, e.retryPolicy)
		if err == nil && !res.Ignored && !res.Final {
			e.live.progressed(attemptID, st.Sequence, st)
		}
		if err == nil {
			e.writesWork()
		}
		return res, err
	}
	var res store.Applied
	freed, err := e.leave(campaignID, func() (bool, error) {
		var err error
		res, err = e.db.ApplyStatus(ctx, attemptID, u, e.retryPolicy)
		return res.Final && !res.Ignored, err
	})
	if err != nil && from == fromProvider && store.ErrorCode(err) == "" {
		e.holdStatus(campaignID, attemptID, st, now, err)
	}
	if err == nil {
		e.writesWork()
	}
	if err != nil || res.Ignored || !res.Final {
		return res, err
	}
	e.live.remove(attemptID)
	e.mu.Lock()
	r := e.runners[res.CampaignID]
	e.mu.Unlock()
	tripped := false
	if r != nil && res.Completed {
		r.halt()
	} else if r != nil && res.Outcome != store.OutcomeSuppressed {
		// A suppressed contact was not called: not the provider's success
		// nor its failure.
		// The breaker decides before the slot is freed, so a trip pauses
		// the campaign before another call can take the slot.
		tripped = e.checkBreaker(ctx, r, res.Outcome == carrier.OutcomeFailed, now)
		if !tripped && res.Abandonment.Abandoned != nil {
			// A person answered: the abandonment limit decides, before
			// the slot is freed too.
			tripped = e.checkAbandonment(ctx, r, *res.Abandonment.Abandoned, now)
		}
	}
	freed.free()
	if tripped {
		e.wakeIfRunning(res.CampaignID)
	}
	if r != nil {
		r.poke(false)
	}
	e.observeOutcome(ctx, res.CampaignID, res.Outcome, res.Abandonment)
	e.changed(Change{CampaignID: res.CampaignID, Ended: &EndedCall{AttemptID: attemptID, ContactRow: res.ContactRow,
		Attempt: res.Attempt, Outcome: res.Outcome, StartedAt: res.StartedAt, EndedAt: now, DurationSeconds: st.DurationSeconds,
		Abandoned: res.Abandonment.Abandoned, AnswerToFirstAudioMs: res.Abandonment.AnswerToFirstAudioMs}})
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
		e.met.BreakerTripped()
		e.touched(r.id)
	}
	return paused
}
