package dialer

import (
	"sync"
	"sync/atomic"
	"time"
)

// Slot accounting: the one owner of a campaign's count of slots in use
// (API.md 4.5: at most max_concurrency attempts dialing or in flight). The
// count lives in memory and moves in exactly three ways:
//
//   - counted: the first time the engine sees a campaign (campaign), from
//     the database after reconciliation, ordered against status
//     applications by Engine.countMu (settling);
//   - taken: a claim moved attempts from queued to dialing (runner.step);
//   - released: the store moved one attempt out of dialing/in_flight and
//     said so (RequeueAttempt back to queued, or ApplyStatus's final
//     status). An exit path releases only on the store's word, so a slot is
//     never freed twice nor kept, whichever path ends the attempt.

// campaignState is what the engine keeps per campaign across the runners
// the campaign has over time.
type campaignState struct {
	// active counts the campaign's attempts dialing or in flight; a
	// dispatch of an earlier runner still settles it. Only take, release
	// and campaign change it.
	active atomic.Int64
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
}

// placed notes a call placed at t.
func (cs *campaignState) placed(t time.Time) { cs.lastPlaced.Store(t.UnixNano()) }

func (cs *campaignState) lastPlacedAt() time.Time { return time.Unix(0, cs.lastPlaced.Load()) }

// paced notes when the pacing bucket gives its next token.
func (cs *campaignState) paced(next time.Time) { cs.paceNext.Store(next.UnixNano()) }

func (cs *campaignState) paceUntil() time.Time { return time.Unix(0, cs.paceNext.Load()) }

// campaign returns the engine's state of campaign id, counting its attempts
// dialing or in flight from the database the first time (after
// reconciliation).
func (e *Engine) campaign(id int64) (*campaignState, error) {
	e.mu.Lock()
	cs := e.camps[id]
	e.mu.Unlock()
	if cs != nil {
		return cs, nil
	}
	e.countMu.Lock()
	defer e.countMu.Unlock()
	e.mu.Lock()
	cs = e.camps[id]
	e.mu.Unlock()
	if cs != nil {
		return cs, nil
	}
	n, err := e.db.CountActiveAttempts(e.ctx, id)
	if err != nil {
		return nil, err
	}
	cs = &campaignState{}
	cs.active.Store(int64(n))
	e.mu.Lock()
	e.camps[id] = cs
	e.mu.Unlock()
	return cs, nil
}

// take counts n attempts just claimed.
func (cs *campaignState) take(n int) { cs.active.Add(int64(n)) }

// release frees the slot of one attempt the store just moved out of
// dialing or in flight.
func (cs *campaignState) release() { cs.active.Add(-1) }

// inUse returns the slots in use.
func (cs *campaignState) inUse() int { return int(cs.active.Load()) }

// settling holds countMu for reading while a status is stored and its slot
// released, so that a campaign's first count sees the status either in the
// database or in the released slot, never both or neither. It returns the
// function that ends the hold.
func (e *Engine) settling() func() {
	e.countMu.RLock()
	return e.countMu.RUnlock
}
