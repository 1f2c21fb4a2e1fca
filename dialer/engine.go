package dialer

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/outdial/outdial/dialer/carrier"
	"github.com/outdial/outdial/dialer/metrics"
	"github.com/outdial/outdial/store"
)

// RingTimeout is how long a callee's phone may ring.
const RingTimeout = 60 * time.Second

// Config builds an Engine.
type Config struct {
	DB  *store.DB
	Log *slog.Logger
	// PublicURL is the base URL providers reach this service at, without a
	// trailing slash; callback URLs are built on it.
	PublicURL string
	// TokenKey signs the per-attempt webhook tokens.
	TokenKey []byte
	// AgentURL is the default voice-agent websocket URL (serve --agent-url);
	// a workflow's own agent_url wins.
	AgentURL string
	// MaxCallSeconds bounds a call; an attempt without a final status
	// RingTimeout + MaxCallSeconds after it started is reconciled.
	MaxCallSeconds int
	// Carriers are the options every provider adapter is built with.
	Carriers carrier.Options
	// NewCarrier builds a carrier; nil means carrier.New (tests replace it).
	NewCarrier func(provider string, creds map[string]any, opts carrier.Options) (carrier.Carrier, error)
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Metrics receives the engine's counters and histograms (observe.go);
	// nil records nothing.
	Metrics *metrics.Metrics
	// Node names this process among the nodes sharing the database (serve
	// --node-name): it holds the leases of the campaigns it dials
	// (lease.go). Empty: "local".
	Node string
	// LeaseTTL is how long a campaign's lease lasts without renewal
	// (serve --lease-ttl); zero: DefaultLeaseTTL.
	LeaseTTL time.Duration
	// Mono is the monotonic clock leases are measured on; nil means
	// time.Now (whose readings carry the monotonic clock).
	Mono func() time.Time
}

// Engine runs the campaigns. Build it with New, then Start it.
type Engine struct {
	cfg Config
	db  *store.DB
	log *slog.Logger
	now func() time.Time
	met *metrics.Metrics // nil: no metrics

	// mu guards the fields up to stopped and campaignState.users: maps
	// and flags only, never held across a store call, a provider request
	// or another lock of the engine but runner.cmu (doc.go).
	mu       sync.Mutex
	ctx      context.Context
	runners  map[int64]*runner
	limiters map[int64]*providerLimiter
	carriers map[int64]cachedCarrier
	camps    map[int64]*campaignState // slots.go
	infos    map[int64]*campaignInfo
	watches  map[int64]*time.Timer // deadline wake-ups of campaigns without a runner
	stopped  bool

	live     liveAttempts   // see liveAttempts
	wg       sync.WaitGroup // runners, dispatches and other goroutines of the engine
	events   sync.WaitGroup // event streams of EventSource carriers
	agg      aggregator
	guard    guardRails   // compliance policies and suppression gates (guard.go)
	watch    watcher      // the live streams' watcher (watch.go)
	unstored heldStatuses // final statuses not stored yet (unstored.go)
	leases   leases       // the campaigns this node holds (lease.go)
	streams  streams      // the event streams taking turns with other nodes (streams.go)
	notes    notes        // notifications to the other nodes (notes.go)
	// gateWaits are suppression additions waiting for other nodes
	// (suppressnodes.go).
	gateWaits gateWaits
	orgs      orgLimits    // organizations' limits (orglimits.go)
	orgHeld   atomic.Int64 // runners held back by their organization's limit
}

// New returns an engine that is not running yet.
func New(cfg Config) *Engine {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.NewCarrier == nil {
		cfg.NewCarrier = carrier.New
	}
	if cfg.MaxCallSeconds <= 0 {
		cfg.MaxCallSeconds = 3600
	}
	if cfg.Node == "" {
		cfg.Node = "local"
	}
	if cfg.Mono == nil {
		cfg.Mono = time.Now
	}
	return &Engine{cfg: cfg, db: cfg.DB, log: cfg.Log, now: cfg.Now, met: cfg.Metrics,
		runners: map[int64]*runner{}, limiters: map[int64]*providerLimiter{}, carriers: map[int64]cachedCarrier{},
		camps: map[int64]*campaignState{}, watches: map[int64]*time.Timer{},
		leases: leases{held: map[int64]*heldLease{}}}
}

// mono reads the monotonic clock leases are measured on.
func (e *Engine) mono() time.Time { return e.cfg.Mono() }

// callDeadline is how long after its claim or placement an attempt without
// a final status is reconciled (API.md 4.5).
func (e *Engine) callDeadline() time.Duration {
	return RingTimeout + time.Duration(e.cfg.MaxCallSeconds)*time.Second
}

// Start starts a runner for every running campaign and every campaign with
// attempts left dialing or in flight; each takes its campaign's lease if no
// other node holds it, and settles what a previous process left unfinished
// first (takeOver). It also starts renewing the leases and listening to the
// other nodes (lease.go). The engine runs until ctx ends or Stop is called.
func (e *Engine) Start(ctx context.Context) error {
	e.mu.Lock()
	e.ctx = ctx
	e.mu.Unlock()
	ids, err := e.db.RunningCampaignIDs(ctx)
	if err != nil {
		return err
	}
	unfinished, err := e.db.UnfinishedAttempts(ctx)
	if err != nil {
		return fmt.Errorf("reconcile: %w", err)
	}
	// What a previous process left unfinished is settled before Start
	// returns, in the campaigns this node can take.
	seen := map[int64]bool{}
	for _, a := range unfinished {
		if !seen[a.CampaignID] {
			seen[a.CampaignID] = true
			e.acquire(ctx, a.CampaignID)
			ids = append(ids, a.CampaignID)
		}
	}
	e.sweepCap(ctx)
	e.startLeases(ctx)
	for _, id := range ids {
		e.wake(id)
	}
	return nil
}

