package store

// Schema versions: which migrations this binary holds, which version a
// database file is at (read without writing anything), and applying the
// pending migrations alone (`outdial migrate`).

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"

	"github.com/outdial/outdial/queries"
)

// ErrSchemaTooNew is matched (errors.Is) by every *SchemaTooNewError.
var ErrSchemaTooNew = errors.New("database schema is newer than this outdial supports")

// SchemaTooNewError refuses a database written by a newer Outdial: its
// schema version (PRAGMA user_version) is above the newest migration this
// binary holds. Opening it would let this binary write rows the newer
// schema's rules do not expect, so nothing is opened for writing.
type SchemaTooNewError struct {
	// Database is the database's schema version, Supported the newest this
	// binary knows.
	Database, Supported int
}

func (e *SchemaTooNewError) Error() string {
	return fmt.Sprintf("database schema version %d is newer than this outdial supports (%d)", e.Database, e.Supported)
}

// Is makes errors.Is(err, ErrSchemaTooNew) true.
func (e *SchemaTooNewError) Is(target error) bool { return target == ErrSchemaTooNew }

// Migration is one schema migration held by the binary:
// queries/migrations/NNNN_name.sql.
type Migration struct {
	// Version is the schema version the migration brings the database to.
	Version int
	// Name is its file name, e.g. "0011_zone_counts.sql".
	Name string
}

// Migrations returns the binary's migrations in version order.
func Migrations() ([]Migration, error) {
	return readMigrations(queries.Migrations, "migrations")
}

// SupportedSchemaVersion is the newest schema version this binary knows:
// its last migration's.
func SupportedSchemaVersion() int {
	ms, err := Migrations()
	if err != nil || len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].Version
}

// SchemaVersion reads the schema version of the database file at path
// without writing anything: no journal, WAL or shared-memory file is
// created and the file's bytes and modification time stay as they were.
//
// A database with no -wal file beside it (one closed cleanly: the last
// connection checkpoints and deletes its WAL) is opened with SQLite's
// immutable=1, which takes no lock and creates no file. With a -wal file
// (a process has it open, or one died), the committed schema version may
// be in the WAL alone, so it is read through an ordinary read-only
// connection, which uses the -wal and -shm files already there. A missing
// or empty file is version 0 (a new database).
func SchemaVersion(ctx context.Context, path string) (int, error) {
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && st.Size() == 0) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	q := url.Values{}
	q.Set("mode", "ro")
	if _, err := os.Stat(path + "-wal"); errors.Is(err, fs.ErrNotExist) {
		q.Set("immutable", "1")
	} else {
		q.Add("_pragma", "busy_timeout(10000)")
	}
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	defer db.Close()
	var v int
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return v, nil
}

// CheckSchema returns a *SchemaTooNewError when the database at path was
// written by a newer Outdial, having written nothing (SchemaVersion). Open
// and Backup call it before anything else.
func CheckSchema(ctx context.Context, path string) error {
	v, err := SchemaVersion(ctx, path)
	if err != nil {
		return err
	}
	if supported := SupportedSchemaVersion(); v > supported {
		return &SchemaTooNewError{Database: v, Supported: supported}
	}
	return nil
}

// PendingMigrations returns the migrations Open (or Migrate) would apply to
// the database at path, in order, and its current schema version, writing
// nothing. A newer database is a *SchemaTooNewError.
//
// path may be a PostgreSQL URL (IsDatabaseURL): then the current version is
// read from the database and the PostgreSQL engine's migrations are listed.
func PendingMigrations(ctx context.Context, path string) (current int, pending []Migration, err error) {
	if IsDatabaseURL(path) {
		return pgPendingAt(ctx, path)
	}
	current, err = SchemaVersion(ctx, path)
	if err != nil {
		return 0, nil, err
	}
	all, err := Migrations()
	if err != nil {
		return 0, nil, err
	}
	if n := len(all); n > 0 && current > all[n-1].Version {
		return current, nil, &SchemaTooNewError{Database: current, Supported: all[n-1].Version}
	}
	for _, m := range all {
		if m.Version > current {
			pending = append(pending, m)
		}
	}
	return current, pending, nil
}

// Migrate applies the pending migrations to the database at path (created
// when missing) on a single connection, each in its own transaction, and
// returns those it applied. Nothing else starts: no read pool, batcher or
// purger. A newer database is refused before it is opened for writing.
//
// path may be a PostgreSQL URL: the migrations are then applied in one
// transaction under the lock nodes starting together take.
func Migrate(ctx context.Context, path string) ([]Migration, error) {
	if IsDatabaseURL(path) {
		return pgMigrateAt(ctx, path)
	}
	_, pending, err := PendingMigrations(ctx, path)
	if err != nil {
		return nil, err
	}
	if len(pending) == 0 {
		return nil, nil
	}
	write, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	write.SetMaxOpenConns(1)
	if err := migrate(ctx, write); err != nil {
		write.Close()
		return nil, err
	}
	if err := write.Close(); err != nil {
		return nil, fmt.Errorf("close database: %w", err)
	}
	return pending, nil
}
