package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/outdial/outdial/store"
)

// leaser is a *store.DB, also inside the tests' testDB.
type leaser interface {
	AcquireLease(ctx context.Context, id int64, node string, ttl time.Duration) (store.Lease, bool, error)
}

// leaseOf takes campaign id's lease for the test's node, as the dialer
// does before it claims anything.
func leaseOf(t testing.TB, db leaser, id int64) store.Lease {
	t.Helper()
	l, ok, err := db.AcquireLease(context.Background(), id, "test-node", time.Hour)
	if err != nil || !ok {
		t.Fatalf("acquire lease of campaign %d: ok=%v, %v", id, ok, err)
	}
	return l
}
