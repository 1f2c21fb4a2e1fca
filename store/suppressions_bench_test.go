package store_test

import (
	"context"
	"crypto/rand"
	"fmt"
	mrand "math/rand/v2"
	"testing"
	"time"

	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/store/internal/testdb"
)

// benchSuppressions is the size of the list BenchmarkActiveSuppression
// looks numbers up in: API.md 12.1's million-number import.
const benchSuppressions = 1_000_000

// suppressedNumber is the i-th number on the benchmark's list: distinct
// E.164-shaped US numbers (the store does not validate them), spread over
// 100 area codes like a real list.
func suppressedNumber(i int) string {
	return fmt.Sprintf("+1%03d%07d", 201+i%100, 2_000_000+i/100)
}

// BenchmarkActiveSuppression measures the lookup the dialer makes right
// before every provider request (API.md 12.1: "a lookup costs
// microseconds") against an organization whose list holds 1,000,000
// entries, built with AddSuppressions 10,000 numbers per call, in a
// temporary database:
//
//	go test -run '^$' -bench ActiveSuppression -benchtime 200000x ./store/
//
// hit looks up numbers on the list, miss numbers that are not (a campaign's
// usual case), empty the same numbers in an organization with no list (the
// cost every call pays whatever the list's size). Numbers are drawn at
// random from 4,096 precomputed ones, so the lookups do not all hit the
// same pages.
func BenchmarkActiveSuppression(b *testing.B) {
	ctx := context.Background()
	key := make([]byte, store.KeySize)
	if _, err := rand.Read(key); err != nil {
		b.Fatal(err)
	}
	sealer, err := store.NewSealer(key)
	if err != nil {
		b.Fatal(err)
	}
	db, err := store.Open(ctx, testdb.Location(b), sealer)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	org := benchOrg(b, db, "listed")
	empty := benchOrg(b, db, "empty")

	t := time.Now()
	const chunk = 10_000
	numbers := make([]string, 0, chunk)
	for i := 0; i < benchSuppressions; i += chunk {
		numbers = numbers[:0]
		for j := i; j < min(i+chunk, benchSuppressions); j++ {
			numbers = append(numbers, suppressedNumber(j))
		}
		res, err := db.AddSuppressions(ctx, org, store.NewSuppressions{Source: store.SourceCSV}, numbers)
		if err != nil {
			b.Fatal(err)
		}
		if res.Added != len(numbers) {
			b.Fatalf("added %d of %d", res.Added, len(numbers))
		}
	}
	b.Logf("%d entries added in %.2f s", benchSuppressions, time.Since(t).Seconds())

	rng := mrand.New(mrand.NewPCG(1, 2))
	hits, misses := make([]string, 4096), make([]string, 4096)
	for i := range hits {
		hits[i] = suppressedNumber(rng.IntN(benchSuppressions))
		// The same area codes, line numbers past the list's.
		misses[i] = suppressedNumber(benchSuppressions + rng.IntN(benchSuppressions))
	}
	for _, bc := range []struct {
		name    string
		org     int64
		numbers []string
		listed  bool
	}{
		{"hit", org, hits, true},
		{"miss", org, misses, false},
		{"empty", empty, misses, false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			now := time.Now()
			i := 0
			for b.Loop() {
				hit, err := db.ActiveSuppression(ctx, bc.org, bc.numbers[i&4095], now)
				if err != nil {
					b.Fatal(err)
				}
				if (hit != nil) != bc.listed {
					b.Fatalf("%s: hit %v, want listed %v", bc.numbers[i&4095], hit, bc.listed)
				}
				i++
			}
		})
	}
}

// benchOrg creates an organization (through its first API key).
func benchOrg(b *testing.B, db *store.DB, name string) int64 {
	b.Helper()
	k, _, err := db.CreateAPIKey(context.Background(), name, "", store.RoleAdmin)
	if err != nil {
		b.Fatal(err)
	}
	return k.OrganizationID
}
