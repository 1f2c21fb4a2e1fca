// Package testdb gives each test a throwaway database location of its own,
// on the engine the run asks for: a SQLite file in the test's temporary
// directory, or, when OUTDIAL_TEST_DATABASE_URL names a PostgreSQL server,
// a new database on that server, dropped when the test ends. store.Open
// takes either location, so a test that opens its store on Location(t)
// runs on whichever engine the run names (CI runs the store's and the
// dialer's tests on both).
//
// It does not import package store, so that store's own internal tests can
// use it; other packages reach it through storetest.Location.
package testdb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/stdlib" // Raw's driver for PostgreSQL: "pgx"
	_ "modernc.org/sqlite"             // Raw's driver for SQLite: "sqlite"
)

// EnvURL is the environment variable that selects PostgreSQL: the URL of a
// role that may create databases (postgres://USER:PASS@HOST:PORT/DB?...),
// such as the one .ci/postgres.sh prints. Empty or unset selects SQLite.
const EnvURL = "OUTDIAL_TEST_DATABASE_URL"

// adminTimeout bounds each use of the admin connection (connect and create,
// or connect and drop).
const adminTimeout = 30 * time.Second

// Postgres reports whether tests run on PostgreSQL: EnvURL is set.
func Postgres() bool {
	return os.Getenv(EnvURL) != ""
}

// IsURL reports whether location, one that Location returned, is a
// PostgreSQL URL rather than a file path.
func IsURL(location string) bool {
	return strings.HasPrefix(location, "postgres://") || strings.HasPrefix(location, "postgresql://")
}

// Location returns where t's store should live, for store.Open: with EnvURL
// unset, the path of a database file (not yet created) in a new directory
// of t.TempDir(); with EnvURL set, the URL of a new, empty database named
// outdial_test_<random hex> on that server (EnvURL with its database
// replaced). The database is dropped WITH (FORCE) when t ends, after the
// cleanups t registers later (such as closing the store opened on it), and
// the file goes with t's temporary directory. Each call returns a new
// location; a test that reopens its store (a restart) reuses the string.
// It fails t when the server cannot be reached or refuses.
func Location(t testing.TB) string {
	t.Helper()
	admin := os.Getenv(EnvURL)
	if admin == "" {
		return filepath.Join(t.TempDir(), "outdial.db")
	}
	location, drop, err := createDatabase(admin)
	if err != nil {
		t.Fatalf("testdb: %v", err)
	}
	// Registered before the caller's cleanups, so it runs after them: the
	// store is closed by then, and FORCE ends whatever connection is left.
	t.Cleanup(func() {
		if err := drop(); err != nil {
			t.Errorf("testdb: %v", err)
		}
	})
	return location
}

// NewLocation is Location for a store that outlives any one test (a
// TestMain's shared server): the path of outdial.db in dir with EnvURL
// unset (drop does nothing: dir is the caller's), else a new database on
// that server, which drop removes WITH (FORCE). The caller runs drop once
// the store on it is closed.
func NewLocation(dir string) (location string, drop func() error, err error) {
	admin := os.Getenv(EnvURL)
	if admin == "" {
		return filepath.Join(dir, "outdial.db"), func() error { return nil }, nil
	}
	return createDatabase(admin)
}

// createDatabase makes a database with a random name on the server of the
// admin URL and returns its URL and the function that drops it.
func createDatabase(admin string) (location string, drop func() error, err error) {
	name, err := randomName()
	if err != nil {
		return "", nil, err
	}
	location, err = withDatabase(admin, name)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", EnvURL, err)
	}
	quoted := pgx.Identifier{name}.Sanitize()
	if err := adminExec(admin, "CREATE DATABASE "+quoted); err != nil {
		return "", nil, fmt.Errorf("create database %s: %w", name, err)
	}
	drop = func() error {
		if err := adminExec(admin, "DROP DATABASE IF EXISTS "+quoted+" WITH (FORCE)"); err != nil {
			return fmt.Errorf("drop database %s: %w", name, err)
		}
		return nil
	}
	return location, drop, nil
}

// Raw opens the database at location (one Location returned, or any SQLite
// file path) with plain database/sql, beside the store, for a test that
// looks at rows as stored or changes them behind the store's back: SQLite's
// driver (busy_timeout 5 s) for a path, pgx's for a PostgreSQL URL. It is
// closed when t ends, if the test did not close it first. A query meant
// for both engines numbers its parameters ($1), which SQLite reads too.
func Raw(t testing.TB, location string) *sql.DB {
	t.Helper()
	driver, dsn := "sqlite", "file:"+location+"?_pragma=busy_timeout(5000)"
	if IsURL(location) {
		driver, dsn = "pgx", location
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatalf("testdb: open %s: %v", driver, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// randomName returns outdial_test_ and 16 random hex digits.
func randomName() (string, error) {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random name: %w", err)
	}
	return "outdial_test_" + hex.EncodeToString(b), nil
}

// withDatabase returns the PostgreSQL URL admin with its database (the
// path) replaced by name, keeping user, password, host, port and query.
func withDatabase(admin, name string) (string, error) {
	u, err := url.Parse(admin)
	if err != nil {
		return "", fmt.Errorf("parse: %w", err)
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return "", fmt.Errorf("scheme %q: want postgres:// or postgresql://", u.Scheme)
	}
	u.Path = "/" + name
	u.RawPath = ""
	return u.String(), nil
}

// adminExec connects to admin, runs one statement and closes the
// connection.
func adminExec(admin, sql string) error {
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	_, execErr := conn.Exec(ctx, sql)
	if err := conn.Close(ctx); err != nil && execErr == nil {
		return fmt.Errorf("close: %w", err)
	}
	return execErr
}
