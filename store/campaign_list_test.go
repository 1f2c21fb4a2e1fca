package store_test

import (
	"context"
	"fmt"
	"testing"
)

// TestRecentLogsOf: one query returns, per campaign, exactly what
// RecentLogs returns for it (the newest 50, oldest first), whatever the
// number of entries: none, a few, exactly 50, more than 50.
func TestRecentLogsOf(t *testing.T) {
	ctx := context.Background()
	db := newDB(t)
	org := newOrg(t, db.DB, "acme")
	counts := []int{0, 1, 49, 50, 51, 130}
	var ids []int64
	for i, n := range counts {
		c, err := db.CreateCampaign(ctx, org, newCampaignInput(fmt.Sprint("c", i)), feedContacts(1, nil, nil))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.ID)
		for j := range n {
			if _, err := db.AddLog(ctx, c.ID, "info", "campaign_started", fmt.Sprintf("c%d entry %d", i, j), map[string]any{"j": j}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Interleave the entries of two campaigns, as a running engine does.
	for j := range 60 {
		for _, id := range ids[4:] {
			if _, err := db.AddLog(ctx, id, "warning", "provider_rate_limited", fmt.Sprint("late ", j), nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	got, err := db.RecentLogsOf(ctx, append(ids, 999999)) // an id that does not exist adds nothing
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range ids {
		want, err := db.RecentLogs(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got[id]) != fmt.Sprint(want) {
			t.Errorf("campaign %d (%d entries): RecentLogsOf = %d entries, RecentLogs = %d\n got %v\nwant %v",
				id, counts[i], len(got[id]), len(want), got[id], want)
		}
		if counts[i] == 0 && len(got[id]) != 0 {
			t.Errorf("campaign without entries has %d", len(got[id]))
		}
	}
	if len(got) != len(ids)-1 {
		t.Errorf("campaigns with entries = %d, want %d", len(got), len(ids)-1)
	}
	if empty, err := db.RecentLogsOf(ctx, nil); err != nil || len(empty) != 0 {
		t.Errorf("RecentLogsOf(nil) = %v, %v", empty, err)
	}
}
