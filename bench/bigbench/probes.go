package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/outdial/outdial/bench/internal/realbin"
)

// creates records the times the simulator accepted the victim campaigns'
// calls (its Script function is called once per created call).
type creates struct {
	mu    sync.Mutex
	times []time.Time
}

func (c *creates) add(t time.Time) {
	c.mu.Lock()
	c.times = append(c.times, t)
	c.mu.Unlock()
}

// sorted returns the recorded times in order (concurrent creates may be
// recorded slightly out of order).
func (c *creates) sorted() []time.Time {
	c.mu.Lock()
	ts := slices.Clone(c.times)
	c.mu.Unlock()
	slices.SortFunc(ts, func(a, b time.Time) int { return a.Compare(b) })
	return ts
}

// countAfter is the number of creates after t.
func (c *creates) countAfter(t time.Time) int {
	n := 0
	for _, x := range c.sorted() {
		if x.After(t) {
			n++
		}
	}
	return n
}

// waitAfter waits until at least n creates happened after t, or timeout.
func (c *creates) waitAfter(t time.Time, n int, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if c.countAfter(t) >= n {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// gapStats is what the victim saw during a window.
type gapStats struct {
	maxGap time.Duration // longest gap between consecutive creates overlapping the window
	at     time.Duration // when the longest gap began, from the window's start
	n      int           // creates inside the window
	window time.Duration
	// covered is false when the victim made no create after the window:
	// it finished (or stalled to the end) inside it.
	covered bool
}

// gaps measures the creates around [from, to]: every pair of consecutive
// creates a, b with a <= to and b >= from, so that a stall that began
// before the window or ended after it counts whole.
func (c *creates) gaps(from, to time.Time) gapStats {
	ts := c.sorted()
	g := gapStats{window: to.Sub(from)}
	for i, t := range ts {
		if !t.Before(from) && !t.After(to) {
			g.n++
		}
		if t.After(to) {
			g.covered = true
		}
		if i == 0 {
			continue
		}
		a := ts[i-1]
		if !a.After(to) && !t.Before(from) && t.Sub(a) > g.maxGap {
			g.maxGap, g.at = t.Sub(a), a.Sub(from)
		}
	}
	return g
}

// prober sends a request every interval (the next one interval after the
// previous one started, or at once when it took longer) until stopped, and
// keeps the latencies.
type prober struct {
	stop chan struct{}
	done chan struct{}
	lat  []time.Duration
	errs int
	last string // the last error
}

// probe starts a prober of GET path; c == nil sends it without an API key.
func probe(base string, c *realbin.Client, path string, interval time.Duration) *prober {
	p := &prober{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		for {
			t := time.Now()
			var res *http.Response
			var err error
			if c == nil {
				res, err = http.Get(base + path)
			} else {
				res, err = c.Send(context.Background(), http.MethodGet, path, nil)
			}
			if err == nil {
				_, err = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if err == nil && res.StatusCode != http.StatusOK {
					err = errStatus(res.StatusCode)
				}
			}
			p.lat = append(p.lat, time.Since(t))
			if err != nil {
				p.errs++
				p.last = err.Error()
			}
			select {
			case <-p.stop:
				return
			case <-time.After(interval - time.Since(t)):
			}
		}
	}()
	return p
}

// end stops the prober and waits for its last request.
func (p *prober) end() *prober {
	close(p.stop)
	<-p.done
	return p
}

func (p *prober) max() time.Duration { return slices.Max(append([]time.Duration{0}, p.lat...)) }

type errStatus int

func (e errStatus) Error() string { return fmt.Sprintf("status %d", int(e)) }

// median of ds (which it sorts).
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// timed runs f and returns how long it took.
func timed(f func()) time.Duration {
	t := time.Now()
	f()
	return time.Since(t)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func mb(kb int64) float64 { return float64(kb) / 1024 }
