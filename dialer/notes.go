package dialer

import (
	"context"
	"sync"
	"time"
)

// notes sends the other nodes the campaigns this one changed (lease.go's
// noteChanged), coalesced: a campaign changed many times within
// noteLinger is sent once, from one goroutine that runs only while there is
// something to send. With a database no other node shares (SQLite), nothing
// is sent at all.
type notes struct {
	mu      sync.Mutex
	pending map[int64]bool
	running bool
}

// noteLinger is how long changes are gathered before they are sent: a
// stream on another node follows well within API.md 16's second.
const noteLinger = 20 * time.Millisecond

// changed (watch.go) reports c to the watcher and the other nodes.
func (e *Engine) noteChange(id int64) {
	if !e.db.Shared() {
		return
	}
	e.notes.mu.Lock()
	defer e.notes.mu.Unlock()
	if e.notes.pending == nil {
		e.notes.pending = map[int64]bool{}
	}
	e.notes.pending[id] = true
	if e.notes.running {
		return
	}
	e.notes.running = true
	ctx := e.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	go e.sendNotes(context.WithoutCancel(ctx))
}

// sendNotes sends what is pending until nothing is.
func (e *Engine) sendNotes(ctx context.Context) {
	for {
		time.Sleep(noteLinger)
		e.notes.mu.Lock()
		ids := e.notes.pending
		e.notes.pending = nil
		if len(ids) == 0 {
			e.notes.running = false
			e.notes.mu.Unlock()
			return
		}
		e.notes.mu.Unlock()
		for id := range ids {
			e.notify(ctx, noteChanged, id)
		}
	}
}

// changedElsewhere reports to the watcher a change another node made to
// campaign id (the event streams of this node follow it).
func (e *Engine) changedElsewhere(id int64) {
	if w := e.watch.fn.Load(); w != nil {
		(*w)(Change{CampaignID: id})
	}
}
