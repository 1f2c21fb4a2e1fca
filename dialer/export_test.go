package dialer

import "context"

// CachedCampaigns returns how many campaign snapshots the engine keeps
// (tests check that the cache is bounded).
func (e *Engine) CachedCampaigns() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.infos)
}

// RenewLeasesNow renews the engine's leases and adopts orphaned campaigns
// at once, as the renewal loop does every third of the lease's TTL.
func (e *Engine) RenewLeasesNow(ctx context.Context) {
	e.renew(ctx)
	e.adoptOrphans(ctx)
}

// Dials reports whether the engine has a runner for campaign id.
func (e *Engine) Dials(id int64) bool { return e.hasRunner(id) }

// HoldsLease reports whether the engine holds campaign id's lease.
func (e *Engine) HoldsLease(id int64) bool { return e.lease(id).Node != "" }
