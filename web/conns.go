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
// Why shedding, and why at accept: at the cap, netutil.LimitListener stops
// accepting, and new connections wait in the kernel's accept queue behind
// the flood; once that queue is full (net.core.somaxconn) the kernel drops
// their SYNs and the client retries after 1 s, 3 s, 7 s. A short body
// deadline alone only churns the flood: every freed slot goes to the next
// queued flood connection. So the tracker keeps Accept from ever waiting on
// connections that do nothing:
//
//   - from ShedAt open connections on, a background pass closes, oldest
//     first, idle keep-alives, connections whose request head has not come
//     within StallAfter, and requests blocked reading a body that brought
//     less than the minimum rate's worth of bytes in StallAfter;
//   - from EvictAt on (just below MaxConns), each new connection closes the
//     oldest connection that is idle, or has been without a complete
//     request head, or blocked on a body that has not started, for a
//     quarter of StallAfter; the background pass does the same while the
//     count stays at or above EvictAt.
//
// Passes close at most 1/256 of ShedAt connections each (every 20 ms at
// most), because a flood reconnects at once and a mass close would refill
// the accept queue in one burst. The accept queue then drains as fast as
// the service accepts, and a new connection is read and answered at once. A request being handled or
// answered, or a body that keeps arriving, is never shed; LimitListener
// stops accepting only when every connection is doing such work.
type ConnLimits struct {
	// MaxConns caps concurrent connections (netutil.LimitListener); <= 0
	// means no cap and no shedding.
	MaxConns int
	// ShedAt is the number of open connections from which idle and stalled
	// ones are shed, down to 95 % of it; 0 means 3/4 of MaxConns. From
	// EvictAt, MaxConns minus 1/64 of it, each new connection evicts one.
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
		t.evictAt = max(cl.MaxConns-max(cl.MaxConns/64, 1), 1)
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
	evictAt    int // 0: never evict
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
	t       *ConnTracker
	c       net.Conn
	elem    *list.Element
	state   atomic.Int32 // http.ConnState
	since   atomic.Int64 // unix ns of the last progress: accepted, request read, body bytes, idle
	inBody  atomic.Int32 // > 0 while the handler is blocked reading the body
	gotBody atomic.Bool  // the current request's body has started arriving
	closed  bool         // being shed or gone (under t.mu)
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

// sheddable reports whether the connection holds its slot for nothing:
// idle, or without progress for stall (no request head yet, or blocked on
// a body that brings too little). Urgent (near the cap), a connection
// without a request head, or blocked on a body that has not started, for
// grace is sheddable too.
func (tc *trackedConn) sheddable(now, stall, grace int64, urgent bool) bool {
	age := now - tc.since.Load()
	switch http.ConnState(tc.state.Load()) {
	case http.StateIdle:
		return true
	case http.StateNew:
		return age >= stall || urgent && age >= grace
	case http.StateActive:
		if tc.inBody.Load() == 0 {
			return false
		}
		return age >= stall || urgent && !tc.gotBody.Load() && age >= grace
	}
	return false
}

// grace is how long a new connection, or a request whose body has not
// started, is safe from shedding near the cap: a quarter of StallAfter.
func (t *ConnTracker) grace() int64 { return int64(t.stallAfter / 4) }

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
	var evict net.Conn
	if t.evictAt > 0 && t.open > t.evictAt {
		evict = t.evictOldest(tc)
	}
	t.mu.Unlock()
	if evict != nil {
		_ = evict.Close()
		t.shed.Add(1)
	}
	if over {
		select {
		case t.kick <- struct{}{}:
		default:
		}
	}
	return tc
}

// evictOldest marks the oldest connection but newcomer that is sheddable
// with urgency as closed and returns it (nil: none). t.mu is held.
func (t *ConnTracker) evictOldest(newcomer *trackedConn) net.Conn {
	now, stall := t.now().UnixNano(), int64(t.stallAfter)
	for e := t.order.Front(); e != nil; e = e.Next() {
		tc := e.Value.(*trackedConn)
		if tc == newcomer {
			return nil
		}
		if !tc.closed && tc.sheddable(now, stall, t.grace(), true) {
			tc.closed = true
			t.open--
			return tc.c
		}
	}
	return nil
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
	if st == http.StateActive || st == http.StateIdle {
		tc.gotBody.Store(false)
		tc.inBody.Store(0)
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
			// stalled, or passed their grace.
			retry = time.After(max(time.Duration(t.grace()), shedPause))
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
// shedAt are open; then, if EvictAt connections are still open, those
// sheddable with urgency until 1/64 below EvictAt; at most 1/256 of shedAt
// (at least 8) in all. It returns how many it closed and whether the open
// count is still at or above shedAt.
func (t *ConnTracker) shedOnce() (int, bool) {
	if t.shedAt <= 0 {
		return 0, false
	}
	now, stall, grace := t.now().UnixNano(), int64(t.stallAfter), t.grace()
	var victims []net.Conn
	// A pass closes at most batch connections: a flood's clients
	// reconnect at once, and a mass close would refill the kernel's
	// accept queue in one burst (dropping a real client's SYN with it).
	batch := max(t.shedAt/256, 8)
	pass := func(target int, urgent bool) {
		for e := t.order.Front(); e != nil && t.open > target && len(victims) < batch; e = e.Next() {
			tc := e.Value.(*trackedConn)
			if !tc.closed && tc.sheddable(now, stall, grace, urgent) {
				tc.closed = true
				t.open--
				victims = append(victims, tc.c)
			}
		}
	}
	t.mu.Lock()
	if t.open >= t.shedAt {
		pass(t.shedAt-max(t.shedAt/20, 1), false)
	}
	if t.evictAt > 0 && t.open >= t.evictAt {
		pass(t.evictAt-max(t.evictAt/64, 1), true)
	}
	over := t.open >= t.shedAt
	t.mu.Unlock()
	for _, c := range victims {
		_ = c.Close()
	}
	t.shed.Add(int64(len(victims)))
	return len(victims), over
}
