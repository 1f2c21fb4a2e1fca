package dialer

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/outdial/outdial/store"
)

// Guard rails (API.md 12): the state the engine keeps per organization for
// the checks it makes right before every provider request.
//
//   - The compliance policy, cached: it is read once per organization and
//     again after PolicyChanged, which the policy endpoint calls once the
//     new version is stored.
//   - The suppression gate: a dispatch holds its organization's gate for
//     reading from its suppression check until the provider answered its
//     request; SuppressionsAdded takes it for writing, so once it returns
//     every request that checked the list before the addition has been
//     made, and every later one checks the list with the addition in it. A
//     number added while a campaign runs is never called after the add
//     answered.
type guardRails struct {
	pmu      sync.Mutex
	policies map[int64]*store.VersionedPolicy // organization id → its policy, cached
	// changes counts PolicyChanged calls per organization: a policy read
	// from the database while one happened may predate it and is not
	// cached.
	changes map[int64]uint64
	gates   sync.Map // organization id → *sync.RWMutex

	sweepMu sync.Mutex
	sweep   *time.Timer // forgets old placements of the attempt cap
	stopped bool
}

// capSweepEvery is how often placements older than the longest cap window
// are forgotten (a dispatch also forgets its own number's).
const capSweepEvery = time.Hour

// sweepCap forgets placements older than the longest attempt-cap window
// and abandoned calls older than the longest recall hold, now and every
// capSweepEvery until stopSweep.
func (e *Engine) sweepCap(ctx context.Context) {
	if n, err := e.db.SweepNumberCalls(ctx); err != nil {
		e.log.Warn("dialer: sweep attempt cap", slog.String("error", err.Error()))
	} else if n > 0 {
		e.log.Info("dialer: forgot old placements of the attempt cap", slog.Int64("rows", n))
	}
	if n, err := e.db.SweepAbandonedNumbers(ctx); err != nil {
		e.log.Warn("dialer: sweep abandoned numbers", slog.String("error", err.Error()))
	} else if n > 0 {
		e.log.Info("dialer: forgot old abandoned calls of the recall hold", slog.Int64("rows", n))
	}
	g := &e.guard
	g.sweepMu.Lock()
	defer g.sweepMu.Unlock()
	if g.stopped || ctx.Err() != nil {
		return
	}
	g.sweep = time.AfterFunc(capSweepEvery, func() { e.sweepCap(ctx) })
}

func (e *Engine) stopSweep() {
	g := &e.guard
	g.sweepMu.Lock()
	defer g.sweepMu.Unlock()
	g.stopped = true
	if g.sweep != nil {
		g.sweep.Stop()
	}
}

// policy returns org's compliance policy.
func (e *Engine) policy(ctx context.Context, org int64) (*store.VersionedPolicy, error) {
	g := &e.guard
	g.pmu.Lock()
	p, gen := g.policies[org], g.changes[org]
	g.pmu.Unlock()
	if p != nil {
		return p, nil
	}
	read, err := e.db.CompliancePolicy(ctx, org)
	if err != nil {
		return nil, err
	}
	g.pmu.Lock()
	if g.changes[org] == gen {
		if g.policies == nil {
			g.policies = map[int64]*store.VersionedPolicy{}
		}
		g.policies[org] = &read
	}
	g.pmu.Unlock()
	return &read, nil
}

// PolicyChanged tells the engine, and the other nodes, that org's
// compliance policy changed: its running campaigns look at the new one at
// once.
func (e *Engine) PolicyChanged(org int64) {
	e.forgetOrganization(org)
	e.notify(context.Background(), noteOrganization, org)
}

// forgetPolicy drops org's cached policy.
func (e *Engine) forgetPolicy(org int64) {
	g := &e.guard
	g.pmu.Lock()
	delete(g.policies, org)
	if g.changes == nil {
		g.changes = map[int64]uint64{}
	}
	g.changes[org]++
	g.pmu.Unlock()
}

// pokeOrganization makes the runners of org's campaigns reload.
func (e *Engine) pokeOrganization(org int64) {
	e.mu.Lock()
	var poke []*runner
	for _, r := range e.runners {
		if c := r.campaign(); c != nil && c.OrganizationID == org {
			poke = append(poke, r)
		}
	}
	e.mu.Unlock()
	for _, r := range poke {
		r.poke(true)
	}
}

func (e *Engine) suppressionGate(org int64) *sync.RWMutex {
	if g, ok := e.guard.gates.Load(org); ok {
		return g.(*sync.RWMutex)
	}
	g, _ := e.guard.gates.LoadOrStore(org, &sync.RWMutex{})
	return g.(*sync.RWMutex)
}

// SuppressionsAdded returns once no provider request of org that checked
// the suppression list before numbers were added to it is still under way,
// on this node and on every other node dialing org's campaigns
// (suppressnodes.go; ctx ending stops the wait). Call it after the
// addition is stored and before answering the request that made it.
func (e *Engine) SuppressionsAdded(ctx context.Context, org int64) {
	e.cycleGate(org)
	e.awaitSuppressed(ctx, org)
}

// cycleGate returns once no request of org that checked the suppression
// list before is under way on this node.
func (e *Engine) cycleGate(org int64) {
	g := e.suppressionGate(org)
	g.Lock()
	//lint:ignore SA2001 an empty critical section: waiting for the readers is the point
	g.Unlock()
}
