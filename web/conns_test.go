package web_test

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/outdial/outdial/web"
)

// A flood of connections that send a request head and never the body (more
// than the cap) cannot keep a health check or an API call out: the stalled
// ones are shed, oldest first, so the listener keeps accepting; idle
// keep-alives are shed too, while an upload that keeps arriving is not.
// The body window is long here (30 s) so that only shedding is at work.
func TestFloodOfStalledConnectionsIsShed(t *testing.T) {
	lim := web.Limits{BodyTimeout: time.Minute, BodyMinRate: 1024, BodyRateWindow: 30 * time.Second}
	cl := web.ConnLimits{MaxConns: 40, ShedAt: 20, StallAfter: 150 * time.Millisecond}
	le := newLimitedEnv(t, 1<<20, lim, cl, nil)

	// Idle keep-alive connections from before the flood.
	var idle []*rawConn
	for range 5 {
		rc := dialRaw(t, le.addr)
		rc.head(http.MethodGet, "/api/v1/health", -1)
		if res, _, ok := rc.response(2 * time.Second); !ok || res.StatusCode != http.StatusOK {
			t.Fatalf("health: %v %v", res, ok)
		}
		idle = append(idle, rc)
	}
	// An upload that keeps arriving (1 KiB every 50 ms, 20 times the
	// minimum rate) through the flood.
	up := le.presign(le.keyA, "during-flood.csv", 16<<10)
	upload := make(chan int, 1)
	go func() {
		status, _ := uploadAtRate(t, le, up.URL, 16<<10, 1<<10, 50*time.Millisecond)
		upload <- status
	}()

	// 80 connections that send a head and never the body, twice the cap:
	// half to a handler that reads its body, half to one that does not
	// (net/http then waits for the body before answering).
	var wg sync.WaitGroup
	flood := make([]*rawConn, 80)
	for i := range flood {
		wg.Go(func() {
			rc := dialRaw(t, le.addr)
			if i%2 == 0 {
				rc.head(http.MethodPost, "/api/v1/workflow", 100, "X-API-Key: "+le.keyB, "Content-Type: application/json")
			} else {
				rc.head(http.MethodGet, "/api/v1/health", 100)
			}
			flood[i] = rc
		})
	}
	wg.Wait()

	// A health check and an authenticated GET on new connections answer
	// within a second, although the flood is twice the cap.
	for _, path := range []string{"/api/v1/health", "/api/v1/workflow"} {
		start := time.Now()
		rc := dialRaw(t, le.addr)
		rc.head(http.MethodGet, path, -1, "X-API-Key: "+le.keyA)
		res, _, ok := rc.response(3 * time.Second)
		if !ok || res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s during the flood: %v, %v", path, res, ok)
		}
		if took := time.Since(start); took > time.Second {
			t.Fatalf("GET %s took %v during the flood, want < 1 s", path, took)
		}
	}
	if st := <-upload; st != http.StatusOK {
		t.Fatalf("upload during the flood: status %d, want 200", st)
	}
	if got := le.object(up.Key); len(got) != 16<<10 {
		t.Fatalf("upload stored %d bytes", len(got))
	}
	for _, rc := range idle {
		rc.closedWithin(2 * time.Second) // shed
	}
	// The flood's oldest connections were shed long before the 30 s body
	// window, and the server never held more than the cap.
	closed := 0
	for _, rc := range flood[:20] {
		_ = rc.c.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
		if _, err := rc.br.Peek(1); err != nil && !isTimeoutErr(err) {
			closed++
		}
	}
	if le.tracker.Shed() < 40 || closed == 0 {
		t.Fatalf("shed %d connections, %d of the first 20 flood connections closed; want at least 40 shed", le.tracker.Shed(), closed)
	}
	if n := le.tracker.Open(); n > cl.MaxConns {
		t.Fatalf("%d connections open, cap %d", n, cl.MaxConns)
	}
}

// Below ShedAt nothing is shed: an idle keep-alive or a slow body are left
// to their own timeouts.
func TestNoSheddingBelowShedAt(t *testing.T) {
	lim := web.Limits{BodyTimeout: time.Minute, BodyMinRate: 1024, BodyRateWindow: 30 * time.Second}
	le := newLimitedEnv(t, 1<<20, lim, web.ConnLimits{MaxConns: 40, ShedAt: 20, StallAfter: 50 * time.Millisecond}, nil)
	var conns []*rawConn
	for range 10 {
		rc := dialRaw(t, le.addr)
		rc.head(http.MethodPost, "/api/v1/workflow", 100, "X-API-Key: "+le.keyA, "Content-Type: application/json")
		conns = append(conns, rc)
	}
	time.Sleep(200 * time.Millisecond) // four StallAfters
	for _, rc := range conns {
		rc.stillOpen(10 * time.Millisecond)
	}
	if n := le.tracker.Shed(); n != 0 {
		t.Fatalf("shed %d below ShedAt", n)
	}
}
