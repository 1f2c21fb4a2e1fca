// Package dialer is the in-process campaign engine. Each running campaign has
// one runner goroutine that claims due call attempts from the call-attempts
// table (the durable queue) and hands them to its carrier, never above the
// campaign's max_concurrency and paced by a token bucket; status webhooks and
// provider queries end attempts, which queues retries, trips the circuit
// breaker and completes campaigns. An attempt is written (claimed) before its
// provider request, so after a crash no attempt is placed twice: Start
// reconciles what was left in flight.
package dialer

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/outdial/outdial/dialer/carrier"
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
}

// Engine runs the campaigns. Build it with New, then Start it.
type Engine struct {
	cfg Config
	db  *store.DB
	log *slog.Logger
	now func() time.Time

	mu       sync.Mutex
	ctx      context.Context
	runners  map[int64]*runner
	limiters map[int64]*providerLimiter
	carriers map[int64]cachedCarrier
	camps    map[int64]*campaignState
	infos    map[int64]*campaignInfo
	live     liveAttempts          // see liveAttempts
	watches  map[int64]*time.Timer // deadline wake-ups of campaigns without a runner
	wg       sync.WaitGroup
	events   sync.WaitGroup // event streams of EventSource carriers
	stopped  bool
	agg      aggregator

	// countMu orders the first count of a campaign's active attempts
	// (write) against status applications (read, from before the status is
	// stored until the campaign's counter is settled): a status is either
	// in the database before the count or settles the counter after it,
	// never both or neither. Lock order: countMu, then mu.
	countMu sync.RWMutex
}

// campaignState is what the engine keeps per campaign across the runners
// the campaign has over time.
type campaignState struct {
	// active counts the campaign's attempts dialing or in flight; a
	// dispatch of an earlier runner still settles it.
	active atomic.Int64
	// gate orders provider requests against Halt: a dispatch holds it for
	// reading from its last halted check until the provider answered, so
	// once Halt has taken it for writing no request of the campaign is
	// under way and none can start.
	gate sync.RWMutex
}

type cachedCarrier struct {
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
	return &Engine{cfg: cfg, db: cfg.DB, log: cfg.Log, now: cfg.Now,
		runners: map[int64]*runner{}, limiters: map[int64]*providerLimiter{}, carriers: map[int64]cachedCarrier{},
		camps: map[int64]*campaignState{}, watches: map[int64]*time.Timer{}}
}

// Start reconciles attempts a previous process left dialing or in flight and
// starts a runner for every running campaign. The engine runs until ctx ends
// or Stop is called.
func (e *Engine) Start(ctx context.Context) error {
	e.mu.Lock()
	e.ctx = ctx
	e.mu.Unlock()
	if err := e.reconcileAtStart(ctx); err != nil {
		return fmt.Errorf("reconcile: %w", err)
	}
	ids, err := e.db.RunningCampaignIDs(ctx)
	if err != nil {
		return err
	}
	for _, id := range ids {
		e.Wake(id)
	}
	return nil
}

// Stop stops placing new calls and waits for the runners and the provider
// requests under way to finish. Calls already placed finish at the
// provider; their statuses are applied after a restart (or by reconciliation).
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
	e.wg.Wait()
	e.events.Wait()
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
		e.Wake(id)
	})
	e.watches[id] = t
}

// Wake makes the runner of campaign id look at it again now: after start,
// resume and PATCH, and in tests after moving the clock. It starts a runner
// when the campaign has none.
func (e *Engine) Wake(id int64) {
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

// campaign returns the engine's state of campaign id, counting its attempts
// dialing or in flight from the database the first time (after
// reconciliation).
func (e *Engine) campaign(id int64) (*campaignState, error) {
	e.mu.Lock()
	cs := e.camps[id]
	e.mu.Unlock()
	if cs != nil {
		return cs, nil
	}
	e.countMu.Lock()
	defer e.countMu.Unlock()
	e.mu.Lock()
	cs = e.camps[id]
	e.mu.Unlock()
	if cs != nil {
		return cs, nil
	}
	n, err := e.db.CountActiveAttempts(e.ctx, id)
	if err != nil {
		return nil, err
	}
	cs = &campaignState{}
	cs.active.Store(int64(n))
	e.mu.Lock()
	e.camps[id] = cs
	e.mu.Unlock()
	return cs, nil
}

// Halt stops campaign id's new dispatches at once, before the pause or
// cancel is answered: when Halt returns, every provider request of the
// campaign under way has been answered and no other will be made. Calls in
// flight finish normally.
func (e *Engine) Halt(id int64) {
	e.mu.Lock()
	r, cs := e.runners[id], e.camps[id]
	e.mu.Unlock()
	if r != nil {
		r.halt()
	}
	if cs != nil {
		// A runner that already stopped by itself halted its dispatches
		// too; wait for the requests any runner has under way.
		cs.gate.Lock()
		cs.gate.Unlock() //nolint:staticcheck // an empty critical section is the point: wait for the readers
	}
	e.wakeIfRunning(id)
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
		e.Wake(id)
	}
}

