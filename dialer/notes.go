package dialer

import (
	"context"
	"encoding/json"
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
	ended   []endedNote // calls that ended, each sent (streams show each)
	running bool
}

// endedNote is a call that ended, as another node's streams need it.
type endedNote struct {
	CampaignID int64
	EndedCall
}

// noteLinger is how long changes are gathered before they are sent: a
// stream on another node follows well within API.md 16's second.
const noteLinger = 20 * time.Millisecond

// noteChange tells the other nodes that campaign id changed; ended, when
// not nil, is the call whose end changed it.
func (e *Engine) noteChange(id int64, ended ...*EndedCall) {
	if !e.db.Shared() {
		return
	}
	e.notes.mu.Lock()
	defer e.notes.mu.Unlock()
	if len(ended) > 0 && ended[0] != nil {
		e.notes.ended = append(e.notes.ended, endedNote{CampaignID: id, EndedCall: *ended[0]})
	} else {
		if e.notes.pending == nil {
			e.notes.pending = map[int64]bool{}
		}
		e.notes.pending[id] = true
	}
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
		ids, ended := e.notes.pending, e.notes.ended
		e.notes.pending, e.notes.ended = nil, nil
		if len(ids) == 0 && len(ended) == 0 {
			e.notes.running = false
			e.notes.mu.Unlock()
			return
		}
		e.notes.mu.Unlock()
		for _, n := range ended {
			b, err := json.Marshal(n.EndedCall)
			if err == nil {
				e.notify(ctx, noteEnded, n.CampaignID, string(b))
			}
		}
		for id := range ids {
			e.notify(ctx, noteChanged, id)
		}
	}
}

// changedElsewhere reports to the watcher a change another node made to
// campaign id, and the call that ended if ended (a JSON EndedCall) is not
// empty: the event streams of this node follow it.
func (e *Engine) changedElsewhere(id int64, ended string) {
	c := Change{CampaignID: id}
	if ended != "" {
		var ec EndedCall
		if err := json.Unmarshal([]byte(ended), &ec); err == nil {
			c.Ended = &ec
		}
	}
	if w := e.watch.fn.Load(); w != nil {
		(*w)(c)
	}
}
