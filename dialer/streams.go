package dialer

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/outdial/outdial/dialer/carrier"
	"github.com/outdial/outdial/store"
)

// Event streams across nodes (API.md 16). Asterisk hands an ARI
// application's events to one websocket only, so when several nodes share
// the database one node at a time opens a configuration's event stream:
// the one holding its stream lease (store.StreamLease). The others place
// their calls through REST alone (carrier.SharedEventSource), and the
// holder's stream follows every call of the configuration whichever node
// placed it, applying each outcome once. The lease is taken when the
// configuration's carrier is built, renewed with the campaign leases
// (renewLoop), handed back when the carrier stops (Stop, an update of the
// configuration), and taken by another node at its next renewal tick once
// it lapsed, or at once when it was handed back (noteStream); the new
// holder's stream adopts every call in flight on connecting.
//
// With a database no other node shares (SQLite) there is no lease: the
// node runs its streams itself, as a single process always did.

// streams are the event streams of this node's carriers that take turns
// with the other nodes.
type streams struct {
	mu  sync.Mutex
	all map[*stream]struct{}
}

// stream is one SharedEventSource carrier's turn-taking. Its fields after
// configID are guarded by streams.mu.
type stream struct {
	configID int64
	poke     chan struct{} // (buffered, 1) try to take the lease now
	// lease is the lease held (Node "" when none); renewed the monotonic
	// time its last renewal (or the acquisition) was sent; cancel ends the
	// Events it covers.
	lease   store.StreamLease
	renewed time.Time
	cancel  context.CancelFunc
	// acquiring: an acquisition is under way, whose lease a renewal must
	// not take for one no stream holds.
	acquiring bool
}

// runEvents runs src's event stream for configuration configID until ctx
// ends: at once on a database no other node shares, else in turns with the
// other nodes when src is a SharedEventSource (runShared).
func (e *Engine) runEvents(ctx context.Context, configID int64, src carrier.EventSource) {
	sink := eventSink{e: e, configID: configID}
	if shared, ok := src.(carrier.SharedEventSource); ok && e.db.Shared() {
		e.runShared(ctx, configID, shared, sink)
		return
	}
	src.Events(ctx, sink)
}

// runShared runs src's Events while this node holds the configuration's
// stream lease, and keeps src placing calls without a stream of its own
// (EventsElsewhere) while another node holds it, trying to take it at
// every renewal tick and when its holder hands it back.
func (e *Engine) runShared(ctx context.Context, configID int64, src carrier.SharedEventSource, sink eventSink) {
	s := &stream{configID: configID, poke: make(chan struct{}, 1)}
	e.streams.mu.Lock()
	if e.streams.all == nil {
		e.streams.all = map[*stream]struct{}{}
	}
	e.streams.all[s] = struct{}{}
	e.streams.mu.Unlock()
	defer func() {
		e.streams.mu.Lock()
		delete(e.streams.all, s)
		e.streams.mu.Unlock()
	}()
	elsewhere := false
	for ctx.Err() == nil {
		e.streams.mu.Lock()
		s.acquiring = true
		e.streams.mu.Unlock()
		sent := e.mono()
		l, ok, err := e.db.AcquireStreamLease(ctx, configID, e.cfg.Node, e.leaseTTL())
		e.streams.mu.Lock()
		s.acquiring = false
		if ok {
			s.lease, s.renewed = l, sent
		}
		e.streams.mu.Unlock()
		if err != nil && ctx.Err() == nil {
			e.log.Error("dialer: acquire event stream lease", slog.Int64("telephony_configuration_id", configID), slog.String("error", err.Error()))
		}
		if ok {
			if elsewhere {
				src.EventsElsewhere(false)
				elsewhere = false
			}
			hctx, cancel := context.WithCancel(ctx)
			e.streams.mu.Lock()
			s.cancel = cancel
			lapsed := s.lease.Node == "" // lost before Events started
			e.streams.mu.Unlock()
			if !lapsed {
				src.Events(hctx, sink) // until ctx ends or the lease is lost
			}
			cancel()
			e.streams.mu.Lock()
			s.lease, s.cancel = store.StreamLease{}, nil
			e.streams.mu.Unlock()
			// Handed back whether it ended for ctx or was lost (fenced by
			// its generation: a lease another node took is left alone).
			e.releaseStream(ctx, l)
			continue
		}
		if !elsewhere && err == nil {
			src.EventsElsewhere(true)
			elsewhere = true
		}
		select {
		case <-ctx.Done():
		case <-s.poke:
		}
	}
}

