package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/outdial/outdial/queries"
	"github.com/outdial/outdial/store/sqlcdb"
)

// Importing a campaign (API.md section 9). A million contacts in one
// transaction held the only writer for half a minute (every other tenant's
// writes and the dialer waited), kept a database/sql statement per row
// until the commit (Tx.StmtContext; 1.4 GB) and wrote a WAL as large as the
// data. Instead the campaign row is inserted 'importing' (invisible to the
// API and the dialer) and its contacts arrive in chunks of importChunkRows,
// each its own short transaction, written by one goroutine while the
// caller goes on reading the CSV. The last transaction publishes the
// campaign; a failure marks it 'deleting' and the purger (purge.go) removes
// what was written, so the result is still all or nothing.

const (
	// importChunkRows contacts (and their first attempts) per transaction:
	// about 15 ms of the writer on 2 cores, so a claim or a status write of
	// another campaign never waits long behind an import.
	importChunkRows = 2000
	// importRowsPerStatement rows per multi-row INSERT (5 parameters each).
	importRowsPerStatement = 100
)

// importRow is one contact, encoded for the multi-row INSERT.
type importRow struct {
	row     int64
	phone   string
	tz      string
	context string
}

// importer writes one campaign's contacts in chunks from its own goroutine.
type importer struct {
	db    *DB
	id    int64
	stmt  *sql.Stmt // the full-size multi-row INSERT, prepared once
	chunk []importRow
	rows  int64
	tzs   map[string]int64 // contacts per timezone value
	// zoneSets are the zone sets of the numbers added (zones.go), by key;
	// zoneKeys caches each set's key by its first element's address: the
	// numbering plan hands out the same slice for every number of a range.
	zoneSets map[string][]string
	zoneKeys map[*string]string

	chunks chan []importRow
	done   chan struct{}
	mu     sync.Mutex
	err    error // the writer's first error
	last   int64 // the last row number written
	free   chan []importRow
}

// beginImport inserts nc as an 'importing' campaign and returns its id.
func (db *DB) beginImport(ctx context.Context, orgID int64, nc NewCampaign) (int64, error) {
	var id int64
	err := db.inTx(ctx, func(q *sqlcdb.Queries) error {
		now := db.nowMS()
		var parent sql.NullInt64
		if nc.ParentCampaignID != nil {
			parent = sql.NullInt64{Int64: *nc.ParentCampaignID, Valid: true}
		}
		var err error
		id, err = q.InsertCampaign(ctx, sqlcdb.InsertCampaignParams{
			OrganizationID: orgID, Name: nc.Name, WorkflowID: nc.WorkflowID, WorkflowName: nc.WorkflowName,
			TelephonyConfigurationID: nc.TelephonyConfigurationID,
			ConfigNameAtCreate:       nc.TelephonyConfigurationName, SourceID: nc.SourceID, DefaultCountry: toNullString(nc.DefaultCountry),
			RetryConfig: mustJSON(nc.RetryConfig), ScheduleConfig: scheduleJSON(nc.ScheduleConfig), CircuitBreaker: mustJSON(nc.CircuitBreaker),
			MaxConcurrency: int64(nc.MaxConcurrency), RateLimitPerSecond: nc.RateLimitPerSecond,
			ParentCampaignID: parent, CreatedAt: now, UpdatedAt: now,
		})
		if err != nil {
			return fmt.Errorf("insert campaign: %w", err)
		}
		if err := q.InsertCampaignDefinition(ctx, sqlcdb.InsertCampaignDefinitionParams{CampaignID: id,
			Definition: string(nc.WorkflowDefinition)}); err != nil {
			return fmt.Errorf("insert campaign definition: %w", err)
		}
		return nil
	})
	return id, err
}

// newImporter starts the writer of campaign id's contacts.
func (db *DB) newImporter(ctx context.Context, id int64) (*importer, error) {
	stmt, err := db.write.PrepareContext(ctx, multiRowSQL(queries.InsertContactsPrefix, queries.ContactValues, importRowsPerStatement))
	if err != nil {
		return nil, fmt.Errorf("prepare contacts insert: %w", err)
	}
	imp := &importer{db: db, id: id, stmt: stmt, tzs: map[string]int64{},
		zoneSets: map[string][]string{}, zoneKeys: map[*string]string{},
		chunks: make(chan []importRow, 1), done: make(chan struct{}), free: make(chan []importRow, 2)}
	imp.chunk = make([]importRow, 0, importChunkRows)
	go imp.write(ctx)
	return imp, nil
}

