package store

import (
	"context"
	"fmt"
)

// RecentLogsOf returns the newest 50 log entries of each of the campaigns
// ids, oldest first, keyed by campaign id, in one query (a page of the
// campaign list shows each campaign's recent logs). A campaign without
// entries has no key.
func (db *DB) RecentLogsOf(ctx context.Context, ids []int64) (map[int64][]LogEntry, error) {
	out := make(map[int64][]LogEntry, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := db.rq.RecentLogsOfCampaigns(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("recent logs of campaigns: %w", err)
	}
	for _, r := range rows {
		out[r.CampaignID] = append(out[r.CampaignID], logFromRow(r))
	}
	return out, nil
}
