package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/outdial/outdial/store"
)

func noRetry(store.RetryConfig, int64, string) (bool, time.Time) { return false, time.Time{} }

// executed_count counts a call once, whichever of its placement, a progress
// report of the provider's or its final status is recorded first; a
// progress report not from the provider (none exists today, but the flag
// says so) does not count it.
func TestExecutedCountedOnce(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		steps []string
		want  []int64 // executed_count after each step
	}{
		{"placed, ringing, final", []string{"placed", "ringing", "final"}, []int64{1, 1, 1}},
		{"ringing overtakes the placement", []string{"ringing", "placed", "final"}, []int64{1, 1, 1}},
		{"answer lost, ringing, final", []string{"unconfirmed", "ringing", "final"}, []int64{0, 1, 1}},
		{"answer lost, final", []string{"unconfirmed", "final"}, []int64{0, 1}},
		{"ringing not from the provider", []string{"ringing-local", "placed"}, []int64{0, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := newDB(t)
			ctx := context.Background()
			org := newOrg(t, db.DB, "acme")
			c, err := db.CreateCampaign(ctx, org, newCampaignInput("x"), feedContacts(1, nil, nil))
			if err != nil {
				t.Fatal(err)
			}
			list, err := db.ClaimAttempts(ctx, leaseOf(t, db, c.ID), t0, t0.Add(time.Hour), c.Timezones, 1)
			if err != nil || len(list) != 1 {
				t.Fatalf("claim: %d %v", len(list), err)
			}
			a := list[0]
			p := store.Placement{AttemptID: a.ID, CampaignID: c.ID, ProviderCallID: "CA1", Deadline: t0.Add(time.Hour)}
			for i, step := range tc.steps {
				switch step {
				case "placed":
					_, err = db.MarkPlaced(ctx, p)
				case "unconfirmed":
					_, err = db.MarkUnconfirmed(ctx, p, "timeout")
				case "ringing", "ringing-local":
					_, err = db.ApplyStatus(ctx, a.ID, store.StatusUpdate{At: t0, Raw: "ringing", Sequence: 1,
						ProviderCallID: "CA1", FromProvider: step == "ringing"}, nil)
				case "final":
					_, err = db.ApplyStatus(ctx, a.ID, store.StatusUpdate{At: t0, Raw: "completed", Final: true,
						Outcome: "answered", Sequence: 2, ProviderCallID: "CA1", FromProvider: true}, noRetry)
				}
				if err != nil {
					t.Fatalf("%s: %v", step, err)
				}
				got, err := db.CampaignByID(ctx, c.ID)
				if err != nil {
					t.Fatal(err)
				}
				if got.ExecutedCount != tc.want[i] {
					t.Fatalf("after %s: executed_count %d, want %d", step, got.ExecutedCount, tc.want[i])
				}
			}
		})
	}
}
