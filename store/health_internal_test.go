package store

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// TestPingHasItsOwnConnection: with every connection of the read pool
// taken (API load: parallel heavy lists), Ping still answers at once; once
// the database is closed it fails.
// SQLite-specific: exhausts the SQLite engine's read pool.
func TestPingHasItsOwnConnection(t *testing.T) {
	ctx := context.Background()
	sealer, err := NewSealer(make([]byte, KeySize))
	if err != nil {
		t.Fatal(err)
	}
	db, err := Open(ctx, filepath.Join(t.TempDir(), "outdial.db"), sealer)
	if err != nil {
		t.Fatal(err)
	}
	read := db.eng.(*sqliteEngine).read // a SQLite test: its read pool
	max := read.Stats().MaxOpenConnections
	for i := range max {
		c, err := read.Conn(ctx)
		if err != nil {
			t.Fatalf("conn %d: %v", i, err)
		}
		defer c.Close()
	}
	if n := read.Stats().InUse; n != max {
		t.Fatalf("read connections in use = %d, want all %d", n, max)
	}
	pctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	start := time.Now()
	if err := db.Ping(pctx); err != nil {
		t.Fatalf("Ping with the read pool exhausted: %v (after %v)", err, time.Since(start))
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Ping(ctx); err == nil {
		t.Fatal("Ping after Close succeeded")
	}
}
