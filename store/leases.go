package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/outdial/outdial/store/sqlcdb"
)

// Lease is a node's hold on a running campaign (API.md 16): only the node
// holding it dials the campaign, and Generation, which grows by one every
// time the lease changes hands, fences what it writes. Claims and the
// writes about a placement check in their own transaction that the lease
// still has this generation (checkLease); a node that lost it gets
// ErrLeaseLost and stops.
type Lease struct {
	CampaignID int64
	Node       string
	Generation int64
}

// ErrLeaseLost says the lease a claim or placement write was fenced with
// changed hands (or was handed back): the node must not dial the campaign
// any more.
var ErrLeaseLost = errors.New("campaign lease lost")

// AcquireLease takes campaign id's lease for node until ttl from now, when
// no node holds it, its holder's expired, or node holds it already (a
// restart under the same name). ok is false when another node holds it.
func (db *DB) AcquireLease(ctx context.Context, id int64, node string, ttl time.Duration) (l Lease, ok bool, err error) {
	now := db.Now()
	err = db.inTx(ctx, func(q sqlcdb.Querier) error {
		gen, err := q.TakeLease(ctx, sqlcdb.TakeLeaseParams{CampaignID: id, Node: node,
			ExpiresAt: now.Add(ttl).UnixMilli(), Now: now.UnixMilli()})
		if errNoRows(err) {
			gen, err = q.InsertLease(ctx, sqlcdb.InsertLeaseParams{CampaignID: id, Node: node, ExpiresAt: now.Add(ttl).UnixMilli()})
		}
		if errNoRows(err) {
			return nil // held by another node
		}
		if err != nil {
			return err
		}
		l, ok = Lease{CampaignID: id, Node: node, Generation: gen}, true
		return nil
	})
	if err != nil {
		return Lease{}, false, fmt.Errorf("acquire lease: %w", err)
	}
	return l, ok, nil
}

// LeaseOf reads campaign id's lease as it is (ok false: it never had one),
// whoever holds it and whether or not it expired.
func (db *DB) LeaseOf(ctx context.Context, id int64) (l Lease, expires time.Time, ok bool, err error) {
	r, err := db.rq.GetLease(ctx, id)
	if errNoRows(err) {
		return Lease{}, time.Time{}, false, nil
	}
	if err != nil {
		return Lease{}, time.Time{}, false, fmt.Errorf("read lease: %w", err)
	}
	return Lease{CampaignID: r.CampaignID, Node: r.Node, Generation: r.Generation}, fromMS(r.ExpiresAt), true, nil
}

// RenewLeases extends every lease node holds to ttl from now and returns
// them: campaign id → generation. A lease missing from the result, or
// with another generation, was lost.
func (db *DB) RenewLeases(ctx context.Context, node string, ttl time.Duration) (map[int64]int64, error) {
	var rows []sqlcdb.RenewLeasesRow
	err := db.inTx(ctx, func(q sqlcdb.Querier) error {
		var err error
		rows, err = q.RenewLeases(ctx, sqlcdb.RenewLeasesParams{ExpiresAt: db.Now().Add(ttl).UnixMilli(), Node: node})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("renew leases: %w", err)
	}
	out := make(map[int64]int64, len(rows))
	for _, r := range rows {
		out[r.CampaignID] = r.Generation
	}
	return out, nil
}

// ReleaseLease hands l back: another node may take the campaign at once.
// A lease that changed hands already is left alone.
func (db *DB) ReleaseLease(ctx context.Context, l Lease) error {
	if _, err := db.wq.ReleaseLease(ctx, sqlcdb.ReleaseLeaseParams{CampaignID: l.CampaignID, Node: l.Node,
		Generation: l.Generation}); err != nil {
		return fmt.Errorf("release lease: %w", err)
	}
	return nil
}

// DialedBy returns the node holding campaign id's lease now, "" when none
// does (API.md 16: a campaign's dialed_by).
func (db *DB) DialedBy(ctx context.Context, id int64) (string, error) {
	node, err := db.rq.LeaseHolder(ctx, sqlcdb.LeaseHolderParams{CampaignID: id, Now: db.nowMS()})
	if errNoRows(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("lease holder: %w", err)
	}
	return node, nil
}

// OrganizationLeaseNodes returns the nodes holding unexpired leases on
// campaigns of organization org: the nodes that may be placing its calls
// (a suppression added on one node waits for the others' requests under
// way).
func (db *DB) OrganizationLeaseNodes(ctx context.Context, org int64) ([]string, error) {
	nodes, err := db.rq.OrganizationLeaseNodes(ctx, sqlcdb.OrganizationLeaseNodesParams{OrganizationID: org, Now: db.nowMS()})
	if err != nil {
		return nil, fmt.Errorf("organization lease nodes: %w", err)
	}
	return nodes, nil
}

// LeaseHolders returns the node holding each leased campaign now:
// campaign id → node (a campaign list's dialed_by).
func (db *DB) LeaseHolders(ctx context.Context) (map[int64]string, error) {
	rows, err := db.rq.LeaseHolders(ctx, db.nowMS())
	if err != nil {
		return nil, fmt.Errorf("lease holders: %w", err)
	}
	out := make(map[int64]string, len(rows))
	for _, r := range rows {
		out[r.CampaignID] = r.Node
	}
	return out, nil
}

// OrphanedCampaigns returns the campaigns that need a node and have none:
// running ones without a live lease, and others whose lease expired with
// calls still dialing or in flight.
func (db *DB) OrphanedCampaigns(ctx context.Context) ([]int64, error) {
	ids, err := db.rq.OrphanedCampaigns(ctx, db.nowMS())
	if err != nil {
		return nil, fmt.Errorf("orphaned campaigns: %w", err)
	}
	return ids, nil
}

// errNotRunning says a fenced claim found its campaign stopped (paused or
// ended, on another node too): nothing is claimed.
var errNotRunning = errors.New("campaign not running")

// checkLease is the fencing check inside a claim's or a placement write's
// transaction: ErrLeaseLost unless l is still the campaign's lease, and,
// when running is set, errNotRunning when the campaign is stopped (paused,
// cancelled, completed, failed). A zero
// lease (Node "") is not checked: writes of the service's own
// reconciliation, which no node's lease covers.
//
// A placement write (running unset) on a database no other node shares
// (SQLite, which one process holds) is not checked either: its lease can
// only change hands inside this process, when the lease's renewals stall
// and the orphan scan takes it again, and every placement write is
// conditional on its attempt still dialing, so a write of the old lease's
// dispatch after the new one settled the attempt changes nothing. This
// keeps a query off every call on the embedded engine (dialbench); claims
// keep the check, which also sees a pause.
func (db *DB) checkLease(ctx context.Context, q sqlcdb.Querier, l Lease, running bool) error {
	if l.Node == "" || (!running && !db.Shared()) {
		return nil
	}
	r, err := q.CheckLease(ctx, sqlcdb.CheckLeaseParams{CampaignID: l.CampaignID, Node: l.Node, Generation: l.Generation})
	if errNoRows(err) {
		return ErrLeaseLost
	}
	if err != nil {
		return fmt.Errorf("check lease: %w", err)
	}
	if running && r == 1 {
		return errNotRunning
	}
	return nil
}
