// Package store is the only package that touches database/sql and the
// sqlc-generated code in store/sqlcdb. It owns the SQLite database (one writer
// connection plus a read pool, migrations applied at open), the sealing of
// provider credentials, and hands out its own types and typed errors (see
// errors.go) to the web and dialer layers.
package store

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"net/url"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/outdial/outdial/queries"
	"github.com/outdial/outdial/store/sqlcdb"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// DB is an open Outdial database. Writes go through a single connection
// (SQLite allows one writer; queueing in Go is cheaper than SQLITE_BUSY), reads
// through a pool of read-only connections, and Ping through a read-only
// connection of its own. All methods are safe for concurrent use.
type DB struct {
	write  *sql.DB
	read   *sql.DB
	health *sql.DB // one read-only connection for Ping alone (health.go)
	wq     *sqlcdb.Queries
	rq     *sqlcdb.Queries
	wc, rc *stmtCache // the statements behind wq and rq
	sealer *Sealer

	workflowLimits atomic.Pointer[WorkflowLimits] // nil: DefaultWorkflowLimits

	b *batcher // group commit of the dialer's small writes (batch.go)
	// syncMode sets the writer's synchronous mode (setSynchronous; tests
	// record the calls).
	syncMode func(mode string) error
	p        *purger                       // deletes hidden campaigns in chunks (purge.go)
	observe  atomic.Pointer[BatchObserver] // nil: no observer (observe.go)

	// Now returns the current time; tests replace it. Stored times are unix
	// milliseconds, so sub-millisecond precision is dropped.
	Now func() time.Time
}

// Open opens (creating when missing) the SQLite database at path, applies
// pending migrations and returns a DB that seals credentials with sealer.
// A database written by a newer Outdial is refused with a
// *SchemaTooNewError, and left exactly as it was (CheckSchema).
func Open(ctx context.Context, path string, sealer *Sealer) (*DB, error) {
	if err := CheckSchema(ctx, path); err != nil {
		return nil, err
	}
	write, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	write.SetMaxOpenConns(1)
	write.SetMaxIdleConns(1)
	write.SetConnMaxLifetime(0)
	if err := migrate(ctx, write); err != nil {
		write.Close()
		return nil, err
	}
	read, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		write.Close()
		return nil, fmt.Errorf("open database: %w", err)
	}
	n := max(4, runtime.GOMAXPROCS(0)*2)
	read.SetMaxOpenConns(n)
	read.SetMaxIdleConns(n)
	read.SetConnMaxLifetime(0)
	// Prepared statements: parsing SQL is a large share of a small query's
	// cost in pure-Go SQLite. Each query is prepared the first time it runs
	// (stmtcache.go), not all of them here.
	health, err := openHealth(path)
	if err != nil {
		read.Close()
		write.Close()
		return nil, err
	}
	wc, rc := newStmtCache(write), newStmtCache(read)
	db := &DB{write: write, read: read, wc: wc, rc: rc, wq: wc.queries(), rq: rc.queries(), sealer: sealer, Now: time.Now}
	db.health = health
	db.syncMode = db.setSynchronous
	db.startBatcher()
	db.startPurger()
	return db, nil
}

// dsn builds a modernc.org/sqlite DSN with the pragmas every connection needs:
// busy_timeout first (so the others wait instead of failing), WAL, foreign
// keys, synchronous NORMAL. The writer takes IMMEDIATE transactions so a
// transaction never has to upgrade its lock.
func dsn(path string, readOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	// Statement journals and sorts in memory: a multi-row INSERT of an
	// import otherwise writes every page it touches to a temporary file
	// first (a fifth of an import's time).
	q.Add("_pragma", "temp_store(MEMORY)")
	// The WAL is truncated to this size whenever a checkpoint resets it,
	// so that a burst of writes (an import, a purge) does not leave a
	// large file behind.
	q.Add("_pragma", "journal_size_limit(67108864)")
	if readOnly {
		q.Add("mode", "ro")
	} else {
		q.Add("_txlock", "immediate")
	}
	return "file:" + path + "?" + q.Encode()
}

// Close closes the prepared statements and both pools.
func (db *DB) Close() error {
	db.stopPurger()
	db.stopBatcher()
	db.rc.close() //nolint:errcheck // the pools' Close reports what matters
	db.wc.close() //nolint:errcheck
	// SQLite checkpoints the WAL into the database and removes it when the
	// last connection closes, unless that one is read-only: the writer's
	// connection must close last. It is held (opened again if the pool
	// discarded it, as a query interrupted by its context can make it do)
	// while the read-only ones close.
	last, lerr := db.write.Conn(context.Background())
	rerr := db.read.Close()
	db.health.Close() //nolint:errcheck // read-only, nothing to flush
	if lerr == nil {
		last.Close() //nolint:errcheck // returns it to the pool, closed just below
	}
	if err := db.write.Close(); err != nil {
		return fmt.Errorf("close database: %w", err)
	}
	if rerr != nil {
		return fmt.Errorf("close database: %w", rerr)
	}
	return nil
}

// inTx runs fn in one IMMEDIATE write transaction, committing when fn returns
// nil. fn must use only the Queries it is given.
func (db *DB) inTx(ctx context.Context, fn func(q *sqlcdb.Queries) error) error {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	q, prepareMissed := db.wc.txQueries(tx)
	defer func() {
		tx.Rollback() //nolint:errcheck // no-op after commit
		// The connection is free again: prepare what ran unprepared.
		prepareMissed(context.WithoutCancel(ctx))
	}()
	if err := fn(q); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

func (db *DB) nowMS() int64 { return db.Now().UnixMilli() }

func fromMS(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// migrate applies the migrations above the database's schema version, each
// in its own transaction; a database newer than the binary is refused
// (*SchemaTooNewError) before anything is written.
func migrate(ctx context.Context, db *sql.DB) error {
	all, err := Migrations()
	if err != nil {
		return err
	}
	var current int
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&current); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if n := len(all); n > 0 && current > all[n-1].Version {
		return &SchemaTooNewError{Database: current, Supported: all[n-1].Version}
	}
	for _, m := range all {
		if m.Version <= current {
			continue
		}
		body, err := fs.ReadFile(queries.Migrations, "migrations/"+m.Name)
		if err != nil {
			return fmt.Errorf("read migration %s: %w", m.Name, err)
		}
		if err := applyMigration(ctx, db, m.Version, string(body)); err != nil {
			return fmt.Errorf("migration %s: %w", m.Name, err)
		}
	}
	return nil
}

func applyMigration(ctx context.Context, db *sql.DB, version int, body string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck
	if _, err := tx.ExecContext(ctx, body); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", version)); err != nil {
		return err
	}
	return tx.Commit()
}
