// Package storetest opens throwaway databases for other packages' tests: a
// real database in the test's temporary directory, sealed with a random
// server secret, closed when the test ends. It is the one place a test
// gets a database from, so that running every test on another engine
// (issue 21: PostgreSQL) is a change here.
package storetest

import (
	"context"
	"crypto/rand"
	"path/filepath"
	"testing"

	"github.com/outdial/outdial/store"
)

// Open returns a new, empty, migrated database for t, closed at its end
// (after whatever the test registers with t.Cleanup later, such as a server
// over it).
func Open(t testing.TB) *store.DB {
	t.Helper()
	secret := make([]byte, store.KeySize)
	if _, err := rand.Read(secret); err != nil {
		t.Fatal(err)
	}
	sealer, err := store.NewSealer(secret)
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "outdial.db"), sealer)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("close database: %v", err)
		}
	})
	return db
}
