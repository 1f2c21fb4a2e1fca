package simkit

import (
	"sort"
	"sync"
	"time"
)

// Queue delivers one simulated call's webhooks one at a time, in due order
// (items due at the same time in the order pushed), by at most one pump
// goroutine per call, waiting with time.AfterFunc rather than a sleeping
// goroutine. Thousands of calls in flight cost little.
//
// The queue is guarded by the owner's lock (the call's mutex): Push, Stop,
// Len and Busy are called with it held; Take and Idle run with it held;
// Deliver runs without it.
type Queue[T any] struct {
	// Lock is the owner's lock guarding the queue.
	Lock sync.Locker
	// Pumps counts running pumps; the simulator's Close waits on it.
	Pumps *sync.WaitGroup
	// Closed reports whether the simulator is closing: nothing more is
	// delivered.
	Closed func() bool
	// Take, when set, sees each item as it leaves the queue (Lock held).
	Take func(T)
	// Idle, when set, runs when a pump stops with nothing left to deliver
	// or because the queue was stopped (Lock held).
	Idle func()
	// Deliver sends one item (Lock not held).
	Deliver func(T)

	items   []queued[T]
	lastDue time.Time
	pumping bool
	timer   *time.Timer
	stopped bool
}

type queued[T any] struct {
	item T
	due  time.Time
}

// Push queues item, due at due, after every item due no later, and makes
// sure a pump runs; a pump waiting for a later head is woken.
func (q *Queue[T]) Push(item T, due time.Time) {
	if due.After(q.lastDue) {
		q.lastDue = due
	}
	i := sort.Search(len(q.items), func(i int) bool { return q.items[i].due.After(due) })
	q.items = append(q.items, queued[T]{})
	copy(q.items[i+1:], q.items[i:])
	q.items[i] = queued[T]{item: item, due: due}
	if q.stopped || q.Closed() {
		return
	}
	switch {
	case !q.pumping:
		q.pumping = true
		q.Pumps.Add(1)
		go q.pump()
	case i == 0 && q.timer != nil && q.timer.Stop():
		q.timer = nil
		go q.pump()
	}
}

// LastDue is the latest due time ever pushed: a simulator sending held-back
// (out-of-order) items after a call's last one queues them no earlier.
func (q *Queue[T]) LastDue() time.Time { return q.lastDue }

// Len is the number of items not delivered yet.
func (q *Queue[T]) Len() int { return len(q.items) }

// Busy reports whether items are queued or being delivered.
func (q *Queue[T]) Busy() bool { return q.pumping || len(q.items) > 0 }

// Stop ends the deliveries (for the simulator's Close): a waiting pump is
// cancelled, a delivering one stops after its current item.
func (q *Queue[T]) Stop() {
	q.stopped = true
	if q.timer != nil && q.timer.Stop() {
		q.timer = nil
		q.pumping = false
		q.Pumps.Done()
	}
}

func (q *Queue[T]) pump() {
	for {
		q.Lock.Lock()
		q.timer = nil
		if len(q.items) == 0 || q.stopped || q.Closed() {
			q.pumping = false
			if q.Idle != nil {
				q.Idle()
			}
			q.Lock.Unlock()
			q.Pumps.Done()
			return
		}
		head := q.items[0]
		if wait := time.Until(head.due); wait > 0 {
			q.timer = time.AfterFunc(wait, q.pump)
			q.Lock.Unlock()
			return
		}
		q.items[0] = queued[T]{}
		q.items = q.items[1:]
		if q.Take != nil {
			q.Take(head.item)
		}
		q.Lock.Unlock()
		q.Deliver(head.item)
	}
}
