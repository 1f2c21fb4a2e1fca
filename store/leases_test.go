package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/outdial/outdial/store"
)

// API.md 16: claims and placement writes are fenced by the lease's
// generation. Once another node took the campaign's lease (it expired),
// the old holder's claim fails with ErrLeaseLost and changes nothing; so
// does its placement write on PostgreSQL (on SQLite, which one process
// holds, placement writes are not fenced: checkLease); the new holder's
// succeed. On both engines.
func TestLeaseFencesClaimsAndPlacements(t *testing.T) {
	db := newDB(t)
	ctx := context.Background()
	org := newOrg(t, db.DB, "acme")
	c, err := db.CreateCampaign(ctx, org, newCampaignInput("fenced"), feedContacts(4, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	a, ok, err := db.AcquireLease(ctx, c.ID, "node-a", 15*time.Second)
	if err != nil || !ok {
		t.Fatalf("node A's lease: ok=%v, %v", ok, err)
	}
	if _, ok, err := db.AcquireLease(ctx, c.ID, "node-b", 15*time.Second); err != nil || ok {
		t.Fatalf("node B took a lease node A holds: ok=%v, %v", ok, err)
	}
	claimed, err := db.ClaimAttempts(ctx, a, t0, t0.Add(time.Hour), c.Timezones, 1)
	if err != nil || len(claimed) != 1 {
		t.Fatalf("node A's claim: %d, %v", len(claimed), err)
	}
	if node, err := db.DialedBy(ctx, c.ID); err != nil || node != "node-a" {
		t.Fatalf("dialed_by = %q, %v; want node-a", node, err)
	}

	// Node A's lease expires: node B takes it, generation + 1.
	db.Now = func() time.Time { return time.Now().Add(time.Minute) }
	b, ok, err := db.AcquireLease(ctx, c.ID, "node-b", 15*time.Second)
	if err != nil || !ok || b.Generation != a.Generation+1 {
		t.Fatalf("node B's take-over: %+v ok=%v, %v; want generation %d", b, ok, err, a.Generation+1)
	}
	if _, err := db.ClaimAttempts(ctx, a, t0, t0.Add(time.Hour), c.Timezones, 1); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("node A's claim after the take-over: %v, want ErrLeaseLost", err)
	}
	placed, err := db.MarkPlaced(ctx, store.Placement{AttemptID: claimed[0].ID, CampaignID: c.ID, OrganizationID: org,
		PhoneNumber: claimed[0].PhoneNumber, ProviderCallID: "CA-stale", At: t0, Deadline: t0.Add(time.Hour), Lease: a})
	if db.Shared() {
		if !errors.Is(err, store.ErrLeaseLost) || placed {
			t.Fatalf("node A's placement after the take-over: placed=%v, %v; want ErrLeaseLost", placed, err)
		}
		if got, err := db.GetAttempt(ctx, claimed[0].ID); err != nil || got.State != store.AttemptDialing || got.ProviderCallID != nil {
			t.Fatalf("attempt after the refused placement: %+v, %v; want dialing, no call id", got, err)
		}
	} else if err != nil || !placed {
		// One process holds a SQLite database: the "other node" is this
		// one, and its placement write (conditional on the attempt still
		// dialing) records the call that was made.
		t.Fatalf("placement on SQLite after the lease changed hands in process: placed=%v, %v; want placed", placed, err)
	}
	more, err := db.ClaimAttempts(ctx, b, t0, t0.Add(time.Hour), c.Timezones, 3)
	if err != nil || len(more) != 3 {
		t.Fatalf("node B's claim: %d, %v; want the 3 left", len(more), err)
	}
	if node, err := db.DialedBy(ctx, c.ID); err != nil || node != "node-b" {
		t.Fatalf("dialed_by = %q, %v; want node-b", node, err)
	}
	// Handed back: nobody dials it, and another node may take it at once.
	if err := db.ReleaseLease(ctx, b); err != nil {
		t.Fatal(err)
	}
	if node, err := db.DialedBy(ctx, c.ID); err != nil || node != "" {
		t.Fatalf("dialed_by after the hand-back = %q, %v; want none", node, err)
	}
	if _, ok, err := db.AcquireLease(ctx, c.ID, "node-c", 15*time.Second); err != nil || !ok {
		t.Fatalf("node C after the hand-back: ok=%v, %v", ok, err)
	}
}
