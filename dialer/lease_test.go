package dialer_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer"
	"github.com/outdial/outdial/dialer/carrier"
	"github.com/outdial/outdial/dialer/carrier/twiliosim"
	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/web"
)

// quickAnswer answers every call and hangs up soon after.
func quickAnswer(twiliosim.CallInfo) twiliosim.Script {
	return twiliosim.Script{Outcome: twiliosim.Human, RingDelay: 5 * time.Millisecond, TalkDuration: 30 * time.Millisecond}
}

// monoClock is a monotonic clock the test moves by hand (leases are
// measured on it).
type monoClock struct {
	mu sync.Mutex
	t  time.Time
}

func newMonoClock() *monoClock { return &monoClock{t: time.Now()} }

func (m *monoClock) Now() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.t
}

func (m *monoClock) Advance(d time.Duration) {
	m.mu.Lock()
	m.t = m.t.Add(d)
	m.mu.Unlock()
}

// withLease sets the engine's lease TTL and monotonic clock.
func withLease(ttl time.Duration, mono func() time.Time) harnessOption {
	return func(o *harnessOptions) { o.leaseTTL, o.mono = ttl, mono }
}

// API.md 16: no provider request leaves a node whose lease may have
// lapsed. The lease's last renewal is older than its TTL minus the margin
// on the monotonic clock (the process was paused, the database did not
// answer): nothing is dialed, nothing claimed, until a renewal succeeds;
// then the campaign goes on and every contact is called once.
func TestNoRequestWhileTheLeaseMayHaveLapsed(t *testing.T) {
	mono := newMonoClock()
	h := newHarness(t, twiliosim.Config{Script: quickAnswer}, withLease(time.Hour, mono.Now))
	c := h.campaign(40, store.Settings{MaxConcurrency: 2, RateLimitPerSecond: 20}, nil)
	h.do(c.ID, store.OpStart)
	h.waitSim("a few calls", func(st twiliosim.Stats) bool { return st.Created >= 4 })

	mono.Advance(time.Hour) // past the TTL since the last renewal
	// Requests under way finish; then nothing more leaves.
	h.waitFor("no call dialing", func() bool { return h.countAttempts(c.ID, store.AttemptDialing) == 0 })
	before := h.sim.Stats().Created
	h.steady("no request while the lease may have lapsed", func() bool { return h.sim.Stats().Created == before })
	if got := h.get(c.ID); got.State != store.StateRunning {
		t.Fatalf("state %s, want running (only waiting for its lease)", got.State)
	}

	h.eng.RenewLeasesNow(context.Background())
	h.waitState(c.ID, store.StateCompleted)
	h.checkCalledOnce(40)
}

// API.md 16: a node that lost its campaign's lease (another node took it
// over after it expired) places nothing it claimed before, claims nothing
// more, and the node that took over completes the campaign: every contact
// called once, max_concurrency never exceeded. PostgreSQL only: two
// engines share one database as two nodes do.
func TestLeaseTakenOverByAnotherNode(t *testing.T) {
	monoA := newMonoClock()
	h := newHarness(t, twiliosim.Config{Script: quickAnswer}, withLease(time.Hour, monoA.Now))
	if !h.db.Shared() {
		t.Skip("two nodes need a database they share (PostgreSQL: OUTDIAL_TEST_DATABASE_URL)")
	}
	c := h.campaign(60, store.Settings{MaxConcurrency: 3, RateLimitPerSecond: 20}, nil)
	h.do(c.ID, store.OpStart)
	h.waitSim("a few calls", func(st twiliosim.Stats) bool { return st.Created >= 6 })

	// Node A is paused past its lease (its monotonic clock jumps), and
	// node B, whose clock is past the lease's expiry, takes the campaign.
	monoA.Advance(2 * time.Hour)
	ctx := context.Background()
	engB := startNode(h, "node-b", 2*time.Hour)
	engB.RenewLeasesNow(ctx)
	h.waitFor("node B holds the lease", func() bool { return engB.HoldsLease(c.ID) })

	// Node A wakes: its renewal (the ticker's tick overdue at once) finds
	// the lease taken, and it stops; a claim would have been fenced.
	h.eng.Wake(c.ID)
	h.eng.RenewLeasesNow(ctx)
	h.waitFor("node A stops dialing", func() bool { return !h.eng.Dials(c.ID) && !h.eng.HoldsLease(c.ID) })
	h.waitState(c.ID, store.StateCompleted)
	for to, n := range h.sim.CreatesByTo() {
		if n > 1 {
			t.Errorf("%s called %d times", to, n)
		}
	}
	if peak := h.sim.PeakInFlight(); peak > 3 {
		t.Errorf("%d calls at once at the provider, max_concurrency 3", peak)
	}
	for _, k := range h.contacts(c.ID) {
		if k.Outcome == nil {
			t.Errorf("contact row %d has no outcome", k.Row)
		}
	}
}

