package store

import (
	"context"
	"fmt"
	"time"

	"github.com/outdial/outdial/store/sqlcdb"
)

// The recall hold of the abandonment policy (API.md 19): a number whose
// call was abandoned is not called again by any campaign of its
// organization for the policy's recall_after_hours from that call's answer.
// ApplyStatus notes every abandoned call's number and answer in
// abandoned_numbers, in the transaction that ends the call, whatever the
// policy (the verdicts are measured either way; the hold applies while it
// is enabled, to every abandoned call within its recall_after_hours); every
// dispatch of an organization whose policy is enabled asks
// LastAbandonedAnswer, one search of the table's primary key.

// LastAbandonedAnswer returns the answer of the newest abandoned call to
// number of org, and false when none was abandoned within the longest
// recall hold (MaxRecallAfterHours before now).
func (db *DB) LastAbandonedAnswer(ctx context.Context, org int64, number string, now time.Time) (time.Time, bool, error) {
	ms, err := db.rq.AbandonedNumberAnswer(ctx, sqlcdb.AbandonedNumberAnswerParams{OrganizationID: org, PhoneNumber: number})
	if errNoRows(err) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, fmt.Errorf("abandoned calls of the number: %w", err)
	}
	at := fromMS(ms)
	if at.Before(now.Add(-MaxRecallAfterHours * time.Hour)) {
		return time.Time{}, false, nil
	}
	return at, true, nil
}

// recordAbandonedNumber notes, in ApplyStatus's transaction, that attempt
// r's call, answered at answered (unix ms), was abandoned.
func recordAbandonedNumber(ctx context.Context, q sqlcdb.Querier, r sqlcdb.CallAttempt, answered int64) error {
	org, err := q.OrganizationOfCampaign(ctx, r.CampaignID)
	if err != nil {
		return fmt.Errorf("organization of campaign %d: %w", r.CampaignID, err)
	}
	if err := q.RecordAbandonedNumber(ctx, sqlcdb.RecordAbandonedNumberParams{OrganizationID: org, PhoneNumber: r.PhoneNumber,
		AnsweredAt: answered, AttemptID: r.ID}); err != nil {
		return fmt.Errorf("note abandoned number: %w", err)
	}
	return nil
}

// SweepAbandonedNumbers forgets abandoned calls answered longer ago than
// the longest recall hold.
func (db *DB) SweepAbandonedNumbers(ctx context.Context) (int64, error) {
	n, err := db.wq.SweepAbandonedNumbers(ctx, db.Now().Add(-MaxRecallAfterHours*time.Hour).UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("sweep abandoned numbers: %w", err)
	}
	return n, nil
}
