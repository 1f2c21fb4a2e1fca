package dialer

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/outdial/outdial/dialer/carrier"
	"github.com/outdial/outdial/store"
)

// Final statuses that could not be stored (API.md 4.5, issue 20 item 5).
// When the database refuses a write (a full disk, below the reserve's
// protection) the provider's final status of a call, verified and read,
// cannot be stored: its webhook is answered 500, and its attempt would hold
// its campaign's slot until its deadline (RingTimeout + MaxCallSeconds) or a
// restart. Twilio does not send a status callback again; Asterisk does not
// send an event again. So the engine holds such a status in memory (at most
// maxHeldStatuses of them) and applies it, as received and with the time it
// arrived, as soon as writes work again: at once when another write of the
// engine succeeds (a status applied, attempts claimed), else on a retry
// every heldRetryFirst doubling up to heldRetryMax. Whatever comes first, a
// provider's own retry of the webhook, this, or the deadline's query, is
// applied once (ApplyStatus ignores a status for a final attempt).
//
// A restart loses what is held; the start's reconciliation asks the
// provider about every attempt in flight (reconcile.go) and applies a final
// answer, or holds it when writes still fail.

const (
	maxHeldStatuses = 10_000
	heldRetryFirst  = time.Second
	heldRetryMax    = 5 * time.Second
)

// heldStatus is a final status of a provider that could not be stored.
type heldStatus struct {
	campaignID int64 // the attempt's campaign, whose slot the stored status frees
	st         carrier.Status
	at         time.Time // when it arrived: the time it is stored with
}

// heldStatuses are the statuses the engine holds, by attempt id.
type heldStatuses struct {
	n       atomic.Int64 // len(m), read after every successful write
	mu      sync.Mutex
	m       map[int64]heldStatus
	timer   *time.Timer   // the next retry; nil when none is scheduled
	backoff time.Duration // the wait before the next retry
	running bool          // a retry is under way
}

// holdStatus keeps attempt id's (of campaign campaignID) final status st,
// which arrived at at and could not be stored (err), until it can be. A
// status already held for the attempt is kept (the first final status is
// the one applied).
func (e *Engine) holdStatus(campaignID, id int64, st carrier.Status, at time.Time, err error) {
	h := &e.unstored
	h.mu.Lock()
	if _, ok := h.m[id]; ok {
		h.mu.Unlock()
		return
	}
	if len(h.m) >= maxHeldStatuses {
		h.mu.Unlock()
		e.log.Warn("dialer: a final status could not be stored, and too many are held already; the attempt is reconciled at its deadline",
			slog.Int64("attempt_id", id), slog.String("error", err.Error()))
		return
	}
	if h.m == nil {
		h.m = map[int64]heldStatus{}
	}
	h.m[id] = heldStatus{campaignID: campaignID, st: st, at: at}
	h.n.Store(int64(len(h.m)))
	schedule := !h.running && h.timer == nil
	if schedule && h.backoff == 0 {
		h.backoff = heldRetryFirst
	}
	h.mu.Unlock()
	e.log.Warn("dialer: a final status could not be stored; it is held and stored as soon as writes work again",
		slog.Int64("attempt_id", id), slog.String("outcome", st.Outcome), slog.String("error", err.Error()))
	if schedule {
		e.scheduleHeldRetry()
	}
}

// HeldStatuses returns how many final statuses the engine holds because
// they could not be stored yet.
func (e *Engine) HeldStatuses() int { return int(e.unstored.n.Load()) }

// writesWork tells the engine that a write of its own succeeded: held
// statuses, if any, are stored now rather than at their next retry. It is
// called after every applied status and claim, so without held statuses it
// is one atomic load.
func (e *Engine) writesWork() {
	if e.unstored.n.Load() == 0 {
		return
	}
	h := &e.unstored
	h.mu.Lock()
	if h.running {
		h.mu.Unlock()
		return
	}
	if h.timer != nil {
		h.timer.Stop()
		h.timer = nil
	}
	h.backoff = heldRetryFirst
	h.running = true
	h.mu.Unlock()
	if !e.goHeldRetry() {
		h.mu.Lock()
		h.running = false
		h.mu.Unlock()
	}
}

// scheduleHeldRetry arms the retry timer with the current back-off.
func (e *Engine) scheduleHeldRetry() {
	h := &e.unstored
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.running || h.timer != nil || len(h.m) == 0 {
		return
	}
	if h.backoff == 0 {
		h.backoff = heldRetryFirst
	}
	h.timer = time.AfterFunc(h.backoff, func() {
		h.mu.Lock()
		h.timer = nil
		if h.running {
			h.mu.Unlock()
			return
		}
		h.running = true
		h.mu.Unlock()
		if !e.goHeldRetry() {
			h.mu.Lock()
			h.running = false
			h.mu.Unlock()
		}
	})
}

// goHeldRetry runs retryHeld on a goroutine the engine's Stop waits for; it
// reports false when the engine is not running.
func (e *Engine) goHeldRetry() bool {
	e.mu.Lock()
	ctx := e.ctx
	if e.stopped || ctx == nil {
		e.mu.Unlock()
		return false
	}
	e.wg.Add(1)
	e.mu.Unlock()
	go func() {
		defer e.wg.Done()
		e.retryHeld(ctx)
	}()
	return true
}

// retryHeld applies every held status once. Those that are stored (or
// that a final status stored meanwhile made moot) are let go; when some are
// left, the next retry is scheduled after a doubled back-off.
func (e *Engine) retryHeld(ctx context.Context) {
	h := &e.unstored
	h.mu.Lock()
	batch := make(map[int64]heldStatus, len(h.m))
	for id, hs := range h.m {
		batch[id] = hs
	}
	h.mu.Unlock()
	stored := 0
	for id, hs := range batch {
		if ctx.Err() != nil {
			break
		}
		res, err := e.applyAt(ctx, hs.at, hs.campaignID, id, hs.st, "", fromProvider, nil)
		if err != nil && store.ErrorCode(err) == "" {
			continue // still not stored: kept
		}
		h.mu.Lock()
		delete(h.m, id)
		h.n.Store(int64(len(h.m)))
		h.mu.Unlock()
		if err == nil && !res.Ignored {
			stored++
			e.log.Info("dialer: stored a final status held while writes failed", slog.Int64("attempt_id", id),
				slog.String("outcome", res.Outcome), slog.Duration("held_for", e.now().Sub(hs.at)))
		}
	}
	h.mu.Lock()
	h.running = false
	left := len(h.m) > 0
	if !left {
		h.backoff = 0
	} else if stored == 0 {
		h.backoff = min(2*h.backoff, heldRetryMax)
	}
	h.mu.Unlock()
	if left {
		e.scheduleHeldRetry()
	}
}

// stopHeldRetry stops the retry timer (Stop).
func (e *Engine) stopHeldRetry() {
	h := &e.unstored
	h.mu.Lock()
	if h.timer != nil {
		h.timer.Stop()
		h.timer = nil
	}
	h.mu.Unlock()
}
