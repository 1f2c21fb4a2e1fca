package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/outdial/outdial/queries"
	"github.com/outdial/outdial/store/pgdb"
	"github.com/outdial/outdial/store/sqlcdb"
)

//go:generate go run ./internal/pgqgen

// postgresEngine keeps the state in a PostgreSQL database that several
// nodes share (API.md 16): a pgx pool for reads and writes, and a pool of
// one connection for health checks, which never waits behind the others.
// Transactions are READ COMMITTED; the operations that would race between
// nodes under it are correct by construction (row locks, SKIP LOCKED
// claims, constraints; listed in docs/api.md). Nothing here keeps session
// state (no advisory locks held across transactions, no temporary tables,
// no SET), so nodes work behind PgBouncer in transaction pooling.
type postgresEngine struct {
	pool   *pgxpool.Pool
	health *pgxpool.Pool
	q      pgQuerier
}

// IsDatabaseURL reports whether location names a PostgreSQL database
// (postgres:// or postgresql://) rather than a SQLite file.
func IsDatabaseURL(location string) bool {
	return strings.HasPrefix(location, "postgres://") || strings.HasPrefix(location, "postgresql://")
}

// pgPoolSize is the pool's size unless the URL sets pool_max_conns: the
// dialer's group commit, the API's requests and the streams share it.
func pgPoolSize() int32 { return int32(max(10, runtime.GOMAXPROCS(0)*4)) }

// openPostgres connects to the database at url and applies pending
// migrations (under a transaction-level lock, so nodes starting together
// take turns). A database written by a newer Outdial is refused with a
// *SchemaTooNewError before anything is written.
func openPostgres(ctx context.Context, url string) (_ *postgresEngine, err error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("database URL: %w", redactURLError(err))
	}
	if !strings.Contains(url, "pool_max_conns") {
		cfg.MaxConns = pgPoolSize()
	}
	cfg.AfterConnect = limitIdleTransactions
	e := &postgresEngine{}
	defer func() {
		if err != nil {
			e.close() //nolint:errcheck // reporting err
		}
	}()
	if e.pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
		return nil, fmt.Errorf("connect to database: %w", err)
	}
	if _, err := pgPending(ctx, e.pool, true); err != nil {
		return nil, err
	}
	hcfg := cfg.Copy()
	hcfg.MaxConns, hcfg.MinConns = 1, 0
	if e.health, err = pgxpool.NewWithConfig(ctx, hcfg); err != nil {
		return nil, fmt.Errorf("connect to database: %w", err)
	}
	e.q = pgQuerier{pgdb.New(e.pool)}
	return e, nil
}

// idleTransactionLimit ends a session whose transaction stays idle this
// long: a node paused (SIGSTOP) or cut off in the middle of a claim keeps
// its lease row locked (CheckLease's FOR SHARE) and would block every other
// node's take-over until it woke; the server ends its session instead and
// the lock goes. No transaction of ours waits on the client this long.
const idleTransactionLimit = "5s"

// limitIdleTransactions sets idleTransactionLimit on each new connection
// of the pool (a session setting: behind PgBouncer in transaction pooling
// set it for the role instead, ALTER ROLE ... SET
// idle_in_transaction_session_timeout, docs/api.md).
func limitIdleTransactions(ctx context.Context, conn *pgx.Conn) error {
	_, err := conn.Exec(ctx, "SET idle_in_transaction_session_timeout = '"+idleTransactionLimit+"'")
	return err
}

// redactURLError keeps a password out of a URL parse error.
func redactURLError(err error) error {
	var pe *pgconn.ParseConfigError
	if errors.As(err, &pe) {
		return errors.New("cannot parse the PostgreSQL connection string (postgres://USER:PASS@HOST:PORT/DB?sslmode=...)")
	}
	return err
}

func (e *postgresEngine) name() string           { return "postgres" }
func (e *postgresEngine) reads() sqlcdb.Querier  { return e.q }
func (e *postgresEngine) writes() sqlcdb.Querier { return e.q }

// inTx runs fn in one READ COMMITTED transaction (engine.inTx).
func (e *postgresEngine) inTx(ctx context.Context, fn func(q sqlcdb.Querier) error) error {
	return pgx.BeginFunc(ctx, e.pool, func(tx pgx.Tx) error {
		return fn(pgQuerier{pgdb.New(tx)})
	})
}

// insertContacts copies rows into contacts with COPY, in one transaction
// (engine.insertContacts).
func (e *postgresEngine) insertContacts(ctx context.Context, id int64, rows []importRow) error {
	src := pgx.CopyFromSlice(len(rows), func(i int) ([]any, error) {
		r := &rows[i]
		return []any{id, r.row, r.phone, r.tz, r.context}, nil
	})
	_, err := e.pool.CopyFrom(ctx, pgx.Identifier{"contacts"},
		[]string{"campaign_id", "row_number", "phone_number", "timezone", "context"}, src)
	if err != nil {
		return fmt.Errorf("insert contacts: %w", err)
	}
	return nil
}

