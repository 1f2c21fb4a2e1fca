package store

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/outdial/outdial/store/sqlcdb"
)

// Group commit. The dialer's small writes (claims, placements, every status
// webhook) come from many goroutines at once. Each in its own transaction,
// they queue for the single writer connection, and every one pays a BEGIN,
// a COMMIT, the WAL frames of pages the previous one just wrote, and a
// hand-over of the connection to the next goroutine, which may not be
// scheduled for a while on a busy machine. Instead one goroutine takes what
// is queued (up to maxBatch operations), runs it in one transaction and
// commits once; every caller still returns only after its write is
// committed.

// A batch takes at most maxBatch operations; one of fewer than lingerBelow
// waits up to linger for more.
const (
	maxBatch    = 256
	lingerBelow = 16
	linger      = 300 * time.Microsecond
)

type batchOp struct {
	ctx  context.Context
	fn   func(q sqlcdb.Querier) error
	done chan error
	// durable: the commit must be on disk before the caller goes on
	// (a claim, before its provider request): see runBatch.
	durable bool
	// queued is when the operation was queued (only with an observer).
	queued time.Time
}

type batcher struct {
	mu     sync.RWMutex // guards closed and sends on ops
	closed bool
	ops    chan batchOp
	exited chan struct{}
}

var errClosed = errors.New("database is closed")

func (db *DB) startBatcher() {
	db.b = &batcher{ops: make(chan batchOp, 1024), exited: make(chan struct{})}
	go func() {
		defer close(db.b.exited)
		for op := range db.b.ops {
			batch := []batchOp{op}
		drain:
			for len(batch) < maxBatch {
				select {
				case op, ok := <-db.b.ops:
					if !ok {
						break drain
					}
					batch = append(batch, op)
				default:
					break drain
				}
			}
			if len(batch) < lingerBelow {
				// More writes are usually on their way: a short wait makes
				// the batch, and so the commit's share, larger.
				t := time.NewTimer(linger)
			wait:
				for len(batch) < maxBatch {
					select {
					case op, ok := <-db.b.ops:
						if !ok {
							break wait
						}
						batch = append(batch, op)
					case <-t.C:
						break wait
					}
				}
				t.Stop()
			}
			db.runBatch(batch)
		}
	}()
}

// stopBatcher runs what is queued and stops the batcher; later inBatch
// calls fail. Safe to call more than once.
func (db *DB) stopBatcher() {
	db.b.mu.Lock()
	if !db.b.closed {
		db.b.closed = true
		close(db.b.ops)
	}
	db.b.mu.Unlock()
	<-db.b.exited
}

func (db *DB) runBatch(batch []batchOp) {
	if db.observe.Load() != nil && !batch[0].queued.IsZero() {
		defer db.observeBatch(batch[0].queued, time.Now(), len(batch))
	}
	live := batch[:0:0]
	durable := false
	for _, op := range batch {
		if err := op.ctx.Err(); err != nil {
			op.done <- err
			continue
		}
		live = append(live, op)
		durable = durable || op.durable
	}
	if !durable {
		db.commitBatch(live)
		return
	}
	// WAL with synchronous=NORMAL syncs the log only at checkpoints: a
	// committed claim could be lost to a power cut after its call was
	// requested, and the contact dialled again. A batch holding a claim
	// commits with synchronous=FULL (the WAL is synced by its commit: one
	// fsync per batch, not per claim); the writer is NORMAL again before
	// any caller goes on. Only this goroutine switches it.
	if err := db.syncMode("FULL"); err != nil {
		for _, op := range live {
			op.done <- err
		}
		return
	}
	results := make([]chan error, len(live))
	for i := range live {
		results[i] = live[i].done
		live[i].done = make(chan error, 1)
	}
	db.commitBatch(live)
	if err := db.syncMode("NORMAL"); err != nil {
		// FULL is only slower: the next durable batch tries again.
		db.p.log.Load().Error("store: synchronous NORMAL", slog.String("error", err.Error()))
	}
	for i, op := range live {
		results[i] <- <-op.done
	}
}

// commitBatch runs live in one transaction, or each alone when it fails,
// and sends each operation its result.
func (db *DB) commitBatch(live []batchOp) {
	if len(live) > 1 {
		err := db.inTx(context.Background(), func(q sqlcdb.Querier) error {
			for _, op := range live {
				if err := op.fn(q); err != nil {
					return err
				}
			}
			return nil
		})
		if err == nil {
			for _, op := range live {
				op.done <- nil
			}
			return
		}
	}
	// Alone, or the batch failed (rolled back): each operation in its own
	// transaction, so each gets its own result. One that another node's
	// transaction deadlocked with (PostgreSQL: a status's campaign counters
	// against a placement's attempt row) is run again: an operation may run
	// more than once (inBatch).
	for _, op := range live {
		op.done <- db.runAlone(op.ctx, op.fn)
	}
}

// maxDeadlockRuns bounds how often runAlone runs an operation that keeps
// being chosen as a deadlock's victim.
const maxDeadlockRuns = 5

// runAlone runs fn in its own transaction, again when the engine ended it
// as a deadlock's victim (PostgreSQL: another node's batch took the same
// rows, an attempt's and its campaign's, in the other order; the engine
// rolled this one back so that the other could go on, and running it again
// after that one committed succeeds). SQLite's one writer has no
// deadlocks.
func (db *DB) runAlone(ctx context.Context, fn func(q sqlcdb.Querier) error) error {
	for run := 1; ; run++ {
		err := db.inTx(ctx, fn)
		if err == nil || run == maxDeadlockRuns || !db.eng.isRetryable(err) || ctx.Err() != nil {
			return err
		}
	}
}

// setSynchronous sets the writer's synchronous mode: FULL (durable) or
// NORMAL.
func (db *DB) setSynchronous(mode string) error { return db.eng.setDurable(mode == "FULL") }

// inDurableBatch is inBatch for a write that must be on disk, not only
// committed, when it returns (a claim: the provider is asked to call next).
func (db *DB) inDurableBatch(ctx context.Context, fn func(q sqlcdb.Querier) error) error {
	return db.queue(batchOp{ctx: ctx, fn: fn, done: make(chan error, 1), durable: true})
}

// inBatch runs fn in a write transaction shared with other small
// operations and returns once it is committed. fn may run more than once
// (again alone after the shared transaction was rolled back, and again
// when that was a deadlock's victim: runAlone), so it must act only
// through q and set its results from scratch on every run.
func (db *DB) inBatch(ctx context.Context, fn func(q sqlcdb.Querier) error) error {
	return db.queue(batchOp{ctx: ctx, fn: fn, done: make(chan error, 1)})
}

func (db *DB) queue(op batchOp) error {
	if db.observe.Load() != nil {
		op.queued = time.Now()
	}
	ctx := op.ctx
	db.b.mu.RLock()
	if db.b.closed {
		db.b.mu.RUnlock()
		return errClosed
	}
	select {
	case db.b.ops <- op:
	case <-ctx.Done():
		db.b.mu.RUnlock()
		return ctx.Err()
	}
	db.b.mu.RUnlock()
	return <-op.done
}