// Stop stops placing new calls, waits for the runners and the provider
// requests under way to finish, and hands the campaigns' leases back. Calls
// already placed finish at the provider; their statuses are applied by any
// node, or after a restart (or by reconciliation).
func (e *Engine) Stop() {
	e.mu.Lock()
	e.stopped = true
	for _, r := range e.runners {
		r.halt()
	}
	for _, t := range e.watches {
		t.Stop()
	}
	for _, cc := range e.carriers {
		if cc.stop != nil {
			cc.stop()
		}
	}
	e.mu.Unlock()
	e.stopSweep()
	e.stopHeldRetry()
	e.wg.Wait()
	e.events.Wait()
	// No request is under way and none can start: the leases go back at
	// once, so that another node dials the campaigns without waiting for
	// their expiry.
	e.stopLeases()
}

// watchDeadline wakes campaign id at the earliest deadline of its calls in
// flight, if it has any: a runner that stopped (the campaign paused or
// cancelled) leaves calls whose final status may never come, and a woken
// runner reconciles them even though it places no call.
func (e *Engine) watchDeadline(ctx context.Context, id int64) {
	d, err := e.db.NextDeadline(ctx, id)
	if err != nil || d.IsZero() {
		return
	}
	// An overdue deadline that could not be settled is retried a second
	// later, not in a loop.
	wait := max(d.Sub(e.now()), time.Second)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopped {
		return
	}
	if t := e.watches[id]; t != nil {
		t.Stop()
	}
	var t *time.Timer
	t = time.AfterFunc(wait, func() {
		e.mu.Lock()
		if e.watches[id] == t {
			delete(e.watches, id)
		}
		e.mu.Unlock()
		e.wake(id)
	})
	e.watches[id] = t
}

// Wake makes the runner of campaign id look at it again now: after start,
// resume and PATCH, and in tests after moving the clock. It starts a runner
// when the campaign has none, and tells the other nodes (the one holding
// the campaign's lease looks again).
func (e *Engine) Wake(id int64) {
	e.wake(id)
	e.noteChange(id)
}

// wake is Wake without telling the other nodes.
func (e *Engine) wake(id int64) {
	e.mu.Lock()
	ready := !e.stopped && e.ctx != nil
	e.mu.Unlock()
	if !ready {
		return
	}
	cs, err := e.campaign(id)
	if err != nil {
		e.log.Error("dialer: count active attempts", slog.Int64("campaign_id", id), slog.String("error", err.Error()))
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopped {
		return
	}
	if r := e.runners[id]; r != nil && !r.isDone() && !r.isHalted() {
		// The runner is not done yet; if it is deciding to stop, it sees
		// this poke in exit and looks again.
		r.poke(true)
		return
	}
	r := newRunner(e, id, cs)
	e.runners[id] = r
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		r.run(e.ctx)
	}()
}

// Halt stops campaign id's new dispatches at once, before the pause or
// cancel is answered: when Halt returns, every provider request of the
// campaign under way, on this node or on the node dialing it, has been
// answered and no other will be made (ctx ending stops the wait for another
// node). Calls in flight finish normally.
func (e *Engine) Halt(ctx context.Context, id int64) {
	// The node holding the campaign's lease, if another, halts it when
	// told (noteChange) and answers when asked (awaitHalted); its next
	// claim would find the campaign stopped anyway.
	e.noteChange(id)
	e.haltHere(id)
	e.awaitHalted(ctx, id)
}

// haltHere is Halt on this node.
func (e *Engine) haltHere(id int64) {
	e.mu.Lock()
	r, cs := e.runners[id], e.camps[id]
	e.mu.Unlock()
	if r != nil {
		r.halt()
	}
	if cs != nil {
		// A runner that already stopped by itself halted its dispatches
		// too; wait for the requests any runner has under way.
		cs.awaitRequests()
	}
	e.wakeIfRunning(id)
}

// awaitRequests returns once no provider request of the campaign is under
// way: a dispatch holds the gate for reading from its halted check until
// the provider answered (see runner.place), so taking it for writing waits
// for every one under way, and one that comes after sees its runner
// halted. Nothing is done under the gate: holding it is the wait.
func (cs *campaignState) awaitRequests() {
	cs.gate.Lock()
	defer cs.gate.Unlock()
}

// wakeIfRunning wakes campaign id after a halt if it is running after all:
// a resume whose Wake came before the halt (a pause and a resume requested
// together, or a user's resume racing the breaker) must not leave a running
// campaign without a runner.
func (e *Engine) wakeIfRunning(id int64) {
	e.mu.Lock()
	ctx := e.ctx
	e.mu.Unlock()
	if ctx == nil {
		return
	}
	if c, err := e.db.CampaignByID(ctx, id); err == nil && c.State == store.StateRunning {
		e.wake(id)
	}
}
