package web

import (
	"container/list"
	"context"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/netutil"
)

// ConnLimits are the listener side of docs/api.md section 8.1: a cap on
// concurrent connections below the open-files limit, and shedding of the
// connections that hold a slot without using it, so that a flood of idle or
// stalled connections cannot keep a health check or an API call out.
//
// Why shedding: at the cap, netutil.LimitListener stops accepting, and new
// connections wait in the kernel's accept queue behind the flood; once that
// queue is full the kernel drops their SYNs and the client retries after
// 1 s, 3 s, 7 s. A short body deadline alone only churns the flood: every
// closed slot goes to the next queued flood connection. So from ShedAt
// open connections on, the tracker closes, oldest first, those that use
// their slot for nothing: idle keep-alives, connections whose request
// headers have not arrived within StallAfter, and requests blocked reading
// a body that has brought less than the minimum rate's worth of bytes in
// StallAfter. Accept then never stops, the queue stays short, and a new
// connection is served at once. A request being handled or answered, or a
// body arriving at the minimum rate or faster, is never shed.
type ConnLimits struct {
	// MaxConns caps concurrent connections (netutil.LimitListener); <= 0
	// means no cap and no shedding.
	MaxConns int
	// ShedAt is the number of open connections from which idle and stalled
	// ones are shed, down to 95 % of it; 0 means 3/4 of MaxConns.
	ShedAt int
	// StallAfter is how long a connection may go without progress (request
	// headers completed, or the minimum rate's worth of body bytes) before
	// it may be shed; 0 means DefaultStallAfter.
	StallAfter time.Duration
	// ReadHeaderTimeout and IdleTimeout, when > 0, replace the server's.
	ReadHeaderTimeout time.Duration
	IdleTimeout       time.Duration
	// Log gets one line per 10 s while connections are being shed; nil
	// discards.
	Log *slog.Logger
}

// DefaultStallAfter is ConnLimits.StallAfter's default.
const DefaultStallAfter = time.Second

// Apply configures srv (timeouts, ConnContext, ConnState; existing hooks
// are kept and called first) and returns ln capped at MaxConns, to pass to
// srv.Serve, with the tracker that sheds connections. The tracker's
// goroutine stops when srv shuts down or when its Close is called.
func (cl ConnLimits) Apply(srv *http.Server, ln net.Listener) (net.Listener, *ConnTracker) {
	if cl.ReadHeaderTimeout > 0 {
		srv.ReadHeaderTimeout = cl.ReadHeaderTimeout
	}
	if cl.IdleTimeout > 0 {
		srv.IdleTimeout = cl.IdleTimeout
	}
	t := &ConnTracker{
		conns:      map[net.Conn]*trackedConn{},
		stallAfter: cl.StallAfter,
		kick:       make(chan struct{}, 1),
		stop:       make(chan struct{}),
		log:        cl.Log,
		now:        time.Now,
	}
	if t.stallAfter <= 0 {
		t.stallAfter = DefaultStallAfter
	}
	if t.log == nil {
		t.log = slog.New(slog.DiscardHandler)
	}
	if cl.MaxConns > 0 {
		t.shedAt = cl.ShedAt
		if t.shedAt <= 0 || t.shedAt > cl.MaxConns {
			t.shedAt = max(cl.MaxConns*3/4, 1)
		}
		ln = netutil.LimitListener(ln, cl.MaxConns)
	}
	prevCtx, prevState := srv.ConnContext, srv.ConnState
	srv.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		if prevCtx != nil {
			ctx = prevCtx(ctx, c)
		}
		return context.WithValue(ctx, connKey{}, t.add(c))
	}
	srv.ConnState = func(c net.Conn, st http.ConnState) {
		if prevState != nil {
			prevState(c, st)
		}
		t.setState(c, st)
	}
	srv.RegisterOnShutdown(t.Close)
	go t.run()
	return ln, t
}

// ConnTracker knows every open connection of one server and sheds idle and
// stalled ones; see ConnLimits.
type ConnTracker struct {
	stallAfter time.Duration
	shedAt     int // 0: never shed
	now        func() time.Time
	log        *slog.Logger

	mu    sync.Mutex
	conns map[net.Conn]*trackedConn
	order list.List // *trackedConn in accept order, oldest first
	open  int       // tracked and not being shed

	shed     atomic.Int64 // connections shed so far
	kick     chan struct{}
	stop     chan struct{}
	stopOnce sync.Once
}

