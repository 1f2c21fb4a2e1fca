package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Notifications between the nodes that share a database (API.md 16): a
// node tells the others that a campaign changed (a status applied, a
// pause, a lease handed back), so that the node dialing it looks again at
// once and event streams on every node follow it. SQLite has one node:
// Notify does nothing and Listen returns at once.

// notifyChannel is the PostgreSQL channel of Notify and Listen.
const notifyChannel = "outdial"

// Notify sends payload to every node listening (itself included). On
// PostgreSQL it is pg_notify, delivered when the statement commits.
func (db *DB) Notify(ctx context.Context, payload string) error {
	pg, ok := db.eng.(*postgresEngine)
	if !ok {
		return nil
	}
	if _, err := pg.pool.Exec(ctx, "SELECT pg_notify($1, $2)", notifyChannel, payload); err != nil {
		return fmt.Errorf("notify: %w", err)
	}
	return nil
}

// Listen calls fn with every payload Notify sends, on any node, until ctx
// ends; it reports whether there is anything to listen to (false on
// SQLite, at once). It holds one connection of its own (LISTEN is session
// state: behind PgBouncer in transaction pooling, that connection must
// bypass it; docs/api.md). Each time it is listening, the first time and
// after the connection broke and was made again (with a back-off), it calls
// fn("") so the caller looks at everything again: notifications sent before
// the LISTEN took effect (a node handing a campaign back while this one was
// starting, or meanwhile) are lost.
func (db *DB) Listen(ctx context.Context, fn func(payload string)) bool {
	pg, ok := db.eng.(*postgresEngine)
	if !ok {
		return false
	}
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := pg.listenOnce(ctx, fn)
		if ctx.Err() != nil {
			break
		}
		db.p.log.Load().Warn("store: listening for other nodes' notifications", "error", err.Error())
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
	return true
}

// listenOnce listens on one connection until it fails or ctx ends.
func (e *postgresEngine) listenOnce(ctx context.Context, fn func(string)) error {
	conn, err := pgx.ConnectConfig(ctx, e.pool.Config().ConnConfig.Copy())
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+notifyChannel); err != nil {
		return err
	}
	fn("")
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		fn(n.Payload)
	}
}

// Shared reports whether other nodes may share the database (PostgreSQL):
// only then is there anyone to Notify.
func (db *DB) Shared() bool {
	_, ok := db.eng.(*postgresEngine)
	return ok
}
