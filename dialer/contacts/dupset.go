package contacts

// keySet is the duplicate set: non-zero uint64 keys in 256 open-addressing
// tables with linear probing, 8 bytes per slot, each at most 3/4 full. One
// million keys take 16 MiB, about half of what a map[uint64]struct{} needs.
// Splitting the set into shards keeps a doubling small: one shard at a time
// holds its old and new table, not the whole set, so the live heap (and the
// garbage collector's heap goal, twice the live heap) does not jump when the
// set grows.
type keySet struct {
	shards [256]keyShard
	n      int
}

// keyShard is one open-addressing table.
type keyShard struct {
	slots []uint64 // 0 marks an empty slot; len is a power of two
	bits  uint     // log2(len(slots))
	n     int
}

// newKeySet returns an empty set.
func newKeySet() *keySet {
	const initialBits = 4
	s := &keySet{}
	for i := range s.shards {
		s.shards[i] = keyShard{slots: make([]uint64, 1<<initialBits), bits: initialBits}
	}
	return s
}

// add inserts k, which must not be 0, and reports whether it was absent.
func (s *keySet) add(k uint64) bool {
	// Fibonacci hashing spreads keys that differ only in their low digits:
	// the top 8 bits pick the shard, the next ones the slot.
	h := k * 0x9E3779B97F4A7C15
	sh := &s.shards[h>>56]
	if !sh.insert(k, h<<8) {
		return false
	}
	s.n++
	sh.n++
	if sh.n*4 > len(sh.slots)*3 {
		sh.grow()
	}
	return true
}

// insert puts k in its slot unless it is there already; h holds the hash
// bits that choose the slot, highest first.
func (sh *keyShard) insert(k, h uint64) bool {
	mask := uint64(len(sh.slots) - 1)
	for i := h >> (64 - sh.bits); ; i = (i + 1) & mask {
		switch sh.slots[i] {
		case k:
			return false
		case 0:
			sh.slots[i] = k
			return true
		}
	}
}

// grow doubles the shard's table.
func (sh *keyShard) grow() {
	old := sh.slots
	sh.bits++
	sh.slots = make([]uint64, 1<<sh.bits)
	for _, k := range old {
		if k != 0 {
			sh.insert(k, (k*0x9E3779B97F4A7C15)<<8)
		}
	}
}

// len returns the number of keys.
func (s *keySet) len() int { return s.n }
