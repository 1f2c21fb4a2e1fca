package dialer

// CachedCampaigns returns how many campaigns the engine keeps a snapshot or
// a slot count of (tests check that the caches are bounded).
func (e *Engine) CachedCampaigns() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.infos) + len(e.camps)
}
