package contacts

import (
	"hash/maphash"
	"math/rand/v2"
	"testing"
)

func TestKeySet(t *testing.T) {
	s := newKeySet()
	ref := make(map[uint64]bool)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 200_000 {
		var k uint64
		switch i % 3 {
		case 0:
			k = 14155550000 + uint64(rng.IntN(100_000)) // dense, repeats
		case 1:
			k = rng.Uint64() | 1
		default:
			k = uint64(i)*1024 + 1 // same low bits
		}
		if got, want := s.add(k), !ref[k]; got != want {
			t.Fatalf("add(%d) = %v, want %v", k, got, want)
		}
		ref[k] = true
	}
	if s.len() != len(ref) {
		t.Fatalf("len = %d, want %d", s.len(), len(ref))
	}
	slots := 0
	for i := range s.shards {
		sh := &s.shards[i]
		if len(sh.slots)*3 < sh.n*4 {
			t.Fatalf("shard %d: %d keys in %d slots, want at most 3/4 full", i, sh.n, len(sh.slots))
		}
		slots += len(sh.slots)
	}
	if slots > 4*len(ref) {
		t.Fatalf("%d slots for %d keys, want at most 4 per key", slots, len(ref))
	}
}

func TestPhoneKey(t *testing.T) {
	seed := maphash.MakeSeed()
	tests := []struct {
		e164 string
		want uint64
	}{
		{"+14155550100", 14155550100},
		{"+390612345678", 390612345678},
		{"+3906123456789", 3906123456789},
		{"+9999999999999999999", 9999999999999999999}, // 19 digits, the largest exact key
	}
	for _, tt := range tests {
		if got := phoneKey(seed, tt.e164); got != tt.want {
			t.Fatalf("phoneKey(%q) = %d, want %d", tt.e164, got, tt.want)
		}
	}
	// Twenty digits: hashed above every exact key, stable, and distinct for
	// distinct numbers.
	a, b := phoneKey(seed, "+88612345678901234567"), phoneKey(seed, "+88612345678901234568")
	if a < 10_000_000_000_000_000_000 || b < 10_000_000_000_000_000_000 || a == b {
		t.Fatalf("phoneKey of 20 digits = %d, %d, want distinct keys from 10^19", a, b)
	}
	if again := phoneKey(seed, "+88612345678901234567"); again != a {
		t.Fatalf("phoneKey not stable: %d then %d", a, again)
	}
}
