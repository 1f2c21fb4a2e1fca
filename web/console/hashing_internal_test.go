package console

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// At most maxConcurrentHashes hashes run at once; the others wait, and a
// waiter whose browser goes away gives up.
func TestHashingIsBounded(t *testing.T) {
	c := New(Config{})
	var running, most atomic.Int32
	var wg sync.WaitGroup
	for range 4 * maxConcurrentHashes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := c.hashing(context.Background(), func() {
				n := running.Add(1)
				for {
					m := most.Load()
					if n <= m || most.CompareAndSwap(m, n) {
						break
					}
				}
				time.Sleep(2 * time.Millisecond)
				running.Add(-1)
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if got := most.Load(); got > maxConcurrentHashes || got < 1 {
		t.Fatalf("at most %d hashes ran at once, want 1..%d", got, maxConcurrentHashes)
	}

	for range maxConcurrentHashes {
		c.hashSlots <- struct{}{} // every slot taken
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ran := false
	if err := c.hashing(ctx, func() { ran = true }); err == nil || ran {
		t.Fatalf("with every slot taken and the request gone: err %v, ran %v; want an error and nothing run", err, ran)
	}
}
