package store

import (
	"context"
	"fmt"

	"github.com/outdial/outdial/store/sqlcdb"
)

// Concurrency made explicit (issue 21). SQLite runs one write transaction
// at a time, so a transaction that reads, then writes what it read, is
// correct there by itself. PostgreSQL runs them side by side under READ
// COMMITTED, on every node: each store operation that reads before it
// writes takes the lock that makes it correct, here, or is written so that
// it needs none (a conditional UPDATE whose row count decides, a
// constraint). docs/api.md, "Several nodes: what is exact across nodes",
// lists them with the tests that race two stores on one database.
//
// Every lock is held until the transaction ends (row locks, and
// transaction-level advisory locks: no session state, so nodes work behind
// PgBouncer in transaction pooling). On SQLite the queries are plain reads
// of a row by its key, or nothing (queries/sqlite/locks.sql): the writer
// holds the database already. A lock is taken before the reads it
// protects: under READ COMMITTED each statement reads what was committed
// when it started, so a read after the lock sees every write of the
// previous holder.

// lockOrganization takes organization id's row lock: the organization's
// writes that read, then write, take turns across nodes (a limit's count,
// then insert; the compliance policy's next version; the switch of its
// default telephony configuration or a configuration's default caller id).
// An organization that does not exist locks nothing: the caller's reads
// find nothing of it either.
func lockOrganization(ctx context.Context, q sqlcdb.Querier, id int64) error {
	if _, err := q.LockOrganization(ctx, id); err != nil && !errNoRows(err) {
		return fmt.Errorf("lock organization: %w", err)
	}
	return nil
}

// lockCampaign takes campaign id's row lock: a transition names the state
// it left, and a settings change starts from the settings as they are. A
// campaign that does not exist locks nothing; the caller's read says so.
func lockCampaign(ctx context.Context, q sqlcdb.Querier, id int64) error {
	if _, err := q.LockCampaign(ctx, id); err != nil && !errNoRows(err) {
		return fmt.Errorf("lock campaign: %w", err)
	}
	return nil
}

// lockAttempt reads attempt id under its row lock (sql.ErrNoRows when there
// is none): a second final status of the attempt, on any node, reads it
// after this transaction ended, so it sees the attempt final.
func lockAttempt(ctx context.Context, q sqlcdb.Querier, id int64) (sqlcdb.CallAttempt, error) {
	return q.LockAttempt(ctx, id)
}

// lockNumberCalls takes the advisory lock on number's placements in
// organization org (the attempt cap's count, API.md 12.3): a number has no
// row of its own to lock before its first call.
func lockNumberCalls(ctx context.Context, q sqlcdb.Querier, org int64, number string) error {
	return lockKey(ctx, q, fmt.Sprintf("number_calls/%d/%s", org, number))
}

// lockSuppressions takes the advisory lock on organization org's
// suppression list: adds of the same number take turns, so each sees the
// entry the other wrote.
func lockSuppressions(ctx context.Context, q sqlcdb.Querier, org int64) error {
	return lockKey(ctx, q, fmt.Sprintf("suppressions/%d", org))
}

func lockKey(ctx context.Context, q sqlcdb.Querier, key string) error {
	if err := q.LockKey(ctx, key); err != nil {
		return fmt.Errorf("lock %s: %w", key, err)
	}
	return nil
}
