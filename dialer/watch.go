package dialer

import (
	"sync/atomic"
	"time"
)

// Change is something the engine changed in a campaign, reported to the
// watcher (Watch) as it happens: the live event streams (API.md 10) are fed
// by these, not by polling.
type Change struct {
	CampaignID int64
	// Ended is the call that ended, when the change is a final status.
	Ended *EndedCall
}

// EndedCall is an attempt that reached its final outcome.
type EndedCall struct {
	AttemptID  int64
	ContactRow int64
	Attempt    int64
	Outcome    string
	// StartedAt is when the call was claimed for dialling; nil when it
	// never was (or when another node's note came from an older version).
	StartedAt       *time.Time `json:",omitempty"`
	EndedAt         time.Time
	DurationSeconds int
	// Abandoned and AnswerToFirstAudioMs are the abandonment verdict on the
	// call (API.md 19), nil when no person answered.
	Abandoned            *bool  `json:",omitempty"`
	AnswerToFirstAudioMs *int64 `json:",omitempty"`
}

// Watcher receives the engine's changes. It is called on the engine's own
// goroutines (a status being applied, a dispatch, a runner), so it must
// return at once: note the change and wake a goroutine of its own.
type Watcher func(Change)

// watcher is the engine's Watcher (nil: none).
type watcher struct{ fn atomic.Pointer[Watcher] }

// Watch makes w receive every change from now on, replacing the watcher
// set before; nil stops reporting.
func (e *Engine) Watch(w Watcher) {
	if w == nil {
		e.watch.fn.Store(nil)
		return
	}
	e.watch.fn.Store(&w)
}

// changed reports c to the watcher, if any, and to the other nodes sharing
// the database (notes.go).
func (e *Engine) changed(c Change) {
	if w := e.watch.fn.Load(); w != nil {
		(*w)(c)
	}
	e.noteChange(c.CampaignID, c.Ended)
}

// touched reports that something of campaign id changed (a counter, a log
// entry, its next dial time).
func (e *Engine) touched(id int64) { e.changed(Change{CampaignID: id}) }

// InFlight returns the number of campaign id's calls this process holds a
// slot for (dialing or in flight), and false when it holds no state for the
// campaign (not dialled since start: its calls in flight are then in the
// database).
func (e *Engine) InFlight(id int64) (int, bool) {
	cs := e.countedCampaign(id)
	if cs == nil {
		return 0, false
	}
	return cs.inUse(), true
}
