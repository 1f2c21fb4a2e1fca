package store

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"

	"github.com/outdial/outdial/store/sqlcdb"
)

// CreateCampaign stores a draft campaign and its contacts, each with a first
// call attempt. feed is called once and calls add for each contact in CSV
// order (increasing row numbers); when feed returns an error nothing is
// stored and that error is returned.
//
// The contacts are written in short transactions while feed runs (see
// import.go), so an import of any size never holds the writer for long; the
// campaign becomes visible only when the last one commits. On an error the
// rows already written are purged (at once when few, else in the
// background); the campaign was never visible.
func (db *DB) CreateCampaign(ctx context.Context, orgID int64, nc NewCampaign, feed func(add func(ContactInput) error) (columns []string, err error)) (*Campaign, error) {
	id, err := db.beginImport(ctx, orgID, nc)
	if err != nil {
		return nil, err
	}
	imp, err := db.newImporter(ctx, id)
	if err != nil {
		db.discardImport(id, 0)
		return nil, err
	}
	columns, err := feed(imp.add)
	if ferr := imp.finish(); err == nil {
		err = ferr
	}
	if err == nil {
		if columns == nil {
			columns = []string{}
		}
		err = db.publishImport(ctx, id, nc.RedialOf, imp.rows, imp.last, columns, imp.tzs, imp.zoneSets)
	}
	if err != nil {
		db.discardImport(id, imp.rows)
		return nil, err
	}
	return db.GetCampaign(ctx, orgID, id)
}

// redialScanRows is the span of the parent's row numbers one redial chunk
// reads: a few milliseconds of the writer however few of them match.
const redialScanRows = 5000

// RedialCampaign stores a draft campaign of the final contacts of campaign
// nc.RedialOf whose outcome is one of outcomes, with their row numbers, CSV
// columns and timezones, and marks the parent redialed: ECONFLICT when it
// already was, or when no contact matches. Like CreateCampaign it copies in
// short transactions (inside the database: no contact passes through Go)
// and publishes the campaign at the end.
func (db *DB) RedialCampaign(ctx context.Context, orgID int64, nc NewCampaign, columns []string, outcomes []string) (*Campaign, error) {
	if nc.RedialOf == nil {
		return nil, fmt.Errorf("redial campaign: no parent")
	}
	parent := *nc.RedialOf
	id, err := db.beginImport(ctx, orgID, nc)
	if err != nil {
		return nil, err
	}
	parentLast, err := db.rq.LastContactRow(ctx, parent)
	if err != nil {
		db.discardImport(id, 0)
		return nil, fmt.Errorf("redial campaign: %w", err)
	}
	var rows, lastRow int64
	tzs := map[string]int64{} // contacts per timezone value
	for after := int64(0); after < parentLast; after += redialScanRows {
		through := after + redialScanRows
		var n int64
		err = db.inTx(ctx, func(q sqlcdb.Querier) error {
			var err error
			n, err = q.CopyRedialContacts(ctx, sqlcdb.CopyRedialContactsParams{CampaignID: id, ParentID: parent,
				AfterRow: after, ThroughRow: through, Outcomes: mustJSON(outcomes)})
			if err != nil || n == 0 {
				return err
			}
			if lastRow, err = q.LastContactRow(ctx, id); err != nil {
				return err
			}
			chunkTZs, err := q.ContactTimezonesAfter(ctx, sqlcdb.ContactTimezonesAfterParams{CampaignID: id, RowNumber: after})
			for _, tz := range chunkTZs {
				tzs[tz.Timezone] += tz.N
			}
			return err
		})
		if err != nil {
			err = fmt.Errorf("copy redial contacts: %w", err)
			break
		}
		rows += n
	}
	if err == nil && rows == 0 {
		err = Errorf(ECONFLICT, "no contact of campaign %d has a matching final outcome", parent)
	}
	if err == nil {
		var sets map[string][]string
		if sets, err = db.zoneSetsOf(ctx, parent, tzs); err == nil {
			err = db.publishImport(ctx, id, nc.RedialOf, rows, lastRow, columns, tzs, sets)
		}
	}
	if err != nil {
		db.discardImport(id, rows)
		return nil, err
	}
	return db.GetCampaign(ctx, orgID, id)
}

// publishImport makes imported campaign id visible with its totals (tzs:
// its contacts per timezone value), and marks the campaign it redials
// (ECONFLICT when another redial won).
func (db *DB) publishImport(ctx context.Context, id int64, redialOf *int64, rows, lastRow int64, columns []string, tzs map[string]int64, zoneSets map[string][]string) error {
	if zoneSets == nil {
		zoneSets = map[string][]string{}
	}
	return db.inTx(ctx, func(q sqlcdb.Querier) error {
		for tz, n := range tzs {
			if err := q.AddZoneContacts(ctx, sqlcdb.AddZoneContactsParams{CampaignID: id, Timezone: tz, Contacts: n}); err != nil {
				return fmt.Errorf("count contacts per timezone: %w", err)
			}
		}
		if redialOf != nil {
			n, err := q.SetRedialed(ctx, sqlcdb.SetRedialedParams{RedialedCampaignID: sql.NullInt64{Int64: id, Valid: true}, UpdatedAt: db.nowMS(), ID: *redialOf})
			if err != nil {
				return fmt.Errorf("mark redialed: %w", err)
			}
			if n == 0 {
				// A concurrent redial won; name its campaign like the
				// web layer's early check does.
				if pr, err := q.GetCampaignByID(ctx, *redialOf); err == nil && pr.RedialedCampaignID.Valid {
					return Errorf(ECONFLICT, "campaign %d was already redialed as campaign %d", *redialOf, pr.RedialedCampaignID.Int64)
				}
				return Errorf(ECONFLICT, "campaign %d was already redialed", *redialOf)
			}
		}
		n, err := q.PublishCampaign(ctx, sqlcdb.PublishCampaignParams{TotalRows: rows, Columns: mustJSON(columns),
			Timezones: mustJSON(slices.Sorted(maps.Keys(tzs))), ZoneSets: mustJSON(zoneSets), LastRow: lastRow, ID: id})
		if err != nil {
			return fmt.Errorf("publish campaign: %w", err)
		}
		if n == 0 {
			return fmt.Errorf("publish campaign %d: no longer importing", id)
		}
		_, err = queueChunk(ctx, q, id, 0, lastRow)
		return err
	})
}
