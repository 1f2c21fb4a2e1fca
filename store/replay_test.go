package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/outdial/outdial/store"
)

// A status carrying replay keys is applied once while its keys are
// remembered, and again once they expired.
func TestApplyStatusReplayKeys(t *testing.T) {
	db := newDB(t)
	ctx := context.Background()
	org := newOrg(t, db.DB, "acme")
	c, err := db.CreateCampaign(ctx, org, newCampaignInput("r"), feedContacts(1, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	list, err := db.ClaimAttempts(ctx, leaseOf(t, db, c.ID), t0, t0.Add(time.Hour), c.Timezones, 1)
	if err != nil || len(list) != 1 {
		t.Fatalf("claim: %d %v", len(list), err)
	}
	ringing := func(at time.Time, keys ...string) store.Applied {
		t.Helper()
		res, err := db.ApplyStatus(ctx, list[0].ID, store.StatusUpdate{At: at, Raw: "ringing", FromProvider: true,
			ReplayKeys: keys, ReplayUntil: at.Add(10 * time.Minute)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for _, tc := range []struct {
		name    string
		at      time.Duration
		keys    []string
		ignored bool
	}{
		{"first", 0, []string{"nonce-1"}, false},
		{"repeat", time.Minute, []string{"nonce-1"}, true},
		{"another request", 2 * time.Minute, []string{"nonce-2"}, false},
		{"one key seen of two", 3 * time.Minute, []string{"nonce-3", "nonce-2"}, true},
		{"no keys (an unsigned provider)", 4 * time.Minute, nil, false},
		{"after the window", 11 * time.Minute, []string{"nonce-1"}, false},
	} {
		if got := ringing(t0.Add(tc.at), tc.keys...); got.Ignored != tc.ignored {
			t.Errorf("%s: ignored %v, want %v", tc.name, got.Ignored, tc.ignored)
		}
	}
}
