package dialer

import (
	"context"
	"log/slog"

	"github.com/outdial/outdial/dialer/carrier"
	"github.com/outdial/outdial/store"
)

// startEventsLocked starts the event stream of c when its provider sends
// statuses over a connection we keep (carrier.EventSource, ARI) and returns
// what stops it; nil when c has none or the engine is not running. e.mu is
// held.
func (e *Engine) startEventsLocked(configID int64, c carrier.Carrier) context.CancelFunc {
	src, ok := c.(carrier.EventSource)
	if !ok || e.ctx == nil || e.stopped {
		return nil
	}
	ctx, cancel := context.WithCancel(e.ctx)
	e.events.Add(1)
	go func() {
		defer e.events.Done()
		e.runEvents(ctx, configID, src) // streams.go
	}()
	return cancel
}

// eventSink applies what an EventSource reads to the attempts of its
// telephony configuration; events naming an attempt of another
// configuration (or none) are dropped.
type eventSink struct {
	e        *Engine
	configID int64
}

// target returns attempt id and its campaign when the attempt dials through
// the sink's configuration.
func (s eventSink) target(ctx context.Context, attemptID int64) (*store.Attempt, *campaignInfo, bool) {
	a, c, err := s.e.attemptOf(ctx, attemptID)
	if err != nil || c.configID != s.configID {
		return nil, nil, false
	}
	return a, c, true
}

// Status applies st to attempt attemptID.
func (s eventSink) Status(ctx context.Context, attemptID int64, st carrier.Status) {
	a, _, ok := s.target(ctx, attemptID)
	if !ok {
		s.e.log.Debug("dialer: event for an unknown attempt", slog.Int64("attempt_id", attemptID), slog.Int64("telephony_configuration_id", s.configID))
		return
	}
	s.e.finish(ctx, a.CampaignID, attemptID, st, "", fromProvider)
}

// InFlight returns the attempts in flight through the sink's
// configuration; when nodes share the database, also those being placed
// (dialing), which another node may be placing without following them
// (streams.go). On one node the carrier follows what it is placing itself.
func (s eventSink) InFlight(ctx context.Context) ([]carrier.FollowedCall, error) {
	list, err := s.e.db.InFlightAttempts(ctx, s.configID)
	if err != nil {
		return nil, err
	}
	out := make([]carrier.FollowedCall, 0, len(list))
	for _, a := range list {
		if a.Dialing && !s.e.db.Shared() {
			continue
		}
		out = append(out, carrier.FollowedCall{AttemptID: a.ID, Answered: a.Answered, Placing: a.Dialing})
	}
	return out, nil
}

// Answer builds the answer of attempt attemptID (API.md 6).
func (s eventSink) Answer(ctx context.Context, attemptID int64) (carrier.Answer, error) {
	a, c, ok := s.target(ctx, attemptID)
	if !ok {
		return carrier.Answer{}, store.Errorf(store.ENOTFOUND, "call attempt %d not found", attemptID)
	}
	return s.e.answerFor(ctx, c, a)
}
