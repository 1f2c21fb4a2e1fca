package store

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"net/url"
	"runtime"
	"strings"

	"github.com/outdial/outdial/queries"
	"github.com/outdial/outdial/store/sqlcdb"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// sqliteEngine is the embedded engine (engine.go): one writer connection
// (SQLite allows one writer; queueing in Go is cheaper than SQLITE_BUSY)
// taking IMMEDIATE transactions, a pool of read-only connections, and a
// read-only connection of its own for health checks. Every query is
// prepared on each pool the first time it runs (stmtcache.go): parsing SQL
// is a large share of a small query's cost in pure-Go SQLite.
type sqliteEngine struct {
	write  *sql.DB
	read   *sql.DB
	health *sql.DB // one read-only connection for ping alone (openHealth)
	wc, rc *stmtCache
	wq, rq *sqlcdb.Queries // through wc and rc
}

// openSQLite opens (creating when missing) the SQLite database at path and
// applies pending migrations. A database written by a newer Outdial is
// refused with a *SchemaTooNewError, and left exactly as it was
// (CheckSchema).
func openSQLite(ctx context.Context, path string) (_ *sqliteEngine, err error) {
	if err := CheckSchema(ctx, path); err != nil {
		return nil, err
	}
	e := &sqliteEngine{}
	defer func() {
		if err != nil {
			e.close() //nolint:errcheck // reporting err
		}
	}()
	if e.write, err = sql.Open("sqlite", dsn(path, false)); err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	e.write.SetMaxOpenConns(1)
	e.write.SetMaxIdleConns(1)
	e.write.SetConnMaxLifetime(0)
	if err := migrate(ctx, e.write); err != nil {
		return nil, err
	}
	if e.read, err = sql.Open("sqlite", dsn(path, true)); err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	n := max(4, runtime.GOMAXPROCS(0)*2)
	e.read.SetMaxOpenConns(n)
	e.read.SetMaxIdleConns(n)
	e.read.SetConnMaxLifetime(0)
	if e.health, err = openHealth(path); err != nil {
		return nil, err
	}
	e.wc, e.rc = newStmtCache(e.write), newStmtCache(e.read)
	e.wq, e.rq = e.wc.queries(), e.rc.queries()
	return e, nil
}

func (e *sqliteEngine) name() string           { return "sqlite" }
func (e *sqliteEngine) reads() sqlcdb.Querier  { return e.rq }
func (e *sqliteEngine) writes() sqlcdb.Querier { return e.wq }

// close closes the prepared statements and the pools (those opened).
// SQLite checkpoints the WAL into the database and removes it when the last
// connection closes, unless that one is read-only: the writer's connection
// must close last. It is held (opened again if the pool discarded it, as a
// query interrupted by its context can make it do) while the read-only
// ones close.
func (e *sqliteEngine) close() error {
	for _, c := range []*stmtCache{e.rc, e.wc} {
		if c != nil {
			c.close() //nolint:errcheck // the pools' Close reports what matters
		}
	}
	var last *sql.Conn
	if e.write != nil {
		last, _ = e.write.Conn(context.Background())
	}
	var first error
	for _, p := range []*sql.DB{e.read, e.health} {
		if p == nil {
			continue
		}
		if err := p.Close(); err != nil && first == nil {
			first = err
		}
	}
	if last != nil {
		last.Close() //nolint:errcheck // returns it to the pool, closed just below
	}
	if e.write != nil {
		if err := e.write.Close(); err != nil {
			return err
		}
	}
	return first
}

// inTx runs fn in one IMMEDIATE write transaction (engine.inTx).
func (e *sqliteEngine) inTx(ctx context.Context, fn func(q sqlcdb.Querier) error) error {
	tx, err := e.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	q, prepareMissed := e.wc.txQueries(tx)
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

// setDurable sets the writer connection's synchronous mode: FULL, or
// NORMAL (under WAL, a commit then reaches the disk at the next
// checkpoint).
func (e *sqliteEngine) setDurable(durable bool) error {
	mode := "NORMAL"
	if durable {
		mode = "FULL"
	}
	if _, err := e.write.ExecContext(context.Background(), "PRAGMA synchronous = "+mode); err != nil {
		return fmt.Errorf("synchronous %s: %w", mode, err)
	}
	return nil
}

// ping reads the schema table on the health connection, so the database
// file itself must be readable (a closed database, an unreadable or corrupt
// file fail). Concurrent calls take turns on that connection; each is a
// few microseconds.
func (e *sqliteEngine) ping(ctx context.Context) error {
	var n int
	if err := e.health.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("no schema")
	}
	return nil
}

// isUniqueViolation reports whether err is SQLite's UNIQUE constraint error.
func (e *sqliteEngine) isUniqueViolation(err error) bool {
	return err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed")
}

// isRetryable reports false: SQLite's write transactions take turns (a
// busy database is waited for, busy_timeout), so none is a deadlock's
// victim.
func (e *sqliteEngine) isRetryable(error) bool { return false }

// openHealth opens the one read-only connection ping uses. Requests share
// the read pool: a burst of heavy reads (40 parallel lists) can hold every
// connection of it for seconds, and a health check queued behind them
// would time out while the database is fine, making a supervisor restart
// a healthy service. A connection of its own never waits for them.
func openHealth(path string) (*sql.DB, error) {
	h, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	h.SetMaxOpenConns(1)
	h.SetMaxIdleConns(1)
	h.SetConnMaxLifetime(0)
	return h, nil
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
