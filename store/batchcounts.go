package store

import (
	"context"
	"slices"

	"github.com/outdial/outdial/store/sqlcdb"
)

// A batch's campaign counters (the group commit, batch.go). Every final
// status, placement and retry adds to its campaign's counters, one row per
// campaign: updated where each operation runs, the row stays locked from a
// batch's first operation until its commit, and on PostgreSQL another
// node's batch waits that long for it (each of the batch's statements is a
// round trip). foldedCounts collects the batch's additions instead and
// writes them at its end, one update per campaign, in campaign order,
// right before the commit; what must read the counters after them (a
// campaign's completion) runs after that (afterCounts).

// foldedCounts is the querier a batch's operations get.
type foldedCounts struct {
	sqlcdb.Querier
	counts map[int64]*sqlcdb.AddFoldedCampaignCountsParams
	then   []func(sqlcdb.Querier) error
}

func foldCounts(q sqlcdb.Querier) *foldedCounts {
	return &foldedCounts{Querier: q, counts: map[int64]*sqlcdb.AddFoldedCampaignCountsParams{}}
}

// AddCampaignCounts adds arg to the batch's counts.
func (f *foldedCounts) AddCampaignCounts(_ context.Context, arg sqlcdb.AddCampaignCountsParams) error {
	c := f.counts[arg.ID]
	if c == nil {
		c = &sqlcdb.AddFoldedCampaignCountsParams{ID: arg.ID}
		f.counts[arg.ID] = c
	}
	c.Processed += arg.Processed
	c.Failed += arg.Failed
	c.Executed += arg.Executed
	c.Queued += arg.Queued
	switch arg.Outcome {
	case "answered":
		c.Answered++
	case "voicemail":
		c.Voicemail++
	case "busy":
		c.Busy++
	case "no_answer":
		c.NoAnswer++
	case "failed":
		c.CallsFailed++
	case "canceled":
		c.Canceled++
	case "unknown":
		c.Unknown++
	case OutcomeSuppressed:
		c.Suppressed++
	}
	return nil
}

// flush writes the counts, then runs what waited for them.
func (f *foldedCounts) flush(ctx context.Context) error {
	ids := make([]int64, 0, len(f.counts))
	for id := range f.counts {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if err := f.Querier.AddFoldedCampaignCounts(ctx, *f.counts[id]); err != nil {
			return err
		}
	}
	for _, fn := range f.then {
		if err := fn(f.Querier); err != nil {
			return err
		}
	}
	return nil
}

// afterCounts runs fn once the counts added through q so far are written:
// at once, or at the end of q's batch.
func afterCounts(q sqlcdb.Querier, fn func(sqlcdb.Querier) error) error {
	if f, ok := q.(*foldedCounts); ok {
		f.then = append(f.then, fn)
		return nil
	}
	return fn(q)
}