// multiRowSQL is a multi-row INSERT of n rows: prefix, then values n times.
func multiRowSQL(prefix, values string, n int) string {
	var b strings.Builder
	b.WriteString(prefix)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(values)
	}
	return b.String()
}

// add queues one contact; it returns the writer's error once there is one.
// Rows must come in increasing row order.
func (imp *importer) add(c ContactInput) error {
	ctxJSON, err := json.Marshal(c.Context)
	if err != nil {
		return fmt.Errorf("encode contact context: %w", err)
	}
	tz := c.Timezone
	if tz == "" && len(c.Zones) > 0 {
		tz = imp.zoneKey(c.Zones)
	}
	imp.chunk = append(imp.chunk, importRow{row: int64(c.Row), phone: c.PhoneNumber, tz: tz, context: string(ctxJSON)})
	imp.tzs[tz]++
	imp.rows++
	if len(imp.chunk) == importChunkRows {
		return imp.flush()
	}
	return nil
}

// flush hands the current chunk to the writer.
func (imp *importer) flush() error {
	if err := imp.writeErr(); err != nil {
		return err
	}
	if len(imp.chunk) == 0 {
		return nil
	}
	select {
	case imp.chunks <- imp.chunk:
	case <-imp.done:
		return imp.writeErr()
	}
	select {
	case imp.chunk = <-imp.free:
		imp.chunk = imp.chunk[:0]
	default:
		imp.chunk = make([]importRow, 0, importChunkRows)
	}
	return nil
}

func (imp *importer) writeErr() error {
	imp.mu.Lock()
	defer imp.mu.Unlock()
	return imp.err
}

// finish writes what is left and waits for the writer; it returns the
// writer's error, if any.
func (imp *importer) finish() error {
	err := imp.flush()
	close(imp.chunks)
	<-imp.done
	imp.stmt.Close() //nolint:errcheck // nothing to do about it
	if err != nil {
		return err
	}
	return imp.writeErr()
}

// write is the writer goroutine: one transaction per chunk. After an error
// it drains the remaining chunks without writing them.
func (imp *importer) write(ctx context.Context) {
	defer close(imp.done)
	for chunk := range imp.chunks {
		if imp.writeErr() != nil {
			continue
		}
		if err := imp.writeChunk(ctx, chunk); err != nil {
			imp.mu.Lock()
			imp.err = err
			imp.mu.Unlock()
			continue
		}
		select {
		case imp.free <- chunk:
		default:
		}
	}
}

// writeChunk inserts chunk's contacts in one transaction. Their first
// attempts are queued later, as the dialer needs them (queue.go).
func (imp *importer) writeChunk(ctx context.Context, chunk []importRow) error {
	tx, err := imp.db.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // no-op after commit
	bind := func(args []any, r *importRow) []any {
		return append(args, imp.id, r.row, r.phone, r.tz, r.context)
	}
	if err := insertRows(ctx, tx, imp.stmt, queries.InsertContactsPrefix, queries.ContactValues, chunk, bind); err != nil {
		return fmt.Errorf("insert contacts: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	imp.last = chunk[len(chunk)-1].row
	return nil
}

// insertRows inserts rows with full, the prepared importRowsPerStatement-row
// statement, in groups; a last, shorter group gets a statement of its own,
// prepared on the transaction's connection (the pool's only one). bind
// appends row i's parameters.
func insertRows(ctx context.Context, tx *sql.Tx, full *sql.Stmt, prefix, values string, rows []importRow, bind func(args []any, r *importRow) []any) error {
	stmt := tx.StmtContext(ctx, full)
	var args []any
	for done := 0; done < len(rows); {
		n := min(len(rows)-done, importRowsPerStatement)
		if n < importRowsPerStatement {
			var err error
			if stmt, err = tx.PrepareContext(ctx, multiRowSQL(prefix, values, n)); err != nil {
				return err
			}
		}
		args = args[:0]
		for i := done; i < done+n; i++ {
			args = bind(args, &rows[i])
		}
		if _, err := stmt.ExecContext(ctx, args...); err != nil {
			return err
		}
		done += n
	}
	return nil
}
