package dialer

import (
	"context"
	"errors"
	"time"

	"github.com/outdial/outdial/dialer/carrier"
	"github.com/outdial/outdial/dialer/metrics"
	"github.com/outdial/outdial/store"
)

// Metrics (API.md 13): the engine records each fact where it is known,
// into Config.Metrics; with none every call here is a nil check.

// dispatchStart returns the time a dispatch began (right after its claim
// committed), or the zero time without metrics.
func (e *Engine) dispatchStart() time.Time {
	if e.met == nil {
		return time.Time{}
	}
	return time.Now()
}

// observePlace records a place request that was sent, begun at start,
// answered with err.
func (e *Engine) observePlace(provider string, start time.Time, err error) {
	if e.met == nil {
		return
	}
	e.met.Dispatched(time.Since(start))
	p := e.met.Provider(provider)
	if err == nil {
		p.Request(metrics.Class2xx)
		p.Placed()
		return
	}
	var perr *carrier.Error
	var serr *carrier.ServerError
	switch {
	case errors.As(err, &perr):
		p.Request(statusClass(perr.HTTPStatus))
		switch perr.Kind {
		case carrier.RateLimited:
			p.RateLimited()
		case carrier.AuthFailed:
			p.AuthFailed()
		}
	case errors.As(err, &serr):
		p.Request(statusClass(serr.HTTPStatus))
	default:
		p.Request(metrics.ClassError)
	}
}

// statusClass classes an HTTP status for metrics.
func statusClass(status int) string {
	switch {
	case status >= 200 && status < 300:
		return metrics.Class2xx
	case status >= 400 && status < 500:
		return metrics.Class4xx
	case status >= 500 && status < 600:
		return metrics.Class5xx
	}
	return metrics.ClassError
}

// observeOutcome records the final outcome of an attempt of campaign id,
// and the abandonment verdict v on its call (API.md 19).
// The provider is the campaign's configuration's, from the caches (a
// campaign without a runner is read from the database once per status).
func (e *Engine) observeOutcome(ctx context.Context, campaignID int64, outcome string, v store.Abandonment) {
	if e.met == nil {
		return
	}
	p := e.met.Provider(e.providerOf(ctx, campaignID))
	p.Outcome(outcome)
	if v.Abandoned != nil && *v.Abandoned {
		p.Abandoned()
	}
	if v.AnswerToFirstAudioMs != nil {
		e.met.AnswerToFirstAudio(time.Duration(*v.AnswerToFirstAudioMs) * time.Millisecond)
	}
}

// providerOf is the provider of campaign id's configuration, from the
// caches; "" when it cannot be told.
func (e *Engine) providerOf(ctx context.Context, campaignID int64) string {
	ci, err := e.campaignInfo(ctx, campaignID)
	if err != nil {
		return ""
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.carriers[ci.configID].spec.Provider
}

// observeWebhook records the result of a webhook of provider handled with
// err (a status webhook applied as res) under ctx, its request's context. A
// failure once the provider went away (ctx cancelled with the plain
// context.Canceled, which net/http does when the connection closes; the
// web layer answers it 499) is WebhookCanceled, not our error.
func (e *Engine) observeWebhook(ctx context.Context, provider string, ignored bool, err error) {
	if e.met == nil {
		return
	}
	result := metrics.WebhookApplied
	switch {
	case errors.Is(err, ErrForbidden):
		result = metrics.WebhookForged
	case errors.Is(err, ErrMalformed):
		result = metrics.WebhookBad
	case err != nil && ctx.Err() != nil && context.Cause(ctx) == context.Canceled:
		result = metrics.WebhookCanceled
	case err != nil:
		result = metrics.WebhookError
	case ignored:
		result = metrics.WebhookDuplicate
	}
	e.met.Provider(provider).Webhook(result)
}

// EachInFlight calls yield with every campaign that has attempts dialing or
// in flight or a runner, and the number of those attempts: the source of
// outdial_calls_in_flight, read at scrape time (metrics.InFlightSource). A
// campaign whose count is back to 0 and whose runner ended is left out, so
// the series stay bounded.
func (e *Engine) EachInFlight(yield func(campaignID int64, n int)) {
	type entry struct {
		id int64
		n  int
	}
	e.mu.Lock()
	list := make([]entry, 0, len(e.runners))
	for id, cs := range e.camps {
		if !cs.counted.Load() {
			continue // a status being applied, not a campaign dialled here
		}
		n := cs.inUse()
		if r := e.runners[id]; n != 0 || (r != nil && !r.isDone()) {
			list = append(list, entry{id, n})
		}
	}
	e.mu.Unlock()
	for _, en := range list {
		yield(en.id, en.n)
	}
}
