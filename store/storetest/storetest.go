// Package storetest opens throwaway databases for other packages' tests: a
// real database, sealed with a random server secret, closed when the test
// ends. It is the one place a test gets a database from: on SQLite, a file
// in the test's temporary directory; with OUTDIAL_TEST_DATABASE_URL set, a
// new database on that PostgreSQL server, dropped when the test ends
// (store/internal/testdb, which packages outside store reach through
// Location, NewLocation and Raw here).
package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"testing"

	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/store/internal/testdb"
)

// Location returns where a new throwaway store for t lives, for
// store.Open: the path of a database file in t's temporary directory, or,
// with OUTDIAL_TEST_DATABASE_URL set, the URL of a new database on that
// PostgreSQL server, dropped after the cleanups t registers later (such as
// closing the store). Each call returns a new location; a test that
// reopens its store (a restart) reopens the same string.
func Location(t testing.TB) string {
	t.Helper()
	return testdb.Location(t)
}

// NewLocation is Location for a store that outlives any one test (a
// TestMain's shared server): outdial.db in dir, or, with
// OUTDIAL_TEST_DATABASE_URL set, a new database on that server. The caller
// runs drop once the store on it is closed (on SQLite it does nothing: dir
// is the caller's).
func NewLocation(dir string) (location string, drop func() error, err error) {
	return testdb.NewLocation(dir)
}

// Raw opens the database at location (one Location returned) with plain
// database/sql, beside the store, for a test that looks at rows as stored:
// SQLite's driver for a file, pgx's for a PostgreSQL URL; closed when t
// ends. A query meant for both engines numbers its parameters ($1), which
// SQLite reads too.
func Raw(t testing.TB, location string) *sql.DB {
	t.Helper()
	return testdb.Raw(t, location)
}

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
	db, err := store.Open(context.Background(), Location(t), sealer)
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
