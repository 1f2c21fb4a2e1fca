package carrier

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// ariFakeClock is a simulated clock: it moves only when a test advances it.
type ariFakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *ariFakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *ariFakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// ariFlakyServer is an Asterisk whose events websocket answers attempt n
// (from 1) as script says: "refuse" (503), "drop" (accepted, then closed at
// once) or "stay" (accepted, held while the clock moves on by hold, then
// closed). It records the simulated time of every attempt.
type ariFlakyServer struct {
	*httptest.Server
	clock  *ariFakeClock
	script func(n int) string
	hold   time.Duration
	stop   func(n int) // called after attempt n is answered

	mu       sync.Mutex
	attempts []time.Time
}

func newARIFlakyServer(t *testing.T, clock *ariFakeClock, script func(int) string) *ariFlakyServer {
	s := &ariFlakyServer{clock: clock, script: script}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *ariFlakyServer) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.attempts = append(s.attempts, s.clock.Now())
	n := len(s.attempts)
	s.mu.Unlock()
	switch s.script(n) {
	case "refuse":
		http.Error(w, "Service Unavailable", http.StatusServiceUnavailable)
	case "drop", "stay":
		conn, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		if s.script(n) == "stay" {
			s.clock.Advance(s.hold)
		}
		conn.CloseNow()
	}
	if s.stop != nil {
		s.stop(n)
	}
}

// times is the simulated time of every attempt so far.
func (s *ariFlakyServer) times() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.attempts...)
}

// ariLogLine is one JSON log line of the carrier.
type ariLogLine struct {
	Msg      string        `json:"msg"`
	Failures int           `json:"failures"`
	NextTry  time.Time     `json:"next_try"`
	RetryIn  time.Duration `json:"retry_in"`
	Status   int           `json:"http_status"`
}

func ariLogLines(t *testing.T, buf *bytes.Buffer) []ariLogLine {
	t.Helper()
	var out []ariLogLine
	sc := bufio.NewScanner(bytes.NewReader(buf.Bytes()))
	for sc.Scan() {
		var l ariLogLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		out = append(out, l)
	}
	return out
}

