package dialer

import "time"

// Bounded per-campaign state. The engine caches what it knows about a
// campaign (its snapshot for webhooks, its slot count, its aggregated log
// entries) while the campaign runs; when its runner ends (the campaign
// completed, was paused, cancelled or failed) the cache entries go, and
// are rebuilt from the database if the campaign runs again or a late
// webhook comes. Caps bound what a flood of webhooks for many finished
// campaigns could add meanwhile.

const (
	// maxCachedCampaigns bounds the campaign snapshots kept for webhooks;
	// past it the cache starts over (entries are cheap to rebuild).
	maxCachedCampaigns = 4096
	// maxAggregated bounds the aggregated log entries kept; past it the
	// entries older than their minute are dropped.
	maxAggregated = 4096
)

// forgetCampaignLocked drops what the engine keeps about campaign id once
// its runner ended: its snapshot, and its slot count when no slot is in use
// (it is counted again from the database when the campaign runs again).
// e.mu is held.
func (e *Engine) forgetCampaignLocked(id int64) {
	delete(e.infos, id)
	if cs := e.camps[id]; cs != nil && cs.inUse() == 0 {
		delete(e.camps, id)
	}
}

// slotReleased drops campaign id's slot count once its last slot was
// released after its runner ended (a completed campaign's runner ends
// before its last call's slot is released).
func (e *Engine) slotReleased(id int64, cs *campaignState) {
	e.mu.Lock()
	if e.runners[id] == nil && e.camps[id] == cs && cs.inUse() == 0 {
		delete(e.camps, id)
	}
	e.mu.Unlock()
}

// pruneAggregatedLocked drops aggregated log entries whose minute is over
// once there are more than maxAggregated. e.agg.mu is held.
func (e *Engine) pruneAggregatedLocked(now time.Time) {
	if len(e.agg.entries) < maxAggregated {
		return
	}
	for k, ent := range e.agg.entries {
		if now.Sub(ent.since) >= time.Minute {
			delete(e.agg.entries, k)
		}
	}
}
