package store

import (
	"context"
	"database/sql"
	"errors"
	"sync"

	"github.com/outdial/outdial/store/sqlcdb"
)

// stmtCache prepares each query of a pool the first time it runs and keeps
// the statement: parsing SQL is a large share of a small query's cost in
// pure-Go SQLite, so every query after the first reuses its statement, as
// sqlc's Prepare would give, but the start-up no longer prepares all of
// them (about 140 queries on each of two pools: tens of milliseconds before
// the listener opened, for queries many processes never run: `apikey`,
// `backup`, an idle serve). database/sql re-prepares a statement on each
// connection of the pool lazily, and a transaction rebinds it with
// Tx.StmtContext.
type stmtCache struct {
	pool    *sql.DB
	mu      sync.Mutex // serialises preparing; reads go through stmts
	stmts   sync.Map   // query text -> *sql.Stmt
	pending sync.Map   // query text -> struct{}: being prepared in the background
	// later counts the background prepares under way (prepareLater),
	// which close waits for: one finishing after the pools closed would
	// reopen a connection (a read-only one closing last leaves the WAL
	// behind).
	later  sync.WaitGroup
	closed bool // guarded by mu: no prepare after close
}

func newStmtCache(pool *sql.DB) *stmtCache { return &stmtCache{pool: pool} }

// stmt returns the statement of query, preparing it on first use.
func (c *stmtCache) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if s, ok := c.stmts.Load(query); ok {
		return s.(*sql.Stmt), nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.stmts.Load(query); ok {
		return s.(*sql.Stmt), nil
	}
	if c.closed {
		return nil, errClosed
	}
	// Not cancelled with the query's context: a prepare interrupted by
	// it may make the pool discard its connection, and it takes
	// microseconds once it has one.
	s, err := c.pool.PrepareContext(context.WithoutCancel(ctx), query)
	if err != nil {
		return nil, err
	}
	c.stmts.Store(query, s)
	return s, nil
}

// prepareLater prepares query on the pool in the background, once: a
// query not prepared yet runs unprepared with its caller's context, which
// can then give up waiting for a connection (the writer's, held by a long
// transaction) when its client goes away, and the next run finds it
// prepared.
func (c *stmtCache) prepareLater(query string) {
	if _, busy := c.pending.LoadOrStore(query, struct{}{}); busy {
		return
	}
	c.later.Add(1)
	go func() {
		defer c.later.Done()
		defer c.pending.Delete(query)
		c.stmt(context.Background(), query) //nolint:errcheck // the query ran unprepared; a failure shows there
	}()
}

// close waits for the background prepares and closes every statement
// prepared; none is prepared after it.
func (c *stmtCache) close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.later.Wait()
	var errs []error
	c.stmts.Range(func(k, v any) bool {
		errs = append(errs, v.(*sql.Stmt).Close())
		c.stmts.Delete(k)
		return true
	})
	return errors.Join(errs...)
}

// queries returns the sqlc Queries of the pool, running every query
// through its cached statement.
func (c *stmtCache) queries() *sqlcdb.Queries { return sqlcdb.New(cachedDB{c}) }

// txQueries returns the Queries of tx (a transaction of the cache's pool)
// and a function to call once tx has ended. Each query runs through its
// cached statement bound to tx; one not prepared yet runs unprepared on tx
// (preparing it on the pool would wait for the connection tx holds: the
// write pool has one) and is prepared on the pool by the returned function,
// for the next time.
func (c *stmtCache) txQueries(tx *sql.Tx) (*sqlcdb.Queries, func(context.Context)) {
	t := &cachedTx{c: c, tx: tx}
	return sqlcdb.New(t), func(ctx context.Context) {
		for _, q := range t.missed {
			c.stmt(ctx, q) //nolint:errcheck // a query that does not prepare failed its caller already
		}
	}
}

// cachedDB is the pool as sqlcdb.DBTX, through cached statements.
type cachedDB struct{ c *stmtCache }

// cached returns query's statement when it is prepared already; otherwise
// nil, and it is prepared in the background for the next run.
func (d cachedDB) cached(query string) *sql.Stmt {
	if s, ok := d.c.stmts.Load(query); ok {
		return s.(*sql.Stmt)
	}
	d.c.prepareLater(query)
	return nil
}

func (d cachedDB) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if s := d.cached(query); s != nil {
		return s.ExecContext(ctx, args...)
	}
	return d.c.pool.ExecContext(ctx, query, args...)
}

func (d cachedDB) PrepareContext(ctx context.Context, query string) (*sql.Stmt, error) {
	return d.c.pool.PrepareContext(ctx, query)
}

func (d cachedDB) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if s := d.cached(query); s != nil {
		return s.QueryContext(ctx, args...)
	}
	return d.c.pool.QueryContext(ctx, query, args...)
}

func (d cachedDB) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if s := d.cached(query); s != nil {
		return s.QueryRowContext(ctx, args...)
	}
	return d.c.pool.QueryRowContext(ctx, query, args...)
}

// cachedTx is a transaction as sqlcdb.DBTX, through the cached statements
// bound to it; queries not cached yet run unprepared and are remembered.
type cachedTx struct {
	c      *stmtCache
	tx     *sql.Tx
	missed []string
}

// stmt returns the cached statement of query bound to the transaction, or
// nil (remembering the query) when there is none yet.
func (d *cachedTx) stmt(ctx context.Context, query string) *sql.Stmt {
	s, ok := d.c.stmts.Load(query)
	if !ok {
		d.missed = append(d.missed, query)
		return nil
	}
	return d.tx.StmtContext(ctx, s.(*sql.Stmt))
}

func (d *cachedTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if s := d.stmt(ctx, query); s != nil {
		return s.ExecContext(ctx, args...)
	}
	return d.tx.ExecContext(ctx, query, args...)
}

func (d *cachedTx) PrepareContext(ctx context.Context, query string) (*sql.Stmt, error) {
	return d.tx.PrepareContext(ctx, query)
}

func (d *cachedTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if s := d.stmt(ctx, query); s != nil {
		return s.QueryContext(ctx, args...)
	}
	return d.tx.QueryContext(ctx, query, args...)
}

func (d *cachedTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if s := d.stmt(ctx, query); s != nil {
		return s.QueryRowContext(ctx, args...)
	}
	return d.tx.QueryRowContext(ctx, query, args...)
}