// API.md 16: a node stopped (SIGTERM: Engine.Stop) hands its leases back
// at once and tells the others, one of which takes the campaign without
// waiting for the lease's expiry and completes it.
func TestLeaseHandedBackOnStop(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: quickAnswer}, withLease(time.Hour, nil))
	if !h.db.Shared() {
		t.Skip("two nodes need a database they share (PostgreSQL: OUTDIAL_TEST_DATABASE_URL)")
	}
	c := h.campaign(60, store.Settings{MaxConcurrency: 3, RateLimitPerSecond: 20}, nil)
	h.do(c.ID, store.OpStart)
	h.waitSim("a few calls", func(st twiliosim.Stats) bool { return st.Created >= 6 })
	engB := startNode(h, "node-b", 0)
	if engB.HoldsLease(c.ID) {
		t.Fatal("node B took a lease node A holds")
	}
	h.stopEngine() // hands the lease back; its expiry is an hour away
	h.waitFor("node B takes the campaign", func() bool { return engB.HoldsLease(c.ID) })
	h.waitState(c.ID, store.StateCompleted)
	for to, n := range h.sim.CreatesByTo() {
		if n > 1 {
			t.Errorf("%s called %d times", to, n)
		}
	}
}

// startNode starts a second node's engine on the harness's database (its
// store's clock skewed by skew) and sends the webhooks to it from now on,
// as a load balancer in front of both would; it is stopped at the end.
func startNode(h *harness, name string, skew time.Duration) *dialer.Engine {
	return startNodeRouted(h, name, skew, true)
}

// startNodeRouted is startNode; route false leaves the webhooks with the
// harness's node.
func startNodeRouted(h *harness, name string, skew time.Duration, route bool) *dialer.Engine {
	h.t.Helper()
	ctx := context.Background()
	sealer, err := store.NewSealer(make([]byte, store.KeySize))
	if err != nil {
		h.t.Fatal(err)
	}
	db, err := store.Open(ctx, h.dbPath, sealer)
	if err != nil {
		h.t.Fatal(err)
	}
	db.Now = func() time.Time { return h.clock.Now().Add(skew) }
	eng := dialer.New(dialer.Config{DB: db, PublicURL: h.public, TokenKey: []byte("test-token-key"),
		Carriers: carrier.Options{BaseURLs: map[string]string{h.prov.Provider(): h.prov.BaseURL()}},
		Now:      h.clock.Now, Node: name, LeaseTTL: time.Hour})
	if route {
		var api http.Handler = web.New(web.Config{DB: db, Dialer: eng, PublicURL: h.public})
		h.handler.Store(&api)
	}
	ctx, cancel := context.WithCancel(ctx)
	h.t.Cleanup(func() {
		cancel()
		eng.Stop()
		db.Close()
	})
	if err := eng.Start(ctx); err != nil {
		h.t.Fatal(err)
	}
	return eng
}

// API.md 16: a stream on one node follows a campaign dialed by another.
// Node B's watcher (what its event streams are fed by) hears of every call
// that ended on node A, with its outcome, within the notifications'
// coalescing delay, and of the campaign's other changes.
func TestChangesReachOtherNodes(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: quickAnswer})
	if !h.db.Shared() {
		t.Skip("two nodes need a database they share (PostgreSQL: OUTDIAL_TEST_DATABASE_URL)")
	}
	engB := startNodeRouted(h, "node-b", 0, false)
	var mu sync.Mutex
	ended := map[int64]string{}
	changes := 0
	engB.Watch(func(c dialer.Change) {
		mu.Lock()
		defer mu.Unlock()
		changes++
		if c.Ended != nil {
			ended[c.Ended.AttemptID] = c.Ended.Outcome
		}
	})
	c := h.campaign(20, store.Settings{MaxConcurrency: 4, RateLimitPerSecond: 20}, nil)
	h.do(c.ID, store.OpStart)
	h.waitState(c.ID, store.StateCompleted)
	h.waitFor("node B heard of every call that ended", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(ended) == 20
	})
	mu.Lock()
	defer mu.Unlock()
	for id, outcome := range ended {
		if outcome != "answered" {
			t.Errorf("attempt %d ended %q on node B's watcher, want answered", id, outcome)
		}
	}
	if engB.Dials(c.ID) || engB.HoldsLease(c.ID) {
		t.Error("node B dials a campaign node A holds")
	}
	if changes <= 20 {
		t.Errorf("%d changes heard, want the ends and the campaign's other changes", changes)
	}
}
