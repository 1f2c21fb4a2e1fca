package dialer

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/outdial/outdial/store"
)

// Leases (API.md 16). A node dials a campaign only while it holds the
// campaign's lease in the database; every claim and every write about a
// placement is fenced by the lease's generation in its own transaction
// (store.checkLease), and no provider request leaves once the lease may
// have lapsed: leaseValid measures from the last renewal that succeeded,
// on the monotonic clock, with a margin (the provider cannot check a
// fencing token). A node stopped with Stop hands its leases back at once
// and tells the other nodes; a node that dies loses them at their expiry,
// and another node's scan (every renewal tick) or a notification takes the
// campaign over, settling what the previous holder left (takeOver).
//
// On SQLite the same code runs with one node: its leases are taken back at
// once after a restart under the same name.

// DefaultLeaseTTL is serve --lease-ttl's default.
const DefaultLeaseTTL = 15 * time.Second

// leases are the campaigns this node holds.
type leases struct {
	mu   sync.Mutex
	held map[int64]*heldLease
	stop context.CancelFunc // ends the renewal loop and the listener
	done sync.WaitGroup
}

type heldLease struct {
	l store.Lease
	// renewed is the monotonic time the last successful renewal (or the
	// acquisition) was sent: the database extended the lease to at least
	// renewed + TTL.
	renewed time.Time
}

func (e *Engine) leaseTTL() time.Duration {
	if e.cfg.LeaseTTL > 0 {
		return e.cfg.LeaseTTL
	}
	return DefaultLeaseTTL
}

// leaseMargin is how long before its expiry a lease stops covering
// provider requests: time for a request to leave, and for clocks of the
// nodes (which compare expiries) to disagree.
func (e *Engine) leaseMargin() time.Duration { return e.leaseTTL() / 4 }

// acquire returns campaign id's lease, taking it when this node does not
// hold it yet; ok is false when another node holds it. A lease taken (not
// held before) is followed by takeOver before anything is dialed.
func (e *Engine) acquire(ctx context.Context, id int64) (store.Lease, bool) {
	e.leases.mu.Lock()
	h := e.leases.held[id]
	e.leases.mu.Unlock()
	if h != nil {
		return h.l, true
	}
	sent := e.mono()
	l, ok, err := e.db.AcquireLease(ctx, id, e.cfg.Node, e.leaseTTL())
	if err != nil {
		// A lease this node's name holds already (its previous life's,
		// at start) is still its own when the database takes no write (a
		// full disk): the campaign's calls in flight are followed, their
		// statuses held until they can be stored (unstored.go).
		if held, _, found, rerr := e.db.LeaseOf(ctx, id); rerr == nil && found && held.Node == e.cfg.Node {
			l, ok = held, true
		} else {
			if ctx.Err() == nil { // not the node stopping
				e.log.Error("dialer: acquire lease", slog.Int64("campaign_id", id), slog.String("error", err.Error()))
			}
			return store.Lease{}, false
		}
	}
	if !ok {
		return store.Lease{}, false
	}
	e.leases.mu.Lock()
	e.leases.held[id] = &heldLease{l: l, renewed: sent}
	e.leases.mu.Unlock()
	if err := e.takeOver(ctx, id, l); err != nil {
		e.log.Error("dialer: settle a campaign taken over", slog.Int64("campaign_id", id), slog.String("error", err.Error()))
		e.release(ctx, id)
		return store.Lease{}, false
	}
	return l, true
}

// leaseValid reports whether l still covers a provider request: this node
// holds it with l's generation and its last renewal is recent enough.
func (e *Engine) leaseValid(l store.Lease) bool {
	e.leases.mu.Lock()
	h := e.leases.held[l.CampaignID]
	ok := h != nil && h.l.Generation == l.Generation
	var renewed time.Time
	if ok {
		renewed = h.renewed // written by renew, under the same lock
	}
	e.leases.mu.Unlock()
	return ok && e.mono().Sub(renewed) < e.leaseTTL()-e.leaseMargin()
}

// lease returns the lease this node holds on campaign id (zero when none).
func (e *Engine) lease(id int64) store.Lease {
	e.leases.mu.Lock()
	defer e.leases.mu.Unlock()
	if h := e.leases.held[id]; h != nil {
		return h.l
	}
	return store.Lease{}
}

