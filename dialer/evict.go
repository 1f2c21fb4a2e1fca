package dialer

import "time"

// Bounded per-campaign state. The engine caches a campaign's snapshot for
// webhooks and its aggregated log entries while the campaign runs; when
// its runner ends (the campaign completed, was paused, cancelled or
// failed) the snapshot goes, and is read again from the database if the
// campaign runs again or a late webhook comes. Caps bound what a flood of webhooks for many finished
// campaigns could add meanwhile.

const (
	// maxCachedCampaigns bounds the campaign snapshots kept for webhooks;
	// past it the cache starts over (entries are cheap to rebuild).
	maxCachedCampaigns = 4096
	// maxAggregated bounds the aggregated log entries kept; past it the
	// entries older than their minute are dropped.
	maxAggregated = 4096
)

// forgetCampaignLocked drops campaign id's snapshot once its runner ended.
// Its slot count stays (a few words): a dispatch or status of the ended
// runner may still release a slot, and the next runner must share the
// count. e.mu is held.
func (e *Engine) forgetCampaignLocked(id int64) {
	delete(e.infos, id)
}

// pruneLocked drops aggregated log entries whose minute is over once there
// are more than maxAggregated. An entry in use (its lock held) is not over
// and is skipped, so a.mu is never held waiting for an entry's write. a.mu
// is held.
func (a *aggregator) pruneLocked(now time.Time) {
	if len(a.entries) < maxAggregated {
		return
	}
	for k, ent := range a.entries {
		if !ent.mu.TryLock() {
			continue
		}
		if ent.id == 0 || now.Sub(ent.since) >= time.Minute {
			ent.dead = true
			delete(a.entries, k)
		}
		ent.mu.Unlock()
	}
}
