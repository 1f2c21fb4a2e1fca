package store

import (
	"context"
	"fmt"
	"time"

	"github.com/outdial/outdial/store/sqlcdb"
)

// The attempt cap's count (API.md 12.3): every call placed at a provider is
// recorded per (organization, number) in number_calls, whatever campaign it
// belongs to, so the count survives the campaign's deletion. With the cap
// enabled, a dispatch reserves its record before the provider request, in
// one transaction with the count, so two campaigns dialing the same number
// at once cannot both pass a count of max-1: on one node, nor on two
// (PostgreSQL: the count and the record are made under an advisory lock on
// the organization's number, lockNumberCalls; without it two nodes' counts
// both saw max-1 and both recorded a call, TestRaceAttemptCap).

// CapCheck is what the attempt cap saw for one number.
type CapCheck struct {
	// Allowed: the call may be placed; its placement is recorded.
	Allowed bool
	// InWindow counts the number's calls in the window before this one.
	InWindow int
	// Until, when not Allowed, is when the oldest call in the window leaves
	// it and the number may be called again.
	Until time.Time
}

// ReserveNumberCall counts org's calls to number in the window ending at
// now and, when fewer than max, records attempt attemptID's as placed at
// now.
func (db *DB) ReserveNumberCall(ctx context.Context, org int64, number string, attemptID int64, now time.Time, max int, window time.Duration) (CapCheck, error) {
	var res CapCheck
	err := db.inBatch(ctx, func(q sqlcdb.Querier) error {
		res = CapCheck{}
		if err := lockNumberCalls(ctx, q, org, number); err != nil {
			return err
		}
		horizon := now.Add(-MaxCapWindowHours * time.Hour).UnixMilli()
		if err := q.ForgetNumberCallsBefore(ctx, sqlcdb.ForgetNumberCallsBeforeParams{OrganizationID: org, PhoneNumber: number, Before: horizon}); err != nil {
			return fmt.Errorf("forget old calls: %w", err)
		}
		times, err := q.NumberCallsSince(ctx, sqlcdb.NumberCallsSinceParams{OrganizationID: org, PhoneNumber: number, Since: now.Add(-window).UnixMilli()})
		if err != nil {
			return fmt.Errorf("count calls: %w", err)
		}
		res.InWindow = len(times)
		if len(times) >= max {
			res.Until = fromMS(times[len(times)-max]).Add(window)
			return nil
		}
		res.Allowed = true
		return q.RecordNumberCall(ctx, sqlcdb.RecordNumberCallParams{OrganizationID: org, PhoneNumber: number, AttemptID: attemptID, PlacedAt: now.UnixMilli()})
	})
	if err != nil {
		return CapCheck{}, fmt.Errorf("attempt cap: %w", err)
	}
	return res, nil
}

// ReleaseNumberCall forgets the reservation of attempt attemptID, whose
// request was not sent.
func (db *DB) ReleaseNumberCall(ctx context.Context, org int64, number string, attemptID int64) error {
	err := db.inBatch(ctx, func(q sqlcdb.Querier) error {
		return q.ForgetNumberCall(ctx, sqlcdb.ForgetNumberCallParams{OrganizationID: org, PhoneNumber: number, AttemptID: attemptID})
	})
	if err != nil {
		return fmt.Errorf("release attempt cap: %w", err)
	}
	return nil
}

// SweepNumberCalls forgets placements older than the longest cap window.
func (db *DB) SweepNumberCalls(ctx context.Context) (int64, error) {
	n, err := db.wq.SweepNumberCalls(ctx, db.Now().Add(-MaxCapWindowHours*time.Hour).UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("sweep attempt cap: %w", err)
	}
	return n, nil
}
