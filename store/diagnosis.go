package store

import (
	"context"
	"fmt"
	"time"

	"github.com/outdial/outdial/store/sqlcdb"
)

// What the diagnosis (API.md 11) reads from the queue.

// QueueGroup counts a campaign's queued attempts of one contact timezone
// that are due at a time or not, and held by a guard rail or not.
type QueueGroup struct {
	Timezone string
	Due      bool
	// HoursHeld, CapHeld, RecallHeld: not due, put back by the calling
	// hours, the attempt cap or the abandoned-call recall hold (their
	// evidence says so).
	HoursHeld, CapHeld, RecallHeld bool
	Count                          int
	NextDue                        time.Time
}

// QueueStats returns campaign id's queued attempts grouped at now, then its
// contacts whose first attempt is not queued yet (due, by timezone).
func (db *DB) QueueStats(ctx context.Context, id int64, now time.Time) ([]QueueGroup, error) {
	rows, err := db.rq.QueueStats(ctx, sqlcdb.QueueStatsParams{Now: now.UnixMilli(), CampaignID: id})
	if err != nil {
		return nil, fmt.Errorf("queue stats: %w", err)
	}
	out := make([]QueueGroup, 0, len(rows))
	for _, r := range rows {
		out = append(out, QueueGroup{Timezone: r.Timezone, Due: r.Due == 1, HoursHeld: r.HoursHeld == 1,
			CapHeld: r.CapHeld == 1, RecallHeld: r.RecallHeld == 1, Count: int(r.N), NextDue: fromMS(r.NextDue)})
	}
	cur, err := db.rq.QueueCursor(ctx, id)
	if errNoRows(err) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("queue cursor: %w", err)
	}
	if cur.QueuedThroughRow >= cur.LastRow {
		return out, nil
	}
	unq, err := db.rq.UnqueuedZones(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("unqueued contacts: %w", err)
	}
	for _, r := range unq {
		out = append(out, QueueGroup{Timezone: r.Timezone, Due: true, Count: int(r.N), NextDue: fromMS(0)})
	}
	return out, nil
}

// RowsWithTimezone returns up to limit row numbers of campaign id's
// contacts not final yet whose timezone is tz.
func (db *DB) RowsWithTimezone(ctx context.Context, id int64, tz string, limit int) ([]int64, error) {
	rows, err := db.rq.RowsWithTimezone(ctx, sqlcdb.RowsWithTimezoneParams{CampaignID: id, Timezone: tz, MaxRows: int64(limit)})
	if err != nil {
		return nil, fmt.Errorf("contact rows: %w", err)
	}
	return rows, nil
}
