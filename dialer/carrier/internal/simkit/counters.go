// Package simkit is what every provider simulator (twiliosim, plivosim,
// telnyxsim, vonagesim, cloudonixsim, arisim) shares: counters tests can
// wait on, the per-call queue that delivers webhooks one at a time in due
// order, and the fault gate in front of a simulated API. What differs
// between providers — wire formats, signatures, scripts — stays in each
// simulator.
package simkit

import (
	"context"
	"sync"
)

// Counters holds a simulator's counters S and lets tests block until a
// condition on them holds, without polling. The zero value is ready; Settle,
// when set before first use, runs after every update under the lock (a
// simulator keeps its peak of calls in flight there). Safe for concurrent
// use.
type Counters[S any] struct {
	Settle func(*S)

	mu      sync.Mutex
	s       S
	changed chan struct{} // closed on the next change; nil when nobody waits
}

// Update changes the counters and wakes the waiters.
func (c *Counters[S]) Update(f func(*S)) {
	c.mu.Lock()
	f(&c.s)
	if c.Settle != nil {
		c.Settle(&c.s)
	}
	if c.changed != nil {
		close(c.changed)
		c.changed = nil
	}
	c.mu.Unlock()
}

// Get returns a snapshot of the counters.
func (c *Counters[S]) Get() S {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.s
}

// Wait blocks until cond holds for the counters (checked at once and after
// every change) or ctx ends, returning ctx's error then. cond runs with the
// counters' lock held: it must not call Update or Get.
func (c *Counters[S]) Wait(ctx context.Context, cond func(S) bool) error {
	for {
		c.mu.Lock()
		if cond(c.s) {
			c.mu.Unlock()
			return nil
		}
		if c.changed == nil {
			c.changed = make(chan struct{})
		}
		ch := c.changed
		c.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
