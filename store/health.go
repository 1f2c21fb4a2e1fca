package store

import (
	"context"
	"database/sql"
	"fmt"
)

// openHealth opens the one read-only connection Ping uses. Requests share
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

// Ping checks that the database answers a read, on a connection no other
// query uses: it reads the schema table, so the database file itself must
// be readable (a closed database, an unreadable or corrupt file fail).
// Concurrent calls take turns on that connection; each is a few
// microseconds.
func (db *DB) Ping(ctx context.Context) error {
	var n int
	if err := db.health.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&n); err != nil {
		return fmt.Errorf("ping database: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("ping database: no schema")
	}
	return nil
}
