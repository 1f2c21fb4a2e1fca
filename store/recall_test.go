package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/outdial/outdial/store"
)

// The recall hold's record (API.md 19): an abandoned call notes its number
// and answer for the whole organization, in the transaction that ends it;
// a call that was not abandoned notes nothing; a newer answer replaces an
// older one, never the reverse; answers older than the longest hold are
// not reported and are swept.
func TestAbandonedNumbers(t *testing.T) {
	db := newDB(t)
	ctx := context.Background()
	acme, other := newOrg(t, db.DB, "acme"), newOrg(t, db.DB, "other")
	t0 := time.Date(2030, 1, 2, 10, 0, 0, 0, time.UTC)
	const number = "+14150000000" // contact 0 of every campaign (feedContacts)
	// call places one call to number in a new campaign of org, answered at
	// answered and ended a minute later: abandoned unless greeting.
	call := func(org int64, answered time.Time, greeting bool) {
		t.Helper()
		c, err := db.CreateCampaign(ctx, org, newCampaignInput("c"), feedContacts(1, nil, nil))
		if err != nil {
			t.Fatal(err)
		}
		list, err := db.ClaimAttempts(ctx, leaseOf(t, db, c.ID), t0.Add(-time.Hour), t0.Add(time.Hour), c.Timezones, 1)
		if err != nil || len(list) != 1 || list[0].PhoneNumber != number {
			t.Fatalf("claim: %v %v", list, err)
		}
		id := list[0].ID
		if _, err := db.ApplyStatus(ctx, id, store.StatusUpdate{At: answered, Raw: "in-progress", Sequence: 1, Answered: true, FromProvider: true}, nil); err != nil {
			t.Fatal(err)
		}
		res, err := db.ApplyStatus(ctx, id, store.StatusUpdate{At: answered.Add(time.Minute), Raw: "completed", Final: true,
			Outcome: "answered", Sequence: 2, FromProvider: true, AudioAtAnswer: greeting}, noRetry)
		if err != nil || res.Abandonment.Abandoned == nil || *res.Abandonment.Abandoned == greeting {
			t.Fatalf("end: %+v %v", res.Abandonment, err)
		}
	}
	last := func(org int64, now time.Time) (time.Time, bool) {
		t.Helper()
		at, found, err := db.LastAbandonedAnswer(ctx, org, number, now)
		if err != nil {
			t.Fatal(err)
		}
		return at, found
	}
	if _, found := last(acme, t0); found {
		t.Fatal("a number never called is recorded")
	}
	call(acme, t0, false)
	if at, found := last(acme, t0.Add(time.Hour)); !found || !at.Equal(t0) {
		t.Fatalf("after an abandoned call: %v %v, want its answer %v", at, found, t0)
	}
	if _, found := last(other, t0.Add(time.Hour)); found {
		t.Fatal("another organization's abandoned call is reported")
	}
	// Another campaign of acme: a call in time notes nothing.
	call(acme, t0.Add(2*time.Hour), true)
	if at, _ := last(acme, t0.Add(3*time.Hour)); !at.Equal(t0) {
		t.Fatalf("after a call in time: %v, want %v", at, t0)
	}
	// A newer abandoned answer replaces it; an older one, ending later, does not.
	call(acme, t0.Add(3*time.Hour), false)
	call(acme, t0.Add(time.Hour), false)
	newest := t0.Add(3 * time.Hour)
	if at, _ := last(acme, t0.Add(4*time.Hour)); !at.Equal(newest) {
		t.Fatalf("after a newer and an older abandoned call: %v, want %v", at, newest)
	}
	// The longest hold's edge: remembered at exactly 720 h, not after.
	edge := newest.Add(store.MaxRecallAfterHours * time.Hour)
	if _, found := last(acme, edge); !found {
		t.Fatal("forgotten at the longest hold's end")
	}
	if _, found := last(acme, edge.Add(time.Millisecond)); found {
		t.Fatal("reported after the longest hold")
	}
	db.Now = func() time.Time { return edge }
	if n, err := db.SweepAbandonedNumbers(ctx); err != nil || n != 0 {
		t.Fatalf("sweep at the edge: %d %v, want 0", n, err)
	}
	db.Now = func() time.Time { return edge.Add(time.Millisecond) }
	if n, err := db.SweepAbandonedNumbers(ctx); err != nil || n != 1 {
		t.Fatalf("sweep after the edge: %d %v, want 1", n, err)
	}
}
