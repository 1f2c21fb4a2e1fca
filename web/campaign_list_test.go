package web_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
)

// TestCampaignListLogs: each campaign of a list page carries the same
// newest 50 log entries as the campaign itself, whatever its number of
// entries (read for the whole page at once, store.RecentLogsOf).
func TestCampaignListLogs(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{})
	s := ce.setup(false)
	ctx := context.Background()
	counts := []int{0, 3, 50, 75}
	var ids []int64
	for i, n := range counts {
		cid := ce.newCampaign(s, 1)
		ids = append(ids, cid)
		for j := range n {
			if _, err := ce.db.AddLog(ctx, cid, "info", "schedule_window_opened", fmt.Sprintf("campaign %d entry %d", i, j), nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, query := range []string{"", "?limit=2", fmt.Sprintf("?before_id=%d", ids[2])} {
		list := objects(t, ce.a(http.MethodGet, campaignsPath+query, nil).obj(t)["campaigns"])
		if len(list) == 0 {
			t.Fatalf("%s: no campaigns", query)
		}
		for _, c := range list {
			cid := int64(num(t, c, "id"))
			one := ce.campaign(cid)
			if !equalJSON(c["logs"], one["logs"]) {
				t.Errorf("%s: campaign %d lists %d entries, has %d", query, cid, len(objects(t, c["logs"])), len(objects(t, one["logs"])))
			}
		}
	}
	byID := map[int64]int{}
	for _, c := range objects(t, ce.a(http.MethodGet, campaignsPath, nil).obj(t)["campaigns"]) {
		byID[int64(num(t, c, "id"))] = len(objects(t, c["logs"]))
	}
	for i, cid := range ids {
		if want := min(counts[i], 50); byID[cid] != want {
			t.Errorf("campaign %d lists %d entries, want %d", cid, byID[cid], want)
		}
	}
}