// release hands campaign id's lease back, if held, and tells the other
// nodes, which may take the campaign at once.
func (e *Engine) release(ctx context.Context, id int64) {
	e.leases.mu.Lock()
	h := e.leases.held[id]
	delete(e.leases.held, id)
	e.leases.mu.Unlock()
	if h == nil {
		return
	}
	if err := e.db.ReleaseLease(context.WithoutCancel(ctx), h.l); err != nil {
		e.log.Error("dialer: release lease", slog.Int64("campaign_id", id), slog.String("error", err.Error()))
		return
	}
	e.notify(ctx, noteReleased, id)
}

// lost forgets a lease that changed hands: the campaign's runner stops
// (its dispatches put their attempts back unsent) and its deadline watch
// is the new holder's.
func (e *Engine) lost(id int64) {
	e.leases.mu.Lock()
	_, had := e.leases.held[id]
	delete(e.leases.held, id)
	e.leases.mu.Unlock()
	if !had {
		return
	}
	e.log.Warn("dialer: campaign lease lost; another node dials it", slog.Int64("campaign_id", id))
	e.mu.Lock()
	r := e.runners[id]
	if t := e.watches[id]; t != nil {
		t.Stop()
		delete(e.watches, id)
	}
	e.mu.Unlock()
	if r != nil {
		r.halt()
	}
}

// leaseLost handles a store write refused with store.ErrLeaseLost; it
// reports whether err was that.
func (e *Engine) leaseLost(id int64, err error) bool {
	if !errors.Is(err, store.ErrLeaseLost) {
		return false
	}
	e.lost(id)
	return true
}

// startLeases starts the renewal loop, which also takes over orphaned
// campaigns, and the listener of the other nodes' notifications.
func (e *Engine) startLeases(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	e.leases.stop = cancel
	e.leases.done.Add(2)
	go func() {
		defer e.leases.done.Done()
		e.renewLoop(ctx)
	}()
	go func() {
		defer e.leases.done.Done()
		e.db.Listen(ctx, func(payload string) { e.noted(ctx, payload) })
	}()
}

// stopLeases ends the loops and hands back every lease held (Stop, once no
// request is under way).
func (e *Engine) stopLeases() {
	if e.leases.stop != nil {
		e.leases.stop()
	}
	e.leases.done.Wait()
	e.leases.mu.Lock()
	ids := make([]int64, 0, len(e.leases.held))
	for id := range e.leases.held {
		ids = append(ids, id)
	}
	e.leases.mu.Unlock()
	for _, id := range ids {
		e.release(context.Background(), id)
	}
}

// renewLoop renews the leases held every third of their TTL (the
// campaigns' and the event streams', streams.go) and looks for campaigns no
// node dials and event streams no node holds.
func (e *Engine) renewLoop(ctx context.Context) {
	t := time.NewTicker(e.leaseTTL() / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		e.renew(ctx)
		e.renewStreams(ctx)
		e.adoptOrphans(ctx)
	}
}

// renew extends every lease held; one another node took, or that the
// database no longer has, is lost.
func (e *Engine) renew(ctx context.Context) {
	e.leases.mu.Lock()
	n := len(e.leases.held)
	e.leases.mu.Unlock()
	if n == 0 {
		return
	}
	sent := e.mono()
	gens, err := e.db.RenewLeases(ctx, e.cfg.Node, e.leaseTTL())
	if err != nil {
		// The leases lapse on their own (leaseValid) if this goes on.
		e.log.Error("dialer: renew leases", slog.String("error", err.Error()))
		return
	}
	var gone []int64
	e.leases.mu.Lock()
	for id, h := range e.leases.held {
		if gens[id] == h.l.Generation {
			h.renewed = sent
		} else {
			gone = append(gone, id)
		}
	}
	e.leases.mu.Unlock()
	for _, id := range gone {
		e.lost(id)
	}
	// A lease kept for calls in flight after its runner ended (a paused
	// campaign) goes back once they are over, wherever they ended.
	for id := range gens {
		e.releaseIfIdle(ctx, id)
	}
	// Slots freed by statuses other nodes applied are counted again.
	e.recountAll()
}

// adoptOrphans wakes the campaigns that need a node and have none (their
// holder died, or handed them back): Wake takes the lease if it can.
func (e *Engine) adoptOrphans(ctx context.Context) {
	ids, err := e.db.OrphanedCampaigns(ctx)
	if err != nil {
		e.log.Error("dialer: orphaned campaigns", slog.String("error", err.Error()))
		return
	}
	for _, id := range ids {
		e.wake(id)
	}
}

