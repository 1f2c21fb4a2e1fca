package dialer

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/outdial/outdial/dialer/carrier"
)

type cachedCarrier struct {
	org     int64 // the configuration's organization
	updated time.Time
	checked time.Time // when updated was last compared with the database (wall clock)
	c       carrier.Carrier
	spec    carrier.Spec
	// stop ends the carrier's event stream (EventSource carriers), nil
	// when it has none.
	stop context.CancelFunc
}

// carrierRecheck is how long a cached carrier is used without reading its
// configuration's updated_at again. Changes made through the API apply at
// once (ForgetConfig); any other change within carrierRecheck.
const carrierRecheck = time.Second

// carrierFor returns the carrier of telephony configuration configID,
// rebuilt when the configuration changed.
func (e *Engine) carrierFor(ctx context.Context, orgID, configID int64) (carrier.Carrier, carrier.Spec, error) {
	// The cached carrier is current while the configuration's updated_at is
	// unchanged: a one-column read instead of reading and opening the
	// sealed credentials for every call and webhook.
	wall := time.Now()
	e.mu.Lock()
	cc, ok := e.carriers[configID]
	e.mu.Unlock()
	if ok && wall.Sub(cc.checked) < carrierRecheck && wall.Sub(cc.checked) >= 0 {
		return cc.c, cc.spec, nil
	}
	version, err := e.db.TelephonyConfigVersion(ctx, orgID, configID)
	if err != nil {
		return nil, carrier.Spec{}, err
	}
	if ok && cc.updated.Equal(version) {
		e.mu.Lock()
		if cur, still := e.carriers[configID]; still && cur.c == cc.c {
			cur.checked = wall
			e.carriers[configID] = cur
		}
		e.mu.Unlock()
		return cc.c, cc.spec, nil
	}
	cfg, err := e.db.GetTelephonyConfig(ctx, orgID, configID)
	if err != nil {
		return nil, carrier.Spec{}, err
	}
	c, err := e.cfg.NewCarrier(cfg.Provider, cfg.Credentials, e.cfg.Carriers)
	if t, ok := err.(temporary); ok && t.Temporary() {
		return nil, carrier.Spec{}, err
	}
	if err != nil {
		return nil, carrier.Spec{}, fmt.Errorf("%w: %w", errCannotDial, err)
	}
	spec, _ := carrier.Lookup(cfg.Provider)
	e.mu.Lock()
	defer e.mu.Unlock()
	if cur, ok := e.carriers[configID]; ok && cur.updated.Equal(cfg.UpdatedAt) {
		// Another caller built the same version meanwhile: keep one
		// carrier (and one event stream) per configuration.
		return cur.c, cur.spec, nil
	}
	if cur, ok := e.carriers[configID]; ok && cur.stop != nil {
		cur.stop()
	}
	cc = cachedCarrier{org: orgID, updated: cfg.UpdatedAt, checked: wall, c: c, spec: spec}
	cc.stop = e.startEventsLocked(configID, c)
	e.carriers[configID] = cc
	return c, spec, nil
}

// limiter returns the shared provider-rate limiter of a configuration: a
// provider's 429 is an account limit, so it slows every campaign of it.
func (e *Engine) limiter(configID int64) *providerLimiter {
	e.mu.Lock()
	defer e.mu.Unlock()
	l := e.limiters[configID]
	if l == nil {
		l = &providerLimiter{}
		e.limiters[configID] = l
	}
	return l
}

// ForgetConfig drops the cached carrier of telephony configuration configID;
// the API calls it after updating or deleting the configuration, so the
// change applies to the next call and webhook. A carrier that followed its
// calls over an event stream (ARI) is rebuilt at once, so its calls in
// flight are followed again without waiting for the next call: the new
// stream adopts them on connecting (carrier.EventSink.InFlight).
//
// The other nodes sharing the database are told, and forget theirs too.
func (e *Engine) ForgetConfig(configID int64) {
	e.forgetConfig(configID)
	e.notify(context.Background(), noteConfig, configID)
}

// forgetConfig is ForgetConfig on this node alone.
func (e *Engine) forgetConfig(configID int64) {
	e.mu.Lock()
	cur, ok := e.carriers[configID]
	if ok && cur.stop != nil {
		cur.stop()
	}
	delete(e.carriers, configID)
	reopen := ok && cur.stop != nil && !e.stopped && e.ctx != nil
	ctx := e.ctx
	if reopen {
		e.wg.Add(1)
	}
	e.mu.Unlock()
	if !reopen {
		return
	}
	go func() {
		defer e.wg.Done()
		if _, _, err := e.carrierFor(ctx, cur.org, configID); err != nil && !carrierGone(err) {
			e.log.Warn("dialer: reopen the event stream", slog.Int64("telephony_configuration_id", configID), slog.String("error", err.Error()))
		}
	}()
}
