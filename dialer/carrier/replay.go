package carrier

import (
	"hash/maphash"
	"sync"
	"time"
)

// replayTTL is how long a webhook's nonce, token id or signature is
// remembered: longer than every provider's timestamp tolerance (Telnyx
// ±300 s, our Vonage iat window).
const replayTTL = 10 * time.Minute

// replayMax bounds the memory of one replay cache (about 40 bytes an
// entry); beyond it the oldest entries are forgotten first.
const replayMax = 1 << 18

// replayCache remembers the keys of verified webhooks (Plivo and Vobiz
// nonces, Vonage JWT ids, Telnyx signatures) so the same signed request
// sent again is refused. Keys are kept as 64-bit seeded hashes. Safe for
// concurrent use; the zero value is ready.
type replayCache struct {
	mu    sync.Mutex
	seed  maphash.Seed
	init  bool
	until map[uint64]int64 // key → expiry (unix nanoseconds)
	ring  []replayEntry    // entries in insertion (= expiry) order
	head  int              // index of the oldest key in ring once full
}

// seen records key at now and reports whether it was already recorded
// within replayTTL.
func (c *replayCache) seen(key string, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.init {
		c.seed, c.init, c.until = maphash.MakeSeed(), true, map[uint64]int64{}
	}
	h := maphash.String(c.seed, key)
	t := now.UnixNano()
	if exp, ok := c.until[h]; ok && exp > t {
		return true
	}
	ent := replayEntry{key: h, exp: t + int64(replayTTL)}
	c.until[h] = ent.exp
	if len(c.ring) < replayMax {
		c.ring = append(c.ring, ent)
		return false
	}
	// Forget the oldest entry unless its key was recorded again since.
	if old := c.ring[c.head]; c.until[old.key] == old.exp {
		delete(c.until, old.key)
	}
	c.ring[c.head] = ent
	c.head = (c.head + 1) % replayMax
	return false
}

type replayEntry struct {
	key uint64
	exp int64
}
