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
