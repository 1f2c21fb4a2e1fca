package dialer

// CachedCampaigns returns how many campaign snapshots the engine keeps
// (tests check that the cache is bounded).
func (e *Engine) CachedCampaigns() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.infos)
}