// Notifications between nodes: "<kind>:<id>:<node>[:<extra>]".
const (
	noteChanged  = "c" // campaign id: a status applied, a pause or a PATCH: look again
	noteReleased = "r" // campaign id: its lease was handed back: take it if it needs a node
	noteConfig   = "f" // telephony configuration id: changed or deleted
	noteBackoff  = "b" // telephony configuration id: its provider refused (extra: until, unix ms)
	noteEnded    = "e" // campaign id: a call ended (extra: the EndedCall, JSON)
	noteStream   = "s" // telephony configuration id: its event stream lease was handed back: take it
	// organization id: its compliance policy or limits changed (orglimits.go)
	noteOrganization = "o"
)

// notify tells every node (this one too, which ignores its own) that
// campaign or configuration id changed. Errors are logged: the others look
// again at their next renewal tick anyway.
func (e *Engine) notify(ctx context.Context, kind string, id int64, extra ...string) {
	if !e.db.Shared() {
		return
	}
	payload := strings.Join(append([]string{kind, strconv.FormatInt(id, 10), e.cfg.Node}, extra...), ":")
	if err := e.db.Notify(context.WithoutCancel(ctx), payload); err != nil {
		e.log.Warn("dialer: notify other nodes", slog.Int64("id", id), slog.String("error", err.Error()))
	}
}

// noted handles another node's notification ("" once the listener is
// listening, at start and after a reconnection: everything is looked at
// again, since notifications sent before are lost).
func (e *Engine) noted(ctx context.Context, payload string) {
	if payload == "" {
		e.adoptOrphans(ctx)
		e.pokeStreams(0)
		e.recountAll()
		return
	}
	f := strings.SplitN(payload, ":", 4)
	if len(f) < 3 || f[2] == e.cfg.Node {
		return
	}
	kind, node := f[0], f[2]
	id, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil || node == "" {
		return
	}
	switch kind {
	case noteConfig:
		e.forgetConfig(id)
		return
	case noteStream:
		e.pokeStreams(id)
		return
	case noteOrganization:
		e.forgetOrganization(id)
		return
	case noteSuppressed, noteHaltAsked:
		if len(f) == 4 {
			e.answerAsk(ctx, kind, id, f[3])
		}
		return
	case noteAnswered:
		if len(f) == 4 {
			e.answered(f[3], node)
		}
		return
	case noteBackoff:
		if len(f) == 4 {
			if ms, err := strconv.ParseInt(f[3], 10, 64); err == nil {
				e.limiter(id).holdUntil(time.UnixMilli(ms))
			}
		}
		return
	}
	extra := ""
	if kind == noteEnded && len(f) == 4 {
		extra = f[3]
	}
	e.changedElsewhere(id, extra)
	e.mu.Lock()
	r := e.runners[id]
	e.mu.Unlock()
	switch {
	case r != nil:
		r.recount.Store(true)
		r.poke(true)
	case kind == noteReleased:
		// Taken, unless it was handed back because it completed (every
		// contact final, nothing in flight): that one would only be taken
		// and handed back again. A read that fails wakes it all the same.
		if c, err := e.db.CampaignByID(ctx, id); err != nil || c.State != store.StateCompleted {
			e.wake(id)
		}
	default:
		e.releaseIfIdle(ctx, id)
	}
}

// recountAll makes every runner count its campaign's slots again from the
// database at its next step.
func (e *Engine) recountAll() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, r := range e.runners {
		r.recount.Store(true)
		r.poke(false)
	}
}

// hasRunner reports whether campaign id has a runner (one started after
// the one that just ended shares its lease).
func (e *Engine) hasRunner(id int64) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.runners[id] != nil
}

// releaseIfIdle hands campaign id's lease back when no runner of this node
// dials it and the database has none of its calls dialing or in flight
// (the count of record: statuses other nodes applied are in it): another
// node may take the campaign when it runs again, and dialed_by is null.
func (e *Engine) releaseIfIdle(ctx context.Context, id int64) {
	if e.hasRunner(id) || e.lease(id).Node == "" {
		return
	}
	if n, err := e.db.CountActiveAttempts(ctx, id); err == nil && n == 0 {
		e.release(ctx, id)
	}
}
