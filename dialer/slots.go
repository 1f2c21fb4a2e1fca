package dialer

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Slot accounting (API.md 4.5: at most max_concurrency attempts of a
// campaign dialing or in flight). A campaign's count of slots in use lives
// in memory (campaignState.active) and moves in exactly three ways:
//
//   - counted, once, from the database: the first time the engine dials the
//     campaign (Engine.campaign, after reconciliation at start);
//   - taken by a claim, which moved attempts from queued to dialing
//     (runner.step);
//   - freed by slot.free, whose only source is Engine.leave: every store
//     write that may move an attempt out of dialing or in flight (a requeue,
//     a final status) runs through leave, which hands out the attempt's slot
//     only when the store reports that this very write moved it (the row
//     changed). A write that fails, or finds the attempt already out (a
//     duplicate final status, a requeue after a final status), frees
//     nothing: a slot is never freed twice, nor kept.
//
// A requeue the store refuses (an error) leaves the attempt dialing: it
// keeps its slot, and since it was not sent it is put back later
// (requeue.go) instead of ending unknown at its deadline.

// campaignState is what the engine keeps per campaign across the runners
// the campaign has over time. An uncounted state exists only while a status
// of the campaign is being applied (see Engine.enter).
type campaignState struct {
	// settle orders the campaign's first count (held for writing across the
	// count's read) against the store writes that move its attempts out of
	// dialing or in flight (held for reading across the one write, see
	// Engine.leave): a write is either in the database before the count or
	// frees a slot counted by it, never both or neither.
	settle sync.RWMutex
	// counted is set, under settle held for writing, once active holds the
	// count; it is never unset.
	counted atomic.Bool
	// users is the number of callers between Engine.enter and Engine.exit;
	// guarded by Engine.mu.
	users int
	// active counts the campaign's attempts dialing or in flight; a
	// dispatch of an earlier runner still settles it. Only the first count,
	// take and slot.free change it.
	active atomic.Int64
	// unfreed counts the slots leave handed out that are not freed yet
	// (their attempts already out of dialing or in flight in the
	// database), for recount.
	unfreed atomic.Int64
	// gate orders provider requests against Halt: a dispatch holds it for
	// reading from its last halted check until the provider answered, so
	// once Halt has taken it for writing no request of the campaign is
	// under way and none can start.
	gate sync.RWMutex
	// For the diagnosis: when a call was last placed and when the pacing
	// bucket gives its next token (unix nanoseconds).
	lastPlaced atomic.Int64
	paceNext   atomic.Int64
	placing    atomic.Int64 // provider requests under way
	// orgHeld: the last claim was held back by the organization's limit
	// (orglimits.go).
	orgHeld atomic.Bool
	// refused holds the requeues the store refused (requeue.go).
	refused refusedRequeues
}

// placed notes a call placed at t.
func (cs *campaignState) placed(t time.Time) { cs.lastPlaced.Store(t.UnixNano()) }

func (cs *campaignState) lastPlacedAt() time.Time { return time.Unix(0, cs.lastPlaced.Load()) }

// paced notes when the pacing bucket gives its next token.
func (cs *campaignState) paced(next time.Time) { cs.paceNext.Store(next.UnixNano()) }

func (cs *campaignState) paceUntil() time.Time { return time.Unix(0, cs.paceNext.Load()) }

// take counts n attempts just claimed.
func (cs *campaignState) take(n int) { cs.active.Add(int64(n)) }

// inUse returns the slots in use.
func (cs *campaignState) inUse() int { return int(cs.active.Load()) }

// enter returns campaign id's state, creating it uncounted when the engine
// has none, and keeps it in the engine until the matching exit.
func (e *Engine) enter(id int64) *campaignState {
	e.mu.Lock()
	defer e.mu.Unlock()
	cs := e.camps[id]
	if cs == nil {
		cs = &campaignState{}
		e.camps[id] = cs
	}
	cs.users++
	return cs
}

// exit ends an enter. An uncounted state nobody is in is dropped: statuses
// of a campaign this process does not dial (late webhooks of a finished
// campaign) leave nothing behind.
func (e *Engine) exit(id int64, cs *campaignState) {
	e.mu.Lock()
	defer e.mu.Unlock()
	cs.users--
	if cs.users == 0 && !cs.counted.Load() && e.camps[id] == cs {
		delete(e.camps, id)
	}
}

// countedCampaign returns campaign id's state when its slots are counted, else nil
// (a campaign this process has not dialled: its calls in flight are in the
// database).
func (e *Engine) countedCampaign(id int64) *campaignState {
	e.mu.Lock()
	cs := e.camps[id]
	e.mu.Unlock()
	if cs == nil || !cs.counted.Load() {
		return nil
	}
	return cs
}

// campaign returns the engine's state of campaign id, counting its attempts
// dialing or in flight from the database the first time (after
// reconciliation). Only the campaign's own status applications wait for
// the count.
func (e *Engine) campaign(id int64) (*campaignState, error) {
	cs := e.enter(id)
	defer e.exit(id, cs)
	if cs.counted.Load() {
		return cs, nil
	}
	cs.settle.Lock()
	defer cs.settle.Unlock()
	if cs.counted.Load() {
		return cs, nil
	}
	n, err := e.db.CountActiveAttempts(e.ctx, id)
	if err != nil {
		return nil, err
	}
	cs.active.Store(int64(n))
	cs.counted.Store(true)
	return cs, nil
}

// slot is the slot of one attempt the store moved out of dialing or in
// flight; the zero slot frees nothing. Only Engine.leave makes one.
type slot struct {
	e          *Engine
	cs         *campaignState
	campaignID int64
}

// free frees the slot: the one place a campaign's count goes down.
func (s slot) free() {
	if s.cs == nil {
		return
	}
	s.cs.unfreed.Add(-1)
	if n := s.cs.active.Add(-1); n < 0 && s.e.lease(s.campaignID).Node != "" {
		// A defect, not a state to hide: the count would let the
		// campaign exceed max_concurrency. (A node that does not hold
		// the campaign's lease frees the slots of statuses it applies
		// from a count nobody dials by: recounted when it takes it.)
		s.e.log.Error("dialer: slot count below zero", slog.Int64("campaign_id", s.campaignID), slog.Int64("in_use", n))
	}
	s.e.slotFreed()
}

// leave runs write, a store write that may move one attempt of campaign id
// out of dialing or in flight and reports whether this very write moved it
// (moved: the store changed the row, e.g. RequeueAttempt's one row, or
// ApplyStatus's final status that was not ignored), and returns the slot
// to free. The slot is the store's word only: nothing is freed when write
// fails or moved nothing, whatever the caller believes about the attempt.
//
// The write runs under the campaign's settle lock held for reading, which
// orders it against the campaign's first count; only a campaign already
// counted has a slot to free (the count of a later one does not see the
// attempt). The slot is returned, not freed, so that what must happen
// before another call can take it (the circuit breaker's decision) comes
// first; the caller frees it with slot.free.
//
// With several nodes sharing a database this is what a right count across
// them needs: two nodes may both try to end the same attempt (a webhook on
// one, the deadline on another), and only the one whose write changed the
// row is told so; the count goes down once per transition out of dialing or
// in flight, never for a write that lost the race. (Bringing that word to
// the node holding the campaign's slots, when another node wrote it, is the
// multi-node step's part.) No lock may be held when calling leave.
func (e *Engine) leave(id int64, write func() (moved bool, err error)) (slot, error) {
	cs := e.enter(id)
	defer e.exit(id, cs)
	cs.settle.RLock()
	moved, err := write()
	counted := cs.counted.Load()
	if err != nil || !moved || !counted {
		cs.settle.RUnlock()
		return slot{}, err
	}
	cs.unfreed.Add(1)
	cs.settle.RUnlock()
	return slot{e: e, cs: cs, campaignID: id}, nil
}

// recount counts campaign id's slots again from the database, where the
// statuses other nodes applied freed slots this node's count still holds
// (lease.go). Only the campaign's run loop calls it, so no claim is between
// its commit and its take; writes through leave are ordered by settle, and
// the slots they handed out but the caller has not freed yet are added
// back (freed a moment later, they are counted once). A free racing the
// count can leave it one too high until the next recount: never too low.
func (e *Engine) recount(ctx context.Context, id int64, cs *campaignState) error {
	cs.settle.Lock()
	defer cs.settle.Unlock()
	n, err := e.db.CountActiveAttempts(ctx, id)
	if err != nil {
		e.log.Error("dialer: count active attempts", slog.Int64("campaign_id", id), slog.String("error", err.Error()))
		return err
	}
	cs.active.Store(int64(n) + cs.unfreed.Load())
	return nil
}
