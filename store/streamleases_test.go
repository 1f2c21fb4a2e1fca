package store_test

import (
	"context"
	"testing"
	"time"
)

// API.md 16: a configuration's event stream lease is held by one node at a
// time: another node takes it only once it expired or was handed back,
// each take grows its generation, renewals say which leases a node still
// holds, and a stale release leaves the new holder's lease alone.
func TestStreamLeases(t *testing.T) {
	ctx := context.Background()
	db := newDB(t)
	org := newOrg(t, db.DB, "a")
	cfgs, _ := secretConfigs(t)
	cfg, err := db.CreateTelephonyConfig(ctx, org, cfgs[0])
	if err != nil {
		t.Fatal(err)
	}
	now := time.UnixMilli(1_800_000_000_000)
	db.Now = func() time.Time { return now }

	a, ok, err := db.AcquireStreamLease(ctx, cfg.ID, "node-a", time.Minute)
	if err != nil || !ok || a.Generation != 1 || a.Node != "node-a" || a.ConfigID != cfg.ID {
		t.Fatalf("first acquire = %+v, %v, %v; want node-a's generation 1", a, ok, err)
	}
	if again, ok, err := db.AcquireStreamLease(ctx, cfg.ID, "node-a", time.Minute); err != nil || !ok || again.Generation != 2 {
		t.Fatalf("acquire by its holder = %+v, %v, %v; want generation 2", again, ok, err)
	} else {
		a = again
	}
	if _, ok, err := db.AcquireStreamLease(ctx, cfg.ID, "node-b", time.Minute); err != nil || ok {
		t.Fatalf("acquire of a held lease by another node: ok=%v, %v; want refused", ok, err)
	}
	if holder, err := db.StreamHolder(ctx, cfg.ID); err != nil || holder != "node-a" {
		t.Fatalf("holder = %q, %v; want node-a", holder, err)
	}

	now = now.Add(30 * time.Second)
	gens, err := db.RenewStreamLeases(ctx, "node-a", time.Minute)
	if err != nil || len(gens) != 1 || gens[cfg.ID] != a.Generation {
		t.Fatalf("renew = %v, %v; want {%d: %d}", gens, err, cfg.ID, a.Generation)
	}
	now = now.Add(59 * time.Second) // within the renewed lease
	if _, ok, _ := db.AcquireStreamLease(ctx, cfg.ID, "node-b", time.Minute); ok {
		t.Fatal("node-b took a lease renewed 59 s ago for a minute")
	}

	now = now.Add(2 * time.Second) // expired: node-a died
	b, ok, err := db.AcquireStreamLease(ctx, cfg.ID, "node-b", time.Minute)
	if err != nil || !ok || b.Generation != a.Generation+1 {
		t.Fatalf("acquire of an expired lease = %+v, %v, %v; want generation %d", b, ok, err, a.Generation+1)
	}
	if gens, err := db.RenewStreamLeases(ctx, "node-a", time.Minute); err != nil || len(gens) != 0 {
		t.Fatalf("renew by the old holder = %v, %v; want none held", gens, err)
	}
	if err := db.ReleaseStreamLease(ctx, a); err != nil {
		t.Fatal(err)
	}
	if holder, _ := db.StreamHolder(ctx, cfg.ID); holder != "node-b" {
		t.Fatalf("holder after a stale release = %q, want node-b", holder)
	}

	if err := db.ReleaseStreamLease(ctx, b); err != nil {
		t.Fatal(err)
	}
	if holder, _ := db.StreamHolder(ctx, cfg.ID); holder != "" {
		t.Fatalf("holder after a release = %q, want none", holder)
	}
	if c, ok, err := db.AcquireStreamLease(ctx, cfg.ID, "node-c", time.Minute); err != nil || !ok || c.Generation != b.Generation+1 {
		t.Fatalf("acquire of a handed back lease = %+v, %v, %v", c, ok, err)
	}
}
