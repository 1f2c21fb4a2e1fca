package dialer

import (
	"context"
	"sync"
	"time"

	"github.com/outdial/outdial/store"
)

// Organization-wide concurrency (API.md 19). The database decides how many
// attempts a claim may take under the organization's max_concurrent_calls
// (store.ClaimAttemptsShared: exact across campaigns and nodes, shared
// fairly); the engine keeps the limit cached per organization, and wakes a
// campaign the limit holds back when one of the organization's calls ends
// here, or, for calls ending on other nodes, after orgRetryShared.

// orgRetryShared is how soon a campaign held back by its organization's
// limit claims again when other nodes may free its slots; orgRetryLocal is
// the same on a database no other node shares, where every freed slot wakes
// it at once (a safety net only).
const (
	orgRetryShared = 250 * time.Millisecond
	orgRetryLocal  = time.Second
)

// orgLimits caches each organization's max_concurrent_calls.
type orgLimits struct {
	mu      sync.Mutex
	limits  map[int64]int    // organization id → its limit, 0: none
	changes map[int64]uint64 // LimitsChanged calls per organization
}

// orgLimit returns org's max_concurrent_calls (0: no limit), read once and
// again after LimitsChanged.
func (e *Engine) orgLimit(ctx context.Context, org int64) (int, error) {
	o := &e.orgs
	o.mu.Lock()
	n, ok := o.limits[org]
	gen := o.changes[org]
	o.mu.Unlock()
	if ok {
		return n, nil
	}
	read, err := e.db.OrganizationLimits(ctx, org)
	if err != nil {
		return 0, err
	}
	if read != nil {
		n = *read
	}
	o.mu.Lock()
	if o.changes[org] == gen {
		if o.limits == nil {
			o.limits = map[int64]int{}
		}
		o.limits[org] = n
	}
	o.mu.Unlock()
	return n, nil
}

// LimitsChanged tells the engine, and the other nodes, that org's limits
// changed: its running campaigns claim under the new ones at once.
func (e *Engine) LimitsChanged(org int64) {
	e.forgetOrganization(org)
	e.notify(context.Background(), noteOrganization, org)
}

// forgetOrganization drops org's cached policy and limits here and makes
// its runners reload.
func (e *Engine) forgetOrganization(org int64) {
	o := &e.orgs
	o.mu.Lock()
	delete(o.limits, org)
	if o.changes == nil {
		o.changes = map[int64]uint64{}
	}
	o.changes[org]++
	o.mu.Unlock()
	e.forgetPolicy(org)
	e.pokeOrganization(org)
}

// shareOf is the organization limit r's claims are made under.
func (r *runner) shareOf() store.OrgShare {
	if r.orgLimit <= 0 {
		return store.OrgShare{}
	}
	return store.OrgShare{Organization: r.c.OrganizationID, Limit: r.orgLimit}
}

// orgRetry is when a runner held back by its organization's limit claims
// again at the latest.
func (e *Engine) orgRetry(now time.Time) time.Time {
	if e.db.Shared() {
		return now.Add(orgRetryShared)
	}
	return now.Add(orgRetryLocal)
}

// slotFreed wakes the runners held back by their organization's limit
// (any organization: the check is theirs, in their claim), once a call of
// campaign id ended here.
func (e *Engine) slotFreed() {
	if e.orgHeld.Load() == 0 {
		return
	}
	e.mu.Lock()
	var poke []*runner
	for _, r := range e.runners {
		if r.cs != nil && r.cs.orgHeld.Load() {
			poke = append(poke, r)
		}
	}
	e.mu.Unlock()
	for _, r := range poke {
		r.poke(false)
	}
}

// setOrgHeld records whether r's last claim was held back by the
// organization's limit (the diagnosis's org_concurrency).
func (r *runner) setOrgHeld(held bool) {
	if r.cs.orgHeld.Swap(held) != held {
		if held {
			r.e.orgHeld.Add(1)
		} else {
			r.e.orgHeld.Add(-1)
		}
	}
}
