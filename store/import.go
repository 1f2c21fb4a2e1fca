package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sync"

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
	err := db.inTx(ctx, func(q sqlcdb.Querier) error {
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
	imp := &importer{db: db, id: id, tzs: map[string]int64{},
		zoneSets: map[string][]string{}, zoneKeys: map[*string]string{},
		chunks: make(chan []importRow, 1), done: make(chan struct{}), free: make(chan []importRow, 2)}
	imp.chunk = make([]importRow, 0, importChunkRows)
	go imp.write(ctx)
	return imp, nil
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
	if err := imp.db.eng.insertContacts(ctx, imp.id, chunk); err != nil {
		return err
	}
	imp.last = chunk[len(chunk)-1].row
	return nil
}
