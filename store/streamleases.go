package store

import (
	"context"
	"fmt"
	"time"

	"github.com/outdial/outdial/store/sqlcdb"
)

// StreamLease is a node's hold on a telephony configuration's event stream
// (API.md 16): of the nodes sharing a database, only the one holding it
// opens the configuration's event stream (ARI's events websocket: Asterisk
// hands an application to one websocket only) and follows every call
// placed through the configuration, whichever node placed it. Generation
// grows by one every time the lease changes hands. The protocol is the
// campaign lease's (Lease): taken when free or expired, renewed well
// within its TTL, handed back on stop.
type StreamLease struct {
	ConfigID   int64
	Node       string
	Generation int64
}

// AcquireStreamLease takes configuration configID's stream lease for node
// until ttl from now, when no node holds it, its holder's expired, or node
// holds it already (a restart under the same name). ok is false when
// another node holds it.
func (db *DB) AcquireStreamLease(ctx context.Context, configID int64, node string, ttl time.Duration) (l StreamLease, ok bool, err error) {
	now := db.Now()
	err = db.inTx(ctx, func(q sqlcdb.Querier) error {
		gen, err := q.TakeStreamLease(ctx, sqlcdb.TakeStreamLeaseParams{TelephonyConfigurationID: configID, Node: node,
			ExpiresAt: now.Add(ttl).UnixMilli(), Now: now.UnixMilli()})
		if errNoRows(err) {
			gen, err = q.InsertStreamLease(ctx, sqlcdb.InsertStreamLeaseParams{TelephonyConfigurationID: configID, Node: node,
				ExpiresAt: now.Add(ttl).UnixMilli()})
		}
		if errNoRows(err) {
			return nil // held by another node
		}
		if err != nil {
			return err
		}
		l, ok = StreamLease{ConfigID: configID, Node: node, Generation: gen}, true
		return nil
	})
	if err != nil {
		return StreamLease{}, false, fmt.Errorf("acquire stream lease: %w", err)
	}
	return l, ok, nil
}

// RenewStreamLeases extends every stream lease node holds to ttl from now
// and returns them: configuration id → generation. A lease missing from
// the result, or with another generation, was lost.
func (db *DB) RenewStreamLeases(ctx context.Context, node string, ttl time.Duration) (map[int64]int64, error) {
	var rows []sqlcdb.RenewStreamLeasesRow
	err := db.inTx(ctx, func(q sqlcdb.Querier) error {
		var err error
		rows, err = q.RenewStreamLeases(ctx, sqlcdb.RenewStreamLeasesParams{ExpiresAt: db.Now().Add(ttl).UnixMilli(), Node: node})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("renew stream leases: %w", err)
	}
	out := make(map[int64]int64, len(rows))
	for _, r := range rows {
		out[r.TelephonyConfigurationID] = r.Generation
	}
	return out, nil
}

// ReleaseStreamLease hands l back: another node may take the stream at
// once. A lease that changed hands already is left alone.
func (db *DB) ReleaseStreamLease(ctx context.Context, l StreamLease) error {
	if _, err := db.wq.ReleaseStreamLease(ctx, sqlcdb.ReleaseStreamLeaseParams{TelephonyConfigurationID: l.ConfigID,
		Node: l.Node, Generation: l.Generation}); err != nil {
		return fmt.Errorf("release stream lease: %w", err)
	}
	return nil
}

// StreamHolder returns the node holding configuration configID's stream
// lease now, "" when none does.
func (db *DB) StreamHolder(ctx context.Context, configID int64) (string, error) {
	node, err := db.rq.StreamLeaseHolder(ctx, sqlcdb.StreamLeaseHolderParams{TelephonyConfigurationID: configID, Now: db.nowMS()})
	if errNoRows(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("stream lease holder: %w", err)
	}
	return node, nil
}
