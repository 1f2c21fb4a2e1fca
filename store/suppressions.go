package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/outdial/outdial/store/sqlcdb"
)

// The suppression list (API.md 12.1): an organization's numbers that are
// never called. The dialer asks ActiveSuppression right before every
// provider request; it is one search of the (organization, number) unique
// index, so its cost does not grow with the list.

// Suppression sources.
const (
	SourceAPI = "api"
	SourceCSV = "csv"
	// SourceOptOut is followed by ":<attempt id>".
	SourceOptOut = "opt_out"
)

// suppressChunk numbers are added per transaction: a few milliseconds of
// the writer, so that an import of a million numbers never stalls dialing.
const suppressChunk = 2000

// Suppression is one entry of the list.
type Suppression struct {
	ID          int64
	PhoneNumber string
	Reason      string
	Source      string
	CreatedAt   time.Time
	ExpiresAt   *time.Time
}

// SuppressionHit is the entry that suppresses a number.
type SuppressionHit struct {
	ID     int64
	Source string
}

// NewSuppressions describes numbers to add.
type NewSuppressions struct {
	Reason    string
	Source    string
	ExpiresAt *time.Time
}

// SuppressResult counts what adding numbers did. A number whose entry had
// expired counts as added (the entry is renewed); one with an active entry
// is already present (its expiry moves to the later of the two).
type SuppressResult struct {
	Added          int
	AlreadyPresent int
}

// ActiveSuppression returns the entry suppressing number in organization
// org at now, or nil.
func (db *DB) ActiveSuppression(ctx context.Context, org int64, number string, now time.Time) (*SuppressionHit, error) {
	r, err := db.rq.ActiveSuppression(ctx, sqlcdb.ActiveSuppressionParams{OrganizationID: org, PhoneNumber: number,
		Now: sql.NullInt64{Int64: now.UnixMilli(), Valid: true}})
	if errNoRows(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("suppression check: %w", err)
	}
	return &SuppressionHit{ID: r.ID, Source: r.Source}, nil
}

// AddSuppressions adds numbers (E.164, normalised by the caller) to org's
// list in one transaction. Repeated numbers count once, then as already
// present.
func (db *DB) AddSuppressions(ctx context.Context, org int64, ns NewSuppressions, numbers []string) (SuppressResult, error) {
	var res SuppressResult
	err := db.inTx(ctx, func(q sqlcdb.Querier) error {
		// Under the organization's suppression lock: the renewal and the
		// extension below read the entries before the insert, and an entry
		// another add inserted meanwhile was not among them; the insert
		// then left it as that add wrote it, so an add without expiry
		// answered while the entry still expired (TestRaceSuppressions).
		if err := lockSuppressions(ctx, q, org); err != nil {
			return err
		}
		var err error
		res, err = addSuppressions(ctx, q, org, ns, numbers, db.Now())
		return err
	})
	return res, err
}

// ImportSuppressions adds the numbers read calls add with, suppressChunk per
// transaction: each chunk is committed as it fills, so a failed read keeps
// what was added before it (adding is idempotent: a retried import counts
// those as already present).
func (db *DB) ImportSuppressions(ctx context.Context, org int64, ns NewSuppressions, read func(add func(number string) error) error) (SuppressResult, error) {
	var total SuppressResult
	chunk := make([]string, 0, suppressChunk)
	flush := func() error {
		if len(chunk) == 0 {
			return nil
		}
		res, err := db.AddSuppressions(ctx, org, ns, chunk)
		if err != nil {
			return err
		}
		total.Added += res.Added
		total.AlreadyPresent += res.AlreadyPresent
		chunk = chunk[:0]
		return nil
	}
	err := read(func(number string) error {
		chunk = append(chunk, number)
		if len(chunk) < suppressChunk {
			return nil
		}
		return flush()
	})
	if err == nil {
		err = flush()
	}
	return total, err
}

func addSuppressions(ctx context.Context, q sqlcdb.Querier, org int64, ns NewSuppressions, numbers []string, now time.Time) (SuppressResult, error) {
	uniq := slices.Clone(numbers)
	slices.Sort(uniq)
	uniq = slices.Compact(uniq)
	list, err := json.Marshal(uniq)
	if err != nil {
		return SuppressResult{}, err
	}
	exp := nullMS(ns.ExpiresAt)
	revived, err := q.ReviveSuppressions(ctx, sqlcdb.ReviveSuppressionsParams{Reason: ns.Reason, Source: ns.Source,
		Now: now.UnixMilli(), ExpiresAt: exp, OrganizationID: org, Numbers: string(list)})
	if err != nil {
		return SuppressResult{}, fmt.Errorf("renew suppressions: %w", err)
	}
	if err := q.ExtendSuppressions(ctx, sqlcdb.ExtendSuppressionsParams{ExpiresAt: exp, OrganizationID: org, Numbers: string(list)}); err != nil {
		return SuppressResult{}, fmt.Errorf("extend suppressions: %w", err)
	}
	inserted, err := q.InsertSuppressions(ctx, sqlcdb.InsertSuppressionsParams{OrganizationID: org, Reason: ns.Reason,
		Source: ns.Source, Now: now.UnixMilli(), ExpiresAt: exp, Numbers: string(list)})
	if err != nil {
		return SuppressResult{}, fmt.Errorf("insert suppressions: %w", err)
	}
	added := int(revived + inserted)
	return SuppressResult{Added: added, AlreadyPresent: len(numbers) - added}, nil
}

// ListSuppressions returns up to limit entries of org with an id above
// afterID, by id; with number set, only its entry.
func (db *DB) ListSuppressions(ctx context.Context, org int64, number string, afterID int64, limit int) ([]Suppression, error) {
	var rows []sqlcdb.Suppression
	var err error
	if number != "" {
		rows, err = db.rq.FindSuppression(ctx, sqlcdb.FindSuppressionParams{OrganizationID: org, PhoneNumber: number, AfterID: afterID})
	} else {
		rows, err = db.rq.ListSuppressions(ctx, sqlcdb.ListSuppressionsParams{OrganizationID: org, AfterID: afterID, MaxRows: int64(limit)})
	}
	if err != nil {
		return nil, fmt.Errorf("list suppressions: %w", err)
	}
	out := make([]Suppression, len(rows))
	for i, r := range rows {
		out[i] = Suppression{ID: r.ID, PhoneNumber: r.PhoneNumber, Reason: r.Reason, Source: r.Source,
			CreatedAt: fromMS(r.CreatedAt), ExpiresAt: optTime(r.ExpiresAt)}
	}
	return out, nil
}

// DeleteSuppression removes entry id of org: ENOTFOUND when org has none.
func (db *DB) DeleteSuppression(ctx context.Context, org, id int64) error {
	n, err := db.wq.DeleteSuppression(ctx, sqlcdb.DeleteSuppressionParams{ID: id, OrganizationID: org})
	if err != nil {
		return fmt.Errorf("delete suppression: %w", err)
	}
	if n == 0 {
		return Errorf(ENOTFOUND, "suppression %d not found", id)
	}
	return nil
}

// OutcomeSuppressed ends an attempt whose number was on the suppression
// list when it was about to be placed: final, counted in processed_rows,
// not in failed_rows nor executed_count, never retried nor redialed.
const OutcomeSuppressed = "suppressed"
