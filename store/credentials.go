package store

import (
	"context"
	"fmt"

	"github.com/outdial/outdial/store/sqlcdb"
)

// LiveCredentials reports which of the given credentials still
// authenticate: of keyIDs, the API keys not revoked; of sessionIDs, the
// console sessions not signed out or expired whose key is not revoked (the
// conditions Authenticate and Session check). Long-lived requests (the
// event streams) hold a credential checked once at their start; they ask
// here, for all of them at once, whether it still holds. Empty inputs cost
// no query.
func (db *DB) LiveCredentials(ctx context.Context, keyIDs, sessionIDs []int64) (keys, sessions map[int64]bool, err error) {
	keys, sessions = make(map[int64]bool, len(keyIDs)), make(map[int64]bool, len(sessionIDs))
	if len(keyIDs) > 0 {
		ids, err := db.rq.LiveAPIKeyIDs(ctx, keyIDs)
		if err != nil {
			return nil, nil, fmt.Errorf("live api keys: %w", err)
		}
		for _, id := range ids {
			keys[id] = true
		}
	}
	if len(sessionIDs) > 0 {
		ids, err := db.rq.LiveConsoleSessionIDs(ctx, sqlcdb.LiveConsoleSessionIDsParams{Now: db.nowMS(), Ids: sessionIDs})
		if err != nil {
			return nil, nil, fmt.Errorf("live sessions: %w", err)
		}
		for _, id := range ids {
			sessions[id] = true
		}
	}
	return keys, sessions, nil
}
