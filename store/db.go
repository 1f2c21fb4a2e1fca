// Package store is the only package that touches database/sql and the
// sqlc-generated code in store/sqlcdb. It owns the database (an engine,
// engine.go: SQLite by default, sqlite.go), the sealing of provider
// credentials, and hands out its own types and typed errors (see errors.go)
// to the web and dialer layers.
package store

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/outdial/outdial/store/sqlcdb"
)

// DB is an open Outdial database. All methods are safe for concurrent use.
type DB struct {
	eng    engine
	wq     sqlcdb.Querier // eng.writes()
	rq     sqlcdb.Querier // eng.reads()
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

// Open opens the database at location, applies pending migrations and
// returns a DB that seals credentials with sealer. location is a SQLite
// file's path (created when missing), or a PostgreSQL URL
// (postgres://USER:PASS@HOST:PORT/DB?sslmode=..., IsDatabaseURL) of a
// database that several nodes may share.
func Open(ctx context.Context, location string, sealer *Sealer) (*DB, error) {
	var (
		eng engine
		err error
	)
	if IsDatabaseURL(location) {
		eng, err = openPostgres(ctx, location)
	} else {
		eng, err = openSQLite(ctx, location)
	}
	if err != nil {
		return nil, err
	}
	return newDB(eng, sealer), nil
}

// Engine names the engine underneath: "sqlite" or "postgres" (the health
// check says which, API.md 16).
func (db *DB) Engine() string { return db.eng.name() }

// newDB starts the store's logic over eng.
func newDB(eng engine, sealer *Sealer) *DB {
	db := &DB{eng: eng, wq: eng.writes(), rq: eng.reads(), sealer: sealer, Now: time.Now}
	db.syncMode = db.setSynchronous
	db.startBatcher()
	db.startPurger()
	return db
}

// Close stops the background writers and closes the database.
func (db *DB) Close() error {
	db.stopPurger()
	db.stopBatcher()
	if err := db.eng.close(); err != nil {
		return fmt.Errorf("close database: %w", err)
	}
	return nil
}

// inTx runs fn in one write transaction, committing when fn returns nil.
// fn must use only the Querier it is given.
func (db *DB) inTx(ctx context.Context, fn func(q sqlcdb.Querier) error) error {
	return db.eng.inTx(ctx, fn)
}

func (db *DB) nowMS() int64 { return db.Now().UnixMilli() }

func fromMS(ms int64) time.Time { return time.UnixMilli(ms).UTC() }
