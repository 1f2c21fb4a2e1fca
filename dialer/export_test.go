package dialer

import (
	"context"
	"time"
)

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

// RenewStreamsNow renews the engine's event stream leases and has its
// streams waiting for one try to take it, as the renewal loop does every
// third of the lease's TTL.
func (e *Engine) RenewStreamsNow(ctx context.Context) { e.renewStreams(ctx) }

// HoldsStream reports whether the engine holds telephony configuration
// configID's event stream lease.
func (e *Engine) HoldsStream(configID int64) bool { return e.holdsStream(configID) }

// Dials reports whether the engine has a runner for campaign id.
func (e *Engine) Dials(id int64) bool { return e.hasRunner(id) }

// HoldsLease reports whether the engine holds campaign id's lease.
func (e *Engine) HoldsLease(id int64) bool { return e.lease(id).Node != "" }

// AbandonAfter is how long a person who answered a call of organization
// org may wait for the agent's first audio (the policy's abandon_after_ms).
func (e *Engine) AbandonAfter(ctx context.Context, org int64) time.Duration {
	return e.abandonAfter(ctx, org)
}
