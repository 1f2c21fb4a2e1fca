package store_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	mrand "math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/outdial/outdial/store"
)

// BenchmarkLastAbandonedAnswer measures the recall hold's lookup, made
// right before every provider request while the abandonment policy is
// enabled (API.md 19), in a SQLite database whose organization has
// 1,000,000 abandoned numbers:
//
//	go test -run '^$' -bench LastAbandonedAnswer -benchtime 200000x ./store/
//
// hit looks up numbers in the table, miss numbers that are not (the usual
// case).
func BenchmarkLastAbandonedAnswer(b *testing.B) {
	ctx := context.Background()
	key := make([]byte, store.KeySize)
	if _, err := rand.Read(key); err != nil {
		b.Fatal(err)
	}
	sealer, err := store.NewSealer(key)
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "outdial.db")
	db, err := store.Open(ctx, path, sealer)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()
	now := time.Now()
	if _, err := raw.ExecContext(ctx, `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 999999)
INSERT INTO abandoned_numbers (organization_id, phone_number, answered_at, attempt_id)
SELECT 1, printf('+1%03d%07d', 201 + i % 100, 2000000 + i / 100), ?, i FROM n`, now.Add(-time.Hour).UnixMilli()); err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		found bool
	}{{"hit", true}, {"miss", false}} {
		b.Run(tc.name, func(b *testing.B) {
			numbers := make([]string, 4096)
			for i := range numbers {
				n := suppressedNumber(mrand.IntN(1_000_000))
				if !tc.found {
					n = suppressedNumber(2_000_000 + mrand.IntN(1_000_000))
				}
				numbers[i] = n
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				_, found, err := db.LastAbandonedAnswer(ctx, 1, numbers[i%len(numbers)], now)
				if err != nil || found != tc.found {
					b.Fatalf("found %v %v, want %v", found, err, tc.found)
				}
			}
		})
	}
}
