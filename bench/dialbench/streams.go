package main

import (
	"bufio"
	"context"
	"fmt"
	"log"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/outdial/outdial/bench/internal/realbin"
)

// streams are event-stream clients of one path (API.md 10): all but one
// read every event; the last never reads (a raw connection with the
// smallest receive buffer the kernel allows), as a stuck browser tab would.
type streams struct {
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	stuck    net.Conn
	events   atomic.Int64
	snaps    atomic.Int64
	calls    atomic.Int64
	ended    atomic.Int64 // streams the server ended
	firstErr atomic.Value
}

// openStreams opens n streams of path at the API whose base URL is base
// and host:port addr (n-1 reading, 1 never reading; none when n is 0) as
// the holder of key.
func openStreams(base, addr, key, path string, n int) *streams {
	ctx, cancel := context.WithCancel(context.Background())
	st := &streams{cancel: cancel}
	if n <= 0 {
		return st
	}
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 0, DisableCompression: true}}
	for range n - 1 {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
		if err != nil {
			log.Fatal(err)
		}
		req.Header.Set("X-API-Key", key)
		res, err := client.Do(req)
		if err != nil || res.StatusCode != http.StatusOK {
			log.Fatalf("open %s: %v %v", path, err, res)
		}
		st.wg.Add(1)
		go st.read(res)
	}
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		log.Fatal(err)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetReadBuffer(1)
	}
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nX-API-Key: %s\r\n\r\n", path, addr, key)
	st.stuck = conn
	return st
}

func (st *streams) read(res *http.Response) {
	defer st.wg.Done()
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if name, ok := strings.CutPrefix(line, "event: "); ok {
			st.events.Add(1)
			switch name {
			case "campaign":
				st.snaps.Add(1)
			case "call":
				st.calls.Add(1)
			}
		}
	}
	if err := sc.Err(); err != nil && !strings.Contains(err.Error(), "context canceled") {
		st.firstErr.CompareAndSwap(nil, err)
	}
	st.ended.Add(1)
}

// wait waits up to d for the reading streams to end (a campaign stream
// ends after the final snapshot).
func (st *streams) wait(d time.Duration) bool {
	done := make(chan struct{})
	go func() { st.wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

func (st *streams) close() {
	st.cancel()
	if st.stuck != nil {
		st.stuck.Close()
	}
	st.wg.Wait()
}

func (st *streams) String() string {
	return fmt.Sprintf("%d events read (%d snapshots, %d calls), %d reading streams ended by the server",
		st.events.Load(), st.snaps.Load(), st.calls.Load(), st.ended.Load())
}

// idleStreams opens n streams of a campaign nothing happens in and returns
// the service's CPU time (every node's) over d once they are open (after a
// settling second).
func idleStreams(cl *realbin.Cluster, key, path string, n int, d time.Duration) string {
	st := openStreams(cl.Base, cl.Addr, key, path, n)
	defer st.close()
	time.Sleep(time.Second)
	cpu0 := cl.CPU()
	time.Sleep(d)
	cpu := cl.CPU() - cpu0
	return fmt.Sprintf("%d open streams of a draft campaign (1 never reading): service CPU %.3f s over %v (%.3f%% of a core); %s",
		n, cpu.Seconds(), d, 100*cpu.Seconds()/d.Seconds(), st)
}
