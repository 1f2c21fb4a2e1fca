package store

import (
	"context"
	"fmt"
	"time"
)

// BatchObserver is told about every group commit (batch.go): how long its
// oldest write waited in the queue before the transaction began, how long
// the transaction took (begin to commit, with the synchronous switches of
// a durable batch) and how many writes it held. It runs on the batcher's
// goroutine, so it must be quick (a histogram observation).
type BatchObserver func(wait, commit time.Duration, ops int)

// ObserveBatches sets the group-commit observer (nil removes it). cmd sets
// it to the metrics' ObserveBatch; store itself knows nothing of metrics.
func (db *DB) ObserveBatches(fn BatchObserver) {
	if fn == nil {
		db.observe.Store(nil)
		return
	}
	db.observe.Store(&fn)
}

// observeBatch reports a batch whose oldest write was queued at queued and
// whose transaction began at began, if an observer is set.
func (db *DB) observeBatch(queued, began time.Time, ops int) {
	if fn := db.observe.Load(); fn != nil {
		(*fn)(began.Sub(queued), time.Since(began), ops)
	}
}

// CampaignCountsByState returns the number of campaigns in each state (one
// query on the state index); states without campaigns are absent.
func (db *DB) CampaignCountsByState(ctx context.Context) (map[string]int64, error) {
	rows, err := db.rq.CampaignCountsByState(ctx)
	if err != nil {
		return nil, fmt.Errorf("campaign counts by state: %w", err)
	}
	counts := make(map[string]int64, len(rows))
	for _, r := range rows {
		counts[r.State] = r.N
	}
	return counts, nil
}
