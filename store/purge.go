package store

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/outdial/outdial/store/sqlcdb"
)

// Purging hidden campaigns. A deleted campaign, or an import that failed,
// is made invisible in one statement; its rows are then deleted by one
// goroutine per database in chunks of purgeChunkRows, each its own short
// transaction, so that deleting a million contacts never holds the writer
// for long. After a crash the purge resumes when serve starts
// (ResumePurges).

// purgeChunkRows rows per purge transaction.
const purgeChunkRows = 2000

type purger struct {
	ids    chan int64
	stop   context.CancelFunc
	ctx    context.Context
	exited chan struct{}
	log    atomic.Pointer[slog.Logger]
}

func (db *DB) startPurger() {
	ctx, cancel := context.WithCancel(context.Background())
	db.p = &purger{ids: make(chan int64, 64), stop: cancel, ctx: ctx, exited: make(chan struct{})}
	db.p.log.Store(slog.Default())
	go func() {
		defer close(db.p.exited)
		sweep := time.NewTicker(replaySweep)
		defer sweep.Stop()
		for {
			select {
			case <-sweep.C:
				db.sweepReplayKeys(ctx)
			case id := <-db.p.ids:
				if err := db.purge(ctx, id); err != nil && ctx.Err() == nil {
					db.p.log.Load().Error("store: purge campaign", slog.Int64("campaign_id", id), slog.String("error", err.Error()))
				}
			case <-ctx.Done():
				return
			}
		}
	}()
}

// replaySweep is how often expired webhook replay keys are deleted.
const replaySweep = 5 * time.Minute

// sweepReplayKeys deletes expired replay keys, a chunk per transaction.
func (db *DB) sweepReplayKeys(ctx context.Context) {
	for {
		var n int64
		err := db.inTx(ctx, func(q sqlcdb.Querier) error {
			var err error
			n, err = q.PurgeReplayKeys(ctx, sqlcdb.PurgeReplayKeysParams{Now: db.nowMS(), MaxRows: purgeChunkRows})
			return err
		})
		if err != nil {
			if ctx.Err() == nil {
				db.p.log.Load().Error("store: sweep replay keys", slog.String("error", err.Error()))
			}
			return
		}
		if n < purgeChunkRows {
			return
		}
	}
}

func (db *DB) stopPurger() {
	db.p.stop()
	<-db.p.exited
}

// SetLogger sets the logger of the store's background work (purges).
func (db *DB) SetLogger(l *slog.Logger) { db.p.log.Store(l) }

// schedulePurge hands campaign id to the purger without waiting for it;
// when its queue is full the id is left for ResumePurges at the next start.
func (db *DB) schedulePurge(id int64) {
	select {
	case db.p.ids <- id:
	default:
	}
}

// discardImport hides a failed import of about rows contacts and purges
// it: at once when it is small (a rejected CSV of a few thousand rows is
// gone before the 422 is answered), else in the background. It runs with
// its own context: the request's may be the reason the import failed.
func (db *DB) discardImport(id, rows int64) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := db.wq.DiscardImport(ctx, id); err != nil {
		// Still 'importing': ResumePurges removes it at the next start.
		db.p.log.Load().Error("store: discard import", slog.Int64("campaign_id", id), slog.String("error", err.Error()))
		return
	}
	if rows <= inlinePurgeRows {
		if err := db.purge(ctx, id); err == nil {
			return
		}
	}
	db.schedulePurge(id)
}

// inlinePurgeRows: a failed import of at most this many contacts is purged
// before its error is answered (a few short transactions).
const inlinePurgeRows = 5 * purgeChunkRows

// ResumePurges schedules the purge of every hidden campaign: deletions not
// finished and imports a crash interrupted. Only the serving process may
// call it (at start, before it imports anything): another process's import
// in progress is hidden too.
func (db *DB) ResumePurges(ctx context.Context) error {
	ids, err := db.rq.HiddenCampaignIDs(ctx)
	if err != nil {
		return fmt.Errorf("hidden campaigns: %w", err)
	}
	for _, id := range ids {
		db.schedulePurge(id)
	}
	return nil
}

// DeleteCampaign deletes campaign id of organization orgID: a draft or
// finished campaign disappears at once and its rows are purged in the
// background. ENOTFOUND for an unknown id; ECONFLICT for a running or
// paused campaign, or while a call of it is still to be recorded.
func (db *DB) DeleteCampaign(ctx context.Context, orgID, id int64) error {
	err := db.inTx(ctx, func(q sqlcdb.Querier) error {
		r, err := q.GetCampaign(ctx, sqlcdb.GetCampaignParams{ID: id, OrganizationID: orgID})
		if err != nil {
			return notFound(err, "campaign", id)
		}
		n, err := q.HideCampaign(ctx, sqlcdb.HideCampaignParams{Now: db.nowMS(), ID: id, OrganizationID: orgID})
		if err != nil {
			return fmt.Errorf("delete campaign: %w", err)
		}
		if n == 0 {
			if r.State == StateRunning || r.State == StatePaused {
				return Errorf(ECONFLICT, "campaign %d is %s; cancel it before deleting it", id, r.State)
			}
			return Errorf(ECONFLICT, "campaign %d still has calls in flight; delete it once their outcomes are recorded", id)
		}
		// A redial keeps no link to a deleted parent, nor a parent to a
		// deleted redial.
		return q.UnlinkRedials(ctx, sql.NullInt64{Int64: id, Valid: true})
	})
	if err != nil {
		return err
	}
	db.schedulePurge(id)
	return nil
}

// purge deletes hidden campaign id's attempts, contacts, logs and row, a
// chunk per transaction.
func (db *DB) purge(ctx context.Context, id int64) error {
	steps := []struct {
		what string
		run  func(q sqlcdb.Querier) (int64, error)
	}{
		{"attempts", func(q sqlcdb.Querier) (int64, error) {
			return q.PurgeAttempts(ctx, sqlcdb.PurgeAttemptsParams{CampaignID: id, MaxRows: purgeChunkRows})
		}},
		{"contacts", func(q sqlcdb.Querier) (int64, error) {
			return q.PurgeContacts(ctx, sqlcdb.PurgeContactsParams{CampaignID: id, MaxRows: purgeChunkRows})
		}},
		{"logs", func(q sqlcdb.Querier) (int64, error) {
			return q.PurgeLogs(ctx, sqlcdb.PurgeLogsParams{CampaignID: id, MaxRows: purgeChunkRows})
		}},
	}
	for _, s := range steps {
		for {
			var n int64
			err := db.inTx(ctx, func(q sqlcdb.Querier) error {
				var err error
				n, err = s.run(q)
				return err
			})
			if err != nil {
				return fmt.Errorf("purge %s: %w", s.what, err)
			}
			if n < purgeChunkRows {
				break
			}
		}
	}
	return db.inTx(ctx, func(q sqlcdb.Querier) error {
		if err := q.UnlinkRedials(ctx, sql.NullInt64{Int64: id, Valid: true}); err != nil {
			return err
		}
		_, err := q.DeleteHiddenCampaign(ctx, id)
		return err
	})
}