// trackedConn is one connection's state, for shedding.
type trackedConn struct {
	t      *ConnTracker
	c      net.Conn
	elem   *list.Element
	state  atomic.Int32 // http.ConnState
	since  atomic.Int64 // unix ns of the last progress: accepted, request read, body bytes, idle
	inBody atomic.Int32 // > 0 while the handler is blocked reading the body
	closed bool         // being shed or gone (under t.mu)
}

type connKey struct{}

// connFromContext returns the request's connection, or nil when the server
// has no tracker.
func connFromContext(ctx context.Context) *trackedConn {
	tc, _ := ctx.Value(connKey{}).(*trackedConn)
	return tc
}

// touch marks progress on the connection.
func (tc *trackedConn) touch() { tc.since.Store(tc.t.now().UnixNano()) }

// sheddable reports whether the connection holds its slot for nothing.
func (tc *trackedConn) sheddable(now int64, stall int64) bool {
	switch http.ConnState(tc.state.Load()) {
	case http.StateIdle:
		return true
	case http.StateNew:
		return now-tc.since.Load() >= stall
	case http.StateActive:
		return tc.inBody.Load() > 0 && now-tc.since.Load() >= stall
	}
	return false
}

// Open returns the number of connections open now (being shed excluded).
func (t *ConnTracker) Open() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.open
}

// Shed returns how many connections have been shed since the start.
func (t *ConnTracker) Shed() int64 { return t.shed.Load() }

// Close stops the shedding goroutine; connections are left alone.
func (t *ConnTracker) Close() { t.stopOnce.Do(func() { close(t.stop) }) }

func (t *ConnTracker) add(c net.Conn) *trackedConn {
	tc := &trackedConn{t: t, c: c}
	tc.state.Store(int32(http.StateNew))
	tc.touch()
	t.mu.Lock()
	tc.elem = t.order.PushBack(tc)
	t.conns[c] = tc
	t.open++
	over := t.shedAt > 0 && t.open >= t.shedAt
	t.mu.Unlock()
	if over {
		select {
		case t.kick <- struct{}{}:
		default:
		}
	}
	return tc
}

func (t *ConnTracker) setState(c net.Conn, st http.ConnState) {
	t.mu.Lock()
	tc := t.conns[c]
	if tc != nil && (st == http.StateClosed || st == http.StateHijacked) {
		delete(t.conns, c)
		t.order.Remove(tc.elem)
		if !tc.closed {
			tc.closed = true
			t.open--
		}
	}
	t.mu.Unlock()
	if tc == nil {
		return
	}
	tc.state.Store(int32(st))
	if st == http.StateActive || st == http.StateIdle {
		tc.touch()
	}
}

// shedPause is the shortest time between two shedding passes.
const shedPause = 20 * time.Millisecond

func (t *ConnTracker) run() {
	var retry <-chan time.Time
	var logged time.Time
	var shedSinceLog int64
	for {
		select {
		case <-t.stop:
			return
		case <-t.kick:
		case <-retry:
		}
		n, over := t.shedOnce()
		retry = nil
		if over {
			// Not enough could be shed yet: try again once more may have
			// stalled.
			retry = time.After(max(t.stallAfter/4, shedPause))
		}
		if shedSinceLog += int64(n); shedSinceLog > 0 && time.Since(logged) >= 10*time.Second {
			t.log.Warn("connections shed: idle or stalled while near the cap",
				slog.Int64("shed", shedSinceLog), slog.Int("open", t.Open()), slog.Int("shed_at", t.shedAt))
			logged, shedSinceLog = time.Now(), 0
		}
		select {
		case <-t.stop:
			return
		case <-time.After(shedPause):
		}
	}
}

// shedOnce closes idle and stalled connections, oldest first, until 95 % of
// shedAt are open; it returns how many it closed and whether the open
// count is still at or above shedAt.
func (t *ConnTracker) shedOnce() (int, bool) {
	if t.shedAt <= 0 {
		return 0, false
	}
	target := t.shedAt - max(t.shedAt/20, 1)
	now, stall := t.now().UnixNano(), int64(t.stallAfter)
	var victims []net.Conn
	t.mu.Lock()
	if t.open < t.shedAt {
		t.mu.Unlock()
		return 0, false
	}
	for e := t.order.Front(); e != nil && t.open > target; e = e.Next() {
		tc := e.Value.(*trackedConn)
		if !tc.closed && tc.sheddable(now, stall) {
			tc.closed = true
			t.open--
			victims = append(victims, tc.c)
		}
	}
	over := t.open >= t.shedAt
	t.mu.Unlock()
	for _, c := range victims {
		_ = c.Close()
	}
	t.shed.Add(int64(len(victims)))
	return len(victims), over
}