// newARIBackoffCarrier builds a carrier on srv with the default timing, a
// backoff whose jitter always draws the middle of its range, and a sleep
// that advances clock instead of sleeping; ctx is cancelled once the clock
// reaches end. A kick a call made (when Events lets it cut the wait short)
// is awaited for up to a millisecond of real time, so that today's
// waiting calls get their chance to kick.
func newARIBackoffCarrier(t *testing.T, srv *ariFlakyServer, end time.Time, cancel func()) (*ari, *bytes.Buffer) {
	t.Helper()
	var logs bytes.Buffer
	var logMu sync.Mutex
	c, err := New(ARI, map[string]any{"ari_endpoint": srv.URL + "/ari", "app_name": "outdial", "app_password": "secret"},
		Options{Now: srv.clock.Now, Logger: slog.New(slog.NewJSONHandler(lockedWriter{&logMu, &logs}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	a := c.(*ari)
	a.timing.backoff = ariBackoff(250*time.Millisecond, 30*time.Second, func() float64 { return 0.5 })
	a.timing.sleep = func(ctx context.Context, d time.Duration, kick <-chan struct{}) bool {
		if kick != nil {
			select {
			case <-kick:
				return true
			case <-time.After(time.Millisecond):
			}
		}
		srv.clock.Advance(d)
		if !srv.clock.Now().Before(end) {
			cancel()
		}
		return false
	}
	return a, &logs
}

// lockedWriter serializes writes to w.
type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestARIEventsBackoffWhileCallsWait: an Asterisk refusing the events
// websocket for ten simulated minutes while a call waits for it all along
// gets about one attempt per backoff step (waits from [0, 250 ms) doubling
// to [0, 30 s)) plus at most one a waiting call asks for each 30 s: not a
// new attempt after every failure (the issue measured 3,100 in 8 s). Each
// failure is counted in a warning, at most one a minute, that says when
// the next try is.
func TestARIEventsBackoffWhileCallsWait(t *testing.T) {
	clock := &ariFakeClock{now: time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)}
	start := clock.Now()
	end := start.Add(10 * time.Minute)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := newARIFlakyServer(t, clock, func(int) string { return "refuse" })
	srv.stop = func(n int) {
		if n > 1000 { // a storm: stop it here
			cancel()
		}
	}
	a, logs := newARIBackoffCarrier(t, srv, end, cancel)
	a.timing.eventsWait = time.Hour // the call waits as long as it takes

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		a.Events(ctx, newARITestSink())
	}()
	go func() { // a call waiting for the websocket, over and over
		defer wg.Done()
		for ctx.Err() == nil {
			a.awaitEvents(ctx)
		}
	}()
	wg.Wait()

	times := srv.times()
	first8 := 0
	for _, at := range times {
		if at.Sub(start) < 8*time.Second {
			first8++
		}
	}
	// Backoff alone: attempts at 0, 0.125, 0.375, 0.875, 1.875, 3.875 and
	// 7.875 s, then every 15 s; waiting calls add at most one per 30 s.
	if first8 > 8 {
		t.Fatalf("%d attempts in the first 8 simulated seconds, want at most 8", first8)
	}
	if n := len(times); n < 40 || n > 70 {
		t.Fatalf("%d attempts in 10 simulated minutes, want 40 to 70", n)
	}
	for i := 1; i < len(times); i++ {
		if gap := times[i].Sub(times[i-1]); gap > 30*time.Second {
			t.Fatalf("attempt %d came %s after the previous one, want at most the 30 s cap", i+1, gap)
		}
	}

	lines := ariLogLines(t, logs)
	if len(lines) < 10 || len(lines) > 11 {
		t.Fatalf("%d log lines in 10 simulated minutes, want one a minute (10 or 11): %+v", len(lines), lines)
	}
	logged := 0
	var prev time.Time
	for i, l := range lines {
		at := l.NextTry.Add(-l.RetryIn)
		if l.Msg != "ari: events websocket connection failed" || l.Status != http.StatusServiceUnavailable ||
			l.Failures < 1 || l.RetryIn < 0 || l.RetryIn > 30*time.Second {
			t.Fatalf("log line %d: %+v", i, l)
		}
		if i > 0 && at.Sub(prev) < time.Minute {
			t.Fatalf("log line %d %s after the previous one, want a minute at least", i, at.Sub(prev))
		}
		prev = at
		logged += l.Failures
	}
	if lines[0].Failures != 1 || logged > len(times) || len(times)-logged > 10 {
		t.Fatalf("the log lines count %d failures (first line %d), for %d attempts", logged, lines[0].Failures, len(times))
	}
}

// TestARIEventsBackoffResets: the backoff grows over refusals and over
// connections closed at once (an endpoint that accepts and drops the
// websocket gets no faster retries than one that refuses it), and starts
// over after a connection that stayed up: that one is reopened at once.
func TestARIEventsBackoffResets(t *testing.T) {
	clock := &ariFakeClock{now: time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	script := []string{"refuse", "refuse", "drop", "refuse", "stay", "refuse", "drop", "drop", "refuse"}
	srv := newARIFlakyServer(t, clock, func(n int) string {
		if n > len(script) {
			return "refuse"
		}
		return script[n-1]
	})
	srv.hold = 10 * time.Second // the default timing's stable
	srv.stop = func(n int) {
		if n >= len(script) {
			cancel()
		}
	}
	a, _ := newARIBackoffCarrier(t, srv, clock.Now().Add(time.Hour), cancel)
	base := a.timing.backoff
	var steps []int
	a.timing.backoff = func(n int) time.Duration {
		steps = append(steps, n) // only the Events goroutine calls it
		return base(n)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.Events(ctx, newARITestSink())
	}()
	<-done
	// "stay" resets: the attempt after it comes at once, without a wait.
	want := []int{0, 1, 2, 3, 0, 1, 2}
	if len(steps) != len(want) {
		t.Fatalf("backoff steps %v, want %v", steps, want)
	}
	for i := range want {
		if steps[i] != want[i] {
			t.Fatalf("backoff steps %v, want %v", steps, want)
		}
	}
	times := srv.times()
	if got := times[5].Sub(times[4]); got != srv.hold {
		t.Fatalf("reconnect %s after the stable connection opened, want %s (at once after it closed)", got, srv.hold)
	}
}
