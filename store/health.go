package store

import (
	"context"
	"fmt"
)

// Ping checks that the database answers a read, on a connection no other
// query uses: it reads the schema table, so the database file itself must
// be readable (a closed database, an unreadable or corrupt file fail).
// Concurrent calls take turns on that connection; each is a few
// microseconds.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.eng.ping(ctx); err != nil {
		return fmt.Errorf("ping database: %w", err)
	}
	return nil
}
