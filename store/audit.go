package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/outdial/outdial/store/sqlcdb"
)

// The audit trail (API.md 17): one entry per request that changes
// something or tried to (refused ones included), through the API or the
// console, recorded by the web layer after it answers. Entries are never
// updated; only retention (PurgeAudit) deletes them. The compliance
// policy's change log was copied in by the migration that made the trail
// (as compliance_policy.update entries by the key that made each change,
// or by "before audit", id 0, when none was recorded).

// The actor types of an audit entry.
const (
	AuditActorUser   = "user"
	AuditActorAPIKey = "api_key"
)

// Audit pages: ListAudit's default and largest limits.
const (
	DefaultAuditLimit = 100
	MaxAuditLimit     = 1000
)

// AuditEntry is one entry of the trail.
type AuditEntry struct {
	ID             int64
	OrganizationID int64
	At             time.Time
	// ActorType is AuditActorUser or AuditActorAPIKey; ActorID the user's
	// or key's id; ActorName its email or name when the entry was made.
	ActorType string
	ActorID   int64
	ActorName string
	// Action is "<target type>.<verb>" (campaign.start, user.update, ...).
	Action string
	// Method is the request's HTTP method; Route the API's route pattern.
	Method string
	Route  string
	// TargetType and TargetID name what was changed; TargetID is nil when
	// there is no one id (the compliance policy, a refused create).
	TargetType string
	TargetID   *int64
	// Changes is JSON: the changed fields before and after, secrets
	// masked, as the web layer shapes it (the entries copied from the
	// policy log hold {"<field path>": {"from": ..., "to": ...}}).
	// RecordAudit stores {} for an empty one.
	Changes json.RawMessage
	// Status is the HTTP status answered; Address the peer address.
	Status  int
	Address string
}

// AuditFilter selects entries of an organization: those after AfterID
// (id ascending), at most Limit of them (0: DefaultAuditLimit; above
// MaxAuditLimit: MaxAuditLimit), and of those fields that are set.
type AuditFilter struct {
	AfterID    int64
	Limit      int
	ActorType  string // "": any
	ActorID    *int64 // nil: any
	Action     string // "": any
	TargetType string // "": any
	TargetID   *int64 // nil: any
}

// RecordAudit appends e to its organization's trail (ID is ignored; a zero
// At is now). It is one insert, committed with the other small writes of
// the moment (the group commit of batch.go). An actor type other than the
// two, or Changes that are not JSON, is EINVALID.
func (db *DB) RecordAudit(ctx context.Context, e AuditEntry) error {
	if e.ActorType != AuditActorUser && e.ActorType != AuditActorAPIKey {
		return Errorf(EINVALID, "audit actor type %q is not user or api_key", e.ActorType)
	}
	changes := string(e.Changes)
	if len(e.Changes) == 0 {
		changes = "{}"
	} else if !json.Valid(e.Changes) {
		return Errorf(EINVALID, "audit changes are not JSON")
	}
	at := e.At
	if at.IsZero() {
		at = db.Now()
	}
	p := sqlcdb.InsertAuditEntryParams{OrganizationID: e.OrganizationID, At: at.UnixMilli(), ActorType: e.ActorType,
		ActorID: e.ActorID, ActorName: e.ActorName, Action: e.Action, Method: e.Method, Route: e.Route,
		TargetType: e.TargetType, TargetID: optNull(e.TargetID), Changes: changes, Status: int64(e.Status), Address: e.Address}
	return db.inBatch(ctx, func(q sqlcdb.Querier) error {
		if _, err := q.InsertAuditEntry(ctx, p); err != nil {
			return fmt.Errorf("record audit entry: %w", err)
		}
		return nil
	})
}

func optNull(v *int64) sql.NullInt64 {
	if v == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: *v, Valid: true}
}

func optString(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }

// ListAudit returns the organization's entries that f selects, oldest
// first: the next page starts after the last one's ID.
func (db *DB) ListAudit(ctx context.Context, orgID int64, f AuditFilter) ([]AuditEntry, error) {
	limit := f.Limit
	switch {
	case limit <= 0:
		limit = DefaultAuditLimit
	case limit > MaxAuditLimit:
		limit = MaxAuditLimit
	}
	rows, err := db.rq.ListAuditEntries(ctx, sqlcdb.ListAuditEntriesParams{OrganizationID: orgID, AfterID: f.AfterID,
		ActorType: optString(f.ActorType), ActorID: optNull(f.ActorID), Action: optString(f.Action),
		TargetType: optString(f.TargetType), TargetID: optNull(f.TargetID), MaxRows: int64(limit)})
	if err != nil {
		return nil, fmt.Errorf("list audit entries: %w", err)
	}
	out := make([]AuditEntry, len(rows))
	for i, r := range rows {
		out[i] = AuditEntry{ID: r.ID, OrganizationID: r.OrganizationID, At: fromMS(r.At), ActorType: r.ActorType,
			ActorID: r.ActorID, ActorName: r.ActorName, Action: r.Action, Method: r.Method, Route: r.Route,
			TargetType: r.TargetType, TargetID: optInt(r.TargetID), Changes: json.RawMessage(r.Changes),
			Status: int(r.Status), Address: r.Address}
	}
	return out, nil
}

// EachAudit calls fn with every entry of the organization that f selects
// after f.AfterID, oldest first, reading them in pages of f.Limit (as in
// ListAudit) so that an export of the whole trail holds one page at a
// time. It stops at fn's first error and returns it.
func (db *DB) EachAudit(ctx context.Context, orgID int64, f AuditFilter, fn func(AuditEntry) error) error {
	for {
		page, err := db.ListAudit(ctx, orgID, f)
		if err != nil {
			return err
		}
		for _, e := range page {
			if err := fn(e); err != nil {
				return err
			}
		}
		if len(page) == 0 || (f.Limit > 0 && len(page) < min(f.Limit, MaxAuditLimit)) || (f.Limit <= 0 && len(page) < DefaultAuditLimit) {
			return nil
		}
		f.AfterID = page[len(page)-1].ID
	}
}

// auditPurgeChunk is how many entries one statement of PurgeAudit deletes.
const auditPurgeChunk = 5000

// PurgeAudit deletes the entries of every organization made before
// olderThan (retention: serve's --audit-retention) and returns how many,
// in chunks of auditPurgeChunk, each its own transaction.
func (db *DB) PurgeAudit(ctx context.Context, olderThan time.Time) (int64, error) {
	var total int64
	for {
		n, err := db.wq.PurgeAuditEntries(ctx, sqlcdb.PurgeAuditEntriesParams{Before: olderThan.UnixMilli(), MaxRows: auditPurgeChunk})
		if err != nil {
			return total, fmt.Errorf("purge audit entries: %w", err)
		}
		total += n
		if n < auditPurgeChunk {
			return total, nil
		}
	}
}
