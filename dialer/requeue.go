package dialer

import (
	"context"
	"log/slog"
	"maps"
	"sync"
	"time"

	"github.com/outdial/outdial/store"
)

// Putting a claimed attempt back: an attempt that was claimed (dialing, its
// slot taken) and not sent goes back to the queue through the store, and
// frees its slot only on the store's word (Engine.leave). When the store
// refuses the requeue (an error: a full disk, a busy database), the attempt
// stays dialing and keeps its slot, so the campaign never places more than
// max_concurrency; the runner tries the requeue again every requeueRetry
// until the store takes it, and reconciliation at the attempt's deadline
// leaves it alone: it was never sent, so it is not ended unknown. (A
// process that stops meanwhile forgets it: the next start ends it unknown,
// as any attempt left dialing.)

// requeueRetry is how often a refused requeue is tried again.
const requeueRetry = time.Second

// refusedRequeues are a campaign's attempts whose requeue the store
// refused.
type refusedRequeues struct {
	mu      sync.Mutex
	m       map[int64]refusedRequeue // by attempt id
	retryAt time.Time                // the next try (zero when m is empty)
}

// refusedRequeue is what the requeue of one attempt stores.
type refusedRequeue struct {
	due      time.Time
	evidence []byte
}

// add notes a refused requeue of attempt id, to be tried again at retryAt
// at the latest.
func (q *refusedRequeues) add(id int64, rr refusedRequeue, retryAt time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.m == nil {
		q.m = map[int64]refusedRequeue{}
	}
	q.m[id] = rr
	if q.retryAt.IsZero() || retryAt.Before(q.retryAt) {
		q.retryAt = retryAt
	}
}

// remove forgets attempt id: requeued, or no longer dialing.
func (q *refusedRequeues) remove(id int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, ok := q.m[id]; !ok {
		return
	}
	delete(q.m, id)
	if len(q.m) == 0 {
		q.retryAt = time.Time{}
	}
}

// has reports whether attempt id waits for its requeue.
func (q *refusedRequeues) has(id int64) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	_, ok := q.m[id]
	return ok
}

// next returns when the refused requeues are tried again (zero: none).
func (q *refusedRequeues) next() time.Time {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.retryAt
}

// due returns a copy of the requeues to try at now (none before their
// time) and moves the next try requeueRetry later.
func (q *refusedRequeues) due(now time.Time) map[int64]refusedRequeue {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.m) == 0 || now.Before(q.retryAt) {
		return nil
	}
	q.retryAt = now.Add(requeueRetry)
	return maps.Clone(q.m)
}

// requeue returns a claimed attempt that was not sent to the queue, due at
// due (see putBack).
func (e *Engine) requeue(ctx context.Context, r *runner, a *store.Attempt, due time.Time) {
	e.requeueWith(ctx, r, a, due, nil)
}

// requeueWith is requeue storing the evidence of a guard rail's hold.
func (e *Engine) requeueWith(ctx context.Context, r *runner, a *store.Attempt, due time.Time, evidence []byte) {
	e.live.remove(a.ID)
	e.putBack(ctx, r.cs, a.CampaignID, a.ID, due, evidence)
	// A slot freed belongs to the campaign, whose runner may no longer be
	// r (a pause and a resume while the request was under way): the
	// current one is woken, else it could sleep on a full count forever.
	// A refused requeue wakes r too, which then tries it again in time.
	e.mu.Lock()
	cur := e.runners[a.CampaignID]
	e.mu.Unlock()
	if cur != nil && cur != r {
		cur.poke(false)
	}
	r.poke(false)
}

// putBack asks the store to put attempt attemptID of campaign campaignID
// (claimed, not sent) back in the queue due at due, and frees its slot when
// the store did. When the store refuses, the attempt keeps its slot and is
// noted in cs for retryRefused; when the attempt was no longer dialing (a
// final status ended it, which freed the slot), nothing is freed.
func (e *Engine) putBack(ctx context.Context, cs *campaignState, campaignID, attemptID int64, due time.Time, evidence []byte) {
	s, err := e.leave(campaignID, func() (bool, error) {
		// Not fenced (a zero lease): the attempt was never sent, so
		// putting it back is the truth whoever holds the lease; if the new
		// holder settled it already, it is no longer dialing and this
		// changes nothing, and if not, the new holder dials it once.
		return e.db.RequeueAttempt(ctx, store.Lease{}, attemptID, due, evidence)
	})
	if err != nil {
		e.log.Error("dialer: requeue", slog.Int64("attempt_id", attemptID), slog.String("error", err.Error()))
		cs.refused.add(attemptID, refusedRequeue{due: due, evidence: evidence}, e.now().Add(requeueRetry))
		return
	}
	cs.refused.remove(attemptID)
	s.free()
}

// retryRefused tries again, at most every requeueRetry, the requeues of
// the campaign the store refused.
func (r *runner) retryRefused(ctx context.Context, now time.Time) {
	for id, rr := range r.cs.refused.due(now) {
		r.e.putBack(ctx, r.cs, r.id, id, rr.due, rr.evidence)
	}
}