// setDurable does nothing: every PostgreSQL commit is durable (unless the
// server's synchronous_commit says otherwise, the operator's choice).
func (e *postgresEngine) setDurable(bool) error { return nil }

// ping reads the schema version on the health pool's connection.
func (e *postgresEngine) ping(ctx context.Context) error {
	var v int64
	return e.health.QueryRow(ctx, "SELECT COALESCE(max(version), 0) FROM outdial_schema").Scan(&v)
}

// isUniqueViolation reports whether err is SQLSTATE 23505.
func (e *postgresEngine) isUniqueViolation(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

// isRetryable reports whether err is SQLSTATE 40P01 (deadlock detected) or
// 40001 (serialization failure).
func (e *postgresEngine) isRetryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40P01" || pe.Code == "40001")
}

func (e *postgresEngine) close() error {
	for _, p := range []*pgxpool.Pool{e.health, e.pool} {
		if p != nil {
			p.Close()
		}
	}
	return nil
}

// pgMigrationLock is the key of the transaction-level advisory lock the
// migrations take (released at commit: no session state is left behind).
const pgMigrationLock = 0x6f75746469616c // "outdial"

// PostgresMigrations returns the PostgreSQL engine's migrations in version
// order (queries/postgres/migrations).
func PostgresMigrations() ([]Migration, error) {
	return readMigrations(queries.PostgresMigrations, "postgres/migrations")
}

// readMigrations lists dir's NNNN_name.sql files in version order.
func readMigrations(fsys fs.FS, dir string) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("read migrations: %w", err)
	}
	out := make([]Migration, 0, len(entries))
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		version, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("migration %s: name must start with a version number", e.Name())
		}
		out = append(out, Migration{Version: version, Name: e.Name()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out, nil
}

// pgPending reads the schema version and the migrations above it; apply
// applies them too, in the same transaction, holding pgMigrationLock, so
// that nodes starting together apply them once.
func pgPending(ctx context.Context, pool *pgxpool.Pool, apply bool) (pending []Migration, err error) {
	all, err := PostgresMigrations()
	if err != nil {
		return nil, err
	}
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if apply {
			if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(pgMigrationLock)); err != nil {
				return fmt.Errorf("lock migrations: %w", err)
			}
			if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS outdial_schema (
    version    BIGINT PRIMARY KEY,
    name       TEXT   NOT NULL,
    applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`); err != nil {
				return fmt.Errorf("create schema table: %w", err)
			}
		}
		current, err := pgSchemaVersion(ctx, tx)
		if err != nil {
			return err
		}
		if n := len(all); n > 0 && current > all[n-1].Version {
			return &SchemaTooNewError{Database: current, Supported: all[n-1].Version}
		}
		for _, m := range all {
			if m.Version <= current {
				continue
			}
			pending = append(pending, m)
			if !apply {
				continue
			}
			body, err := fs.ReadFile(queries.PostgresMigrations, "postgres/migrations/"+m.Name)
			if err != nil {
				return fmt.Errorf("read migration %s: %w", m.Name, err)
			}
			if _, err := tx.Exec(ctx, string(body)); err != nil {
				return fmt.Errorf("migration %s: %w", m.Name, err)
			}
			if _, err := tx.Exec(ctx, "INSERT INTO outdial_schema (version, name) VALUES ($1, $2)", m.Version, m.Name); err != nil {
				return fmt.Errorf("migration %s: %w", m.Name, err)
			}
		}
		return nil
	})
	return pending, err
}

// pgSchemaVersion is the highest migration applied, 0 when none is (no
// outdial_schema table yet).
func pgSchemaVersion(ctx context.Context, tx pgx.Tx) (int, error) {
	var exists bool
	if err := tx.QueryRow(ctx, "SELECT to_regclass('outdial_schema') IS NOT NULL").Scan(&exists); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	if !exists {
		return 0, nil
	}
	var v int
	if err := tx.QueryRow(ctx, "SELECT COALESCE(max(version), 0) FROM outdial_schema").Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return v, nil
}

// pgConnect opens a small pool for the one-off commands (migrate,
// schema checks).
func pgConnect(ctx context.Context, url string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("database URL: %w", redactURLError(err))
	}
	cfg.MaxConns = 2
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to database: %w", err)
	}
	return pool, nil
}

// pgPendingAt is PendingMigrations for the database at url, writing
// nothing.
func pgPendingAt(ctx context.Context, url string) (current int, pending []Migration, err error) {
	pool, err := pgConnect(ctx, url)
	if err != nil {
		return 0, nil, err
	}
	defer pool.Close()
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		current, err = pgSchemaVersion(ctx, tx)
		return err
	})
	if err != nil {
		return 0, nil, err
	}
	pending, err = pgPending(ctx, pool, false)
	return current, pending, err
}

// pgMigrateAt is Migrate for the database at url.
func pgMigrateAt(ctx context.Context, url string) ([]Migration, error) {
	pool, err := pgConnect(ctx, url)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	return pgPending(ctx, pool, true)
}
