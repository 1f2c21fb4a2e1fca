package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/outdial/outdial/store/sqlcdb"
)

// Lazily queued first attempts. Importing a campaign stores its contacts
// only; a contact's first attempt (a call_attempts row, queued, due at
// once) is created when the dialer is about to need it: when a claim finds
// fewer claimable attempts than it may take, the next queueChunkRows
// contacts in row order get their first attempts, in the claim's own
// transaction, and the claim is tried again. campaigns.queued_through_row
// records how far that went, durably with the attempts it created, so the
// queue's order (due retries, then contacts in CSV order) is the same as if
// every first attempt had been created at import; contacts beyond it are
// counted in total_queued_count all along. Publishing an import queues the
// first chunk, so a campaign of up to queueChunkRows contacts has every
// first attempt from the start.

const (
	// queueChunkRows first attempts are queued at a time: a few
	// milliseconds of the writer.
	queueChunkRows = 1000
	// queueChunksPerClaim bounds the chunks one claim queues when the
	// queued contacts' windows are closed, so that a claim never holds the
	// writer for long; the dialer claims again at once while the queue has
	// contacts left to queue (QueuedByTimezone reports them as due).
	queueChunksPerClaim = 4
)

// claimWithQueueing runs claim, queueing more first attempts while it
// returns fewer than max and contacts are left to queue. It runs inside
// ClaimAttempts's transaction.
func claimWithQueueing(ctx context.Context, q sqlcdb.Querier, campaignID int64, max int, claim func(n int) ([]sqlcdb.CallAttempt, error)) ([]sqlcdb.CallAttempt, error) {
	claim = claimInOrder(claim)
	rows, err := claim(max)
	if err != nil || len(rows) >= max {
		return rows, err
	}
	cur, err := q.QueueCursor(ctx, campaignID)
	if err != nil {
		return nil, fmt.Errorf("queue cursor: %w", err)
	}
	through := cur.QueuedThroughRow
	for range queueChunksPerClaim {
		if len(rows) >= max || through >= cur.LastRow {
			break
		}
		if through, err = queueChunk(ctx, q, campaignID, through, cur.LastRow); err != nil {
			return nil, err
		}
		more, err := claim(max - len(rows))
		if err != nil {
			return nil, err
		}
		rows = append(rows, more...)
	}
	return rows, nil
}

// claimInOrder returns claim's rows in dialing order (due retries first,
// oldest due first, then first attempts in CSV order): the order of an
// UPDATE's RETURNING rows is the engine's (PostgreSQL's follows no ORDER
// BY).
func claimInOrder(claim func(n int) ([]sqlcdb.CallAttempt, error)) func(n int) ([]sqlcdb.CallAttempt, error) {
	return func(n int) ([]sqlcdb.CallAttempt, error) {
		rows, err := claim(n)
		slices.SortFunc(rows, func(a, b sqlcdb.CallAttempt) int {
			return cmp.Or(cmp.Compare(a.Priority, b.Priority), cmp.Compare(a.DueAt, b.DueAt), cmp.Compare(a.ContactRow, b.ContactRow))
		})
		return rows, err
	}
}

// queueChunk queues the first attempts of the next queueChunkRows contacts
// of campaign id after row through (lastRow is the campaign's last) and
// returns the new queued_through_row.
//
// It moves the cursor first, conditionally: two claims of the campaign at
// once (two nodes; the lease lets one claim at a time, but the queue does
// not rely on it) both read the cursor at through, and both queued the
// chunk, the second failing on UNIQUE(contact_id, attempt)
// (TestRaceQueueChunks). Now the second's move finds the cursor moved (on
// PostgreSQL it waits for the first's commit, the row's lock) and queues
// nothing: it returns the cursor as the first left it, whose chunk is
// queued, and claims from it.
func queueChunk(ctx context.Context, q sqlcdb.Querier, id, through, lastRow int64) (int64, error) {
	end, err := q.QueueChunkEnd(ctx, sqlcdb.QueueChunkEndParams{CampaignID: id, AfterRow: through, Skip: queueChunkRows - 1})
	if errNoRows(err) {
		end, err = lastRow, nil
	}
	if err != nil {
		return 0, fmt.Errorf("queue chunk: %w", err)
	}
	moved, err := q.AdvanceQueuedThrough(ctx, sqlcdb.AdvanceQueuedThroughParams{QueuedThroughRow: end, ID: id, FromRow: through})
	if err != nil {
		return 0, fmt.Errorf("queue cursor: %w", err)
	}
	if moved == 0 {
		cur, err := q.QueueCursor(ctx, id)
		if err != nil {
			return 0, fmt.Errorf("queue cursor: %w", err)
		}
		return cur.QueuedThroughRow, nil
	}
	if _, err := q.QueueFirstAttempts(ctx, sqlcdb.QueueFirstAttemptsParams{CampaignID: id, AfterRow: through, LastRow: end}); err != nil {
		return 0, fmt.Errorf("queue first attempts: %w", err)
	}
	if err := q.NoteZonesQueued(ctx, sqlcdb.NoteZonesQueuedParams{CampaignID: id, AfterRow: through, LastRow: end}); err != nil {
		return 0, fmt.Errorf("count queued contacts per timezone: %w", err)
	}
	return end, nil
}

// unqueuedContacts reports whether campaign id has contacts whose first
// attempt is not queued yet.
func (db *DB) unqueuedContacts(ctx context.Context, id int64) (bool, error) {
	cur, err := db.rq.QueueCursor(ctx, id)
	if errNoRows(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("queue cursor: %w", err)
	}
	return cur.QueuedThroughRow < cur.LastRow, nil
}

// addUnqueued marks every timezone of tzs as due at the epoch (at once) in
// queued: contacts not queued yet are due from the start, and their
// timezones are not known without reading them.
func addUnqueued(queued map[string]time.Time, tzs []string) {
	for _, tz := range tzs {
		queued[tz] = time.UnixMilli(0).UTC()
	}
}
