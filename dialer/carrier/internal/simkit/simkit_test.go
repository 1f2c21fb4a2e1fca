package simkit

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

type stats struct{ InFlight, Peak, N int }

// Wait returns once an update makes the condition hold, and Settle runs
// after every update.
func TestCountersWait(t *testing.T) {
	c := &Counters[stats]{Settle: func(s *stats) { s.Peak = max(s.Peak, s.InFlight) }}
	done := make(chan error, 1)
	go func() {
		done <- c.Wait(context.Background(), func(s stats) bool { return s.N == 3 })
	}()
	for i := 0; i < 3; i++ {
		c.Update(func(s *stats) { s.N++; s.InFlight = i + 1 })
	}
	c.Update(func(s *stats) { s.InFlight = 0 })
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := c.Get(); got.Peak != 3 || got.InFlight != 0 {
		t.Fatalf("counters %+v, want peak 3 and nothing in flight", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	if err := c.Wait(ctx, func(s stats) bool { return s.N == 99 }); err != context.DeadlineExceeded {
		t.Fatalf("Wait for a condition that never holds = %v, want the context's error", err)
	}
}

// newQueue is a queue whose deliveries are sent on a channel.
func newQueue(mu *sync.Mutex, pumps *sync.WaitGroup, closed *atomic.Bool) (*Queue[int], chan int, *atomic.Int32) {
	out := make(chan int, 16)
	idle := &atomic.Int32{}
	q := &Queue[int]{Lock: mu, Pumps: pumps, Closed: closed.Load,
		Idle: func() { idle.Add(1) }, Deliver: func(v int) { out <- v }}
	return q, out, idle
}

// Items are delivered in due order, equal due times in push order, one at
// a time; the pump goes idle when the queue is empty.
func TestQueueOrder(t *testing.T) {
	var mu sync.Mutex
	var pumps sync.WaitGroup
	var closed atomic.Bool
	q, out, idle := newQueue(&mu, &pumps, &closed)
	now := time.Now()
	mu.Lock()
	q.Push(3, now.Add(30*time.Millisecond))
	q.Push(1, now.Add(10*time.Millisecond))
	q.Push(2, now.Add(10*time.Millisecond))
	mu.Unlock()
	for want := 1; want <= 3; want++ {
		if got := <-out; got != want {
			t.Fatalf("delivered %d, want %d", got, want)
		}
	}
	pumps.Wait()
	mu.Lock()
	busy := q.Busy()
	mu.Unlock()
	if busy || idle.Load() != 1 {
		t.Fatalf("after delivering everything: busy %v, idle %d times, want not busy, idle once", busy, idle.Load())
	}
}

// Stop cancels a pump waiting for a later item: nothing more is delivered
// and the pump count returns to zero.
func TestQueueStop(t *testing.T) {
	var mu sync.Mutex
	var pumps sync.WaitGroup
	var closed atomic.Bool
	q, out, _ := newQueue(&mu, &pumps, &closed)
	mu.Lock()
	q.Push(1, time.Now().Add(time.Hour))
	mu.Unlock()
	time.Sleep(2 * time.Millisecond) // let the pump start and wait
	mu.Lock()
	q.Stop()
	q.Push(2, time.Now())
	mu.Unlock()
	pumps.Wait()
	select {
	case v := <-out:
		t.Fatalf("delivered %d after Stop", v)
	default:
	}
}

type fault struct{ status int }

// The gate applies the 401 mode, then the 429 budget (creates only), then
// the fault function.
func TestGate(t *testing.T) {
	var g Gate[string, fault]
	unauth := func() *fault { return &fault{401} }
	limited := func() *fault { return &fault{429} }
	check := func(req string, authorized, create bool) int {
		if f := g.Check(req, authorized, create, unauth, limited); f != nil {
			return f.status
		}
		return 0
	}
	if got := check("create", false, true); got != 401 {
		t.Fatalf("bad credentials: %d, want 401", got)
	}
	g.LimitNext(1)
	if got := check("get", true, false); got != 0 {
		t.Fatalf("a get with a 429 budget: %d, want served", got)
	}
	if got := check("create", true, true); got != 429 {
		t.Fatalf("first create: %d, want 429", got)
	}
	if got := check("create", true, true); got != 0 {
		t.Fatalf("second create: %d, want served", got)
	}
	g.SetFault(func(req string) *fault {
		if req == "hangup" {
			return &fault{500}
		}
		return nil
	})
	if got := check("hangup", true, false); got != 500 {
		t.Fatalf("faulted hangup: %d, want 500", got)
	}
	g.SetUnauthorized(true)
	if got := check("hangup", true, false); got != 401 {
		t.Fatalf("401 mode: %d, want 401", got)
	}
}
