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
// writes takes the lock that makes it correct, here.

// lockOrganization takes organization id's row lock until the transaction
// ends (PostgreSQL; SQLite's one writer needs none): the organization's
// writes that count, then insert (a limit), take turns across nodes.
func lockOrganization(ctx context.Context, q sqlcdb.Querier, id int64) error {
	if _, err := q.LockOrganization(ctx, id); err != nil {
		return fmt.Errorf("lock organization: %w", err)
	}
	return nil
}
