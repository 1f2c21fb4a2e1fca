package store

import (
	"context"

	"github.com/outdial/outdial/store/sqlcdb"
)

// engine is one database engine under the store, in the shape of
// riverqueue/river's drivers: the store's logic (every exported DB method)
// runs over sqlcdb.Querier, whose methods are the named queries of
// queries/*.sql that sqlc generates for the engine, and over the few
// mechanics where dialects differ, below. Nothing outside this package
// knows which engine is underneath.
//
// SQLite (sqlite.go) is the embedded default: one writer connection with
// IMMEDIATE transactions, a read-only pool, and a read-only connection of
// its own for health checks; its pragmas are in the DSN of every
// connection.
type engine interface {
	// name is "sqlite" or "postgres".
	name() string
	// reads returns the queries on the read pool, for reads outside a
	// transaction; writes the queries on the writer, for single-statement
	// writes outside a transaction.
	reads() sqlcdb.Querier
	writes() sqlcdb.Querier
	// inTx runs fn in one write transaction, committing when fn returns
	// nil and rolling back otherwise. fn must use only the Querier it is
	// given (on SQLite, another query on the writer would wait for this
	// transaction forever).
	inTx(ctx context.Context, fn func(q sqlcdb.Querier) error) error
	// insertContacts inserts rows, contacts of campaign id, in one
	// transaction: a chunk of an import (SQLite: prepared multi-row
	// VALUES statements).
	insertContacts(ctx context.Context, id int64, rows []importRow) error
	// setDurable makes the writer's next commits reach the disk before
	// they return (true), or only the operating system (false): a claim's
	// commit must survive a power cut before its provider request (SQLite:
	// synchronous FULL, else NORMAL under WAL).
	setDurable(durable bool) error
	// ping checks that the database answers a read, on a connection no
	// other query waits for.
	ping(ctx context.Context) error
	// isUniqueViolation reports whether err is a unique constraint's.
	isUniqueViolation(err error) bool
	// isRetryable reports whether err ended a transaction that may succeed
	// when run again: a deadlock's victim or a serialization failure
	// (PostgreSQL; never on SQLite, whose writes take turns).
	isRetryable(err error) bool
	// close closes every connection.
	close() error
}