// releaseStream hands l back and tells the other nodes, which may take it
// at once.
func (e *Engine) releaseStream(ctx context.Context, l store.StreamLease) {
	if err := e.db.ReleaseStreamLease(context.WithoutCancel(ctx), l); err != nil {
		e.log.Error("dialer: release event stream lease", slog.Int64("telephony_configuration_id", l.ConfigID), slog.String("error", err.Error()))
		return
	}
	e.notify(ctx, noteStream, l.ConfigID)
}

// renewStreams is the renewal tick's part for event streams: it extends
// the stream leases held, ends the streams whose lease was lost or may
// have lapsed (its last renewal older than the TTL minus the margin: the
// database did not answer), hands back a lease this node holds for no
// stream of its own, and has the streams waiting for a lease try to take
// it (the holder's may have expired).
func (e *Engine) renewStreams(ctx context.Context) {
	e.streams.mu.Lock()
	held, waiting := 0, 0
	for s := range e.streams.all {
		if s.lease.Node != "" {
			held++
		} else {
			waiting++
		}
	}
	e.streams.mu.Unlock()
	if held > 0 {
		sent := e.mono()
		rctx, cancel := context.WithTimeout(ctx, e.leaseTTL()-e.leaseMargin())
		gens, err := e.db.RenewStreamLeases(rctx, e.cfg.Node, e.leaseTTL())
		cancel()
		if err != nil {
			e.log.Error("dialer: renew event stream leases", slog.String("error", err.Error()))
		}
		e.streams.mu.Lock()
		mine := map[int64]bool{}
		for s := range e.streams.all {
			if s.acquiring {
				mine[s.configID] = true // its lease may be in gens already
			}
			if s.lease.Node == "" {
				continue
			}
			switch {
			case err == nil && gens[s.configID] == s.lease.Generation:
				s.renewed = sent
				mine[s.configID] = true
			case err == nil || e.mono().Sub(s.renewed) >= e.leaseTTL()-e.leaseMargin():
				e.log.Warn("dialer: event stream lease lost; another node follows the calls",
					slog.Int64("telephony_configuration_id", s.configID))
				s.lease = store.StreamLease{}
				if s.cancel != nil {
					s.cancel()
				}
			}
		}
		e.streams.mu.Unlock()
		for id, gen := range gens {
			if !mine[id] {
				e.releaseStream(ctx, store.StreamLease{ConfigID: id, Node: e.cfg.Node, Generation: gen})
			}
		}
	}
	if waiting > 0 {
		e.pokeStreams(0)
	}
}

// pokeStreams has the streams waiting for configuration configID's lease
// (every configuration's: 0) try to take it now.
func (e *Engine) pokeStreams(configID int64) {
	e.streams.mu.Lock()
	defer e.streams.mu.Unlock()
	for s := range e.streams.all {
		if s.lease.Node == "" && (configID == 0 || s.configID == configID) {
			select {
			case s.poke <- struct{}{}:
			default:
			}
		}
	}
}

// holdsStream reports whether this node holds configuration configID's
// stream lease.
func (e *Engine) holdsStream(configID int64) bool {
	e.streams.mu.Lock()
	defer e.streams.mu.Unlock()
	for s := range e.streams.all {
		if s.configID == configID && s.lease.Node != "" {
			return true
		}
	}
	return false
}