// Token returns the webhook token of attempt id: an HMAC of the id with the
// server secret, URL-safe.
func (e *Engine) Token(attemptID int64) string {
	m := hmac.New(sha256.New, e.cfg.TokenKey)
	m.Write([]byte("attempt:" + strconv.FormatInt(attemptID, 10)))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:18])
}

// ValidToken reports whether token is attempt id's token (constant time).
func (e *Engine) ValidToken(attemptID int64, token string) bool {
	return hmac.Equal([]byte(e.Token(attemptID)), []byte(token))
}

// callbackURL is the URL of kind ("answer" or "status") for an attempt.
func (e *Engine) callbackURL(provider, kind string, attemptID int64) string {
	return fmt.Sprintf("%s/api/v1/telephony/%s/%s/%d?t=%s", e.cfg.PublicURL, provider, kind, attemptID, e.Token(attemptID))
}

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
	if err != nil {
		return nil, carrier.Spec{}, err
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
	cc = cachedCarrier{updated: cfg.UpdatedAt, checked: wall, c: c, spec: spec}
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
// change applies to the next call and webhook.
func (e *Engine) ForgetConfig(configID int64) {
	e.mu.Lock()
	if cur, ok := e.carriers[configID]; ok && cur.stop != nil {
		cur.stop()
	}
	delete(e.carriers, configID)
	e.mu.Unlock()
}

// liveAttempts holds the attempts this process dispatched that are not final
// yet, so status and answer webhooks (five per answered call) need no read
// of the attempt: an entry is added before the provider request, gets the
// provider's call id and caller id once placed, follows the sequence of the
// progress applied, and goes with the final status or a requeue. After a
// restart the attempts in flight are read from the database instead.
type liveAttempts struct {
	mu sync.Mutex
	m  map[int64]*store.Attempt
}

func (l *liveAttempts) add(a *store.Attempt) {
	c := *a
	l.mu.Lock()
	if l.m == nil {
		l.m = map[int64]*store.Attempt{}
	}
	l.m[a.ID] = &c
	l.mu.Unlock()
}

// placed records the provider's call id and the caller id, unless the
// attempt ended meanwhile.
func (l *liveAttempts) placed(id int64, providerCallID, callerID string) {
	l.mu.Lock()
	if a := l.m[id]; a != nil {
		c := *a
		c.State, c.ProviderCallID, c.CallerID = store.AttemptInFlight, &providerCallID, &callerID
		l.m[id] = &c
	}
	l.mu.Unlock()
}

// progressed notes that a status of sequence seq was applied, and the
// provider call id that replaced the request id, if any (Status.RequestID).
func (l *liveAttempts) progressed(id int64, seq int, st carrier.Status) {
	l.mu.Lock()
	if a := l.m[id]; a != nil {
		c := *a
		if int64(seq) > c.Sequence {
			c.Sequence = int64(seq)
		}
		if st.RequestID != "" && st.ProviderCallID != "" && c.ProviderCallID != nil && *c.ProviderCallID == st.RequestID {
			c.ProviderCallID = &st.ProviderCallID
		}
		l.m[id] = &c
	}
	l.mu.Unlock()
}

// get returns a copy's pointer (entries are replaced, never changed).
func (l *liveAttempts) get(id int64) *store.Attempt {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.m[id]
}

func (l *liveAttempts) remove(id int64) {
	l.mu.Lock()
	delete(l.m, id)
	l.mu.Unlock()
}
