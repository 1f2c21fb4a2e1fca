package web_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"modernc.org/sqlite"

	"github.com/outdial/outdial/dialer/carrier/twiliosim"
	"github.com/outdial/outdial/dialer/metrics"
	"github.com/outdial/outdial/web"
	"github.com/outdial/outdial/web/console"
)

// sqlHolds are the holds test_hold(name) waits on, by name.
var sqlHolds sync.Map // string -> *sqlHold

// sqlHold makes a write wait on the database for as long as a test wants:
// a trigger calls test_hold(name), a function of every SQLite connection
// this test binary opens, which blocks inside the statement (its
// transaction open, the writer connection held) until released.
type sqlHold struct {
	entered     chan struct{} // closed when a statement first reaches it
	release     chan struct{} // closed by the test; later calls pass
	enterOnce   sync.Once
	releaseOnce sync.Once
}

func init() {
	sqlite.MustRegisterScalarFunction("test_hold", 1, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		name, _ := args[0].(string)
		if v, ok := sqlHolds.Load(name); ok {
			h := v.(*sqlHold)
			h.enterOnce.Do(func() { close(h.entered) })
			<-h.release
		}
		return nil, nil
	})
}

// holdUpdates makes the next UPDATE of table in the database at dbPath
// wait until the hold is released (released at the test's end at the
// latest).
func holdUpdates(t *testing.T, dbPath, table string) *sqlHold {
	t.Helper()
	name := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
	h := &sqlHold{entered: make(chan struct{}), release: make(chan struct{})}
	sqlHolds.Store(name, h)
	raw, err := sql.Open("sqlite", "file:"+dbPath+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(fmt.Sprintf("CREATE TRIGGER test_hold BEFORE UPDATE ON %s BEGIN SELECT test_hold('%s'); END", table, name)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.free)
	return h
}

func (h *sqlHold) free() { h.releaseOnce.Do(func() { close(h.release) }) }

// wait waits for c, failing the test after 10 s (a safety net, not a
// timing assertion).
func wait(t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(10 * time.Second):
		t.Fatalf("still waiting for %s after 10 s", what)
	}
}

// watchHeader marks the requests a serveWatch reports.
const watchHeader = "X-Test-Watch"

// served is a request the server took: its context (the server's, which
// net/http cancels when the client goes away) and a channel closed once
// it was answered and its request log line written.
type served struct {
	ctx  context.Context
	done chan struct{}
}

// serveWatch reports the requests that carry watchHeader, as the server
// serves them.
type serveWatch struct{ ch chan served }

func newServeWatch() *serveWatch { return &serveWatch{ch: make(chan served, 8)} }

func (sw *serveWatch) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(watchHeader) == "" {
			h.ServeHTTP(w, r)
			return
		}
		s := served{ctx: r.Context(), done: make(chan struct{})}
		defer close(s.done)
		sw.ch <- s
		h.ServeHTTP(w, r)
	})
}

// next returns the next watched request the server took.
func (sw *serveWatch) next(t *testing.T) served {
	t.Helper()
	select {
	case s := <-sw.ch:
		return s
	case <-time.After(10 * time.Second):
		t.Fatal("the server took no watched request within 10 s")
	}
	return served{}
}

// goSend sends req in the background, as a client that may give up; the
// channel is closed once the client is done.
func goSend(req *http.Request) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
		}
	}()
	return done
}

// requestLines returns the request log lines of route in logs.
func requestLines(logs, route string) []string {
	var out []string
	for _, l := range strings.Split(logs, "\n") {
		if strings.Contains(l, "msg=request ") && strings.Contains(l, " route="+route+" ") {
			out = append(out, l)
		}
	}
	return out
}

// webhookCount is outdial_webhooks_total{provider, result} of met.
func webhookCount(t *testing.T, met *metrics.Metrics, provider, result string) float64 {
	t.Helper()
	fams, err := met.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != "outdial_webhooks_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, lp := range m.GetLabel() {
				labels[lp.GetName()] = lp.GetValue()
			}
			if labels["provider"] == provider && labels["result"] == result {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// Issue 20 item 3: a client that goes away while its request waits on the
// database is not a server error. Its request is logged with status 499
// (nginx's "client closed request"), nothing at ERROR, and a webhook of a
// provider that went away is counted as canceled, not error. The
// provider's retry is then applied, once. A deadline of ours is still a
// 500.
// SQLite-specific: holds the write with a SQLite trigger calling a Go function.
func TestClientGoneWhileWaiting(t *testing.T) {
	t.Parallel()
	met := metrics.New()
	watch := newServeWatch()
	ce := newCampEnv(t, campOpts{engine: true, script: ringing, metrics: met, wrap: watch.wrap, sqlite: true})
	s := ce.setup(false)
	cid, calls := ce.inFlight(s, 1)
	aid := id(t, calls[0], "id")
	sid := fmt.Sprint(calls[0]["provider_call_id"])
	ctx := context.Background()

	// A console session whose next use records itself, a write.
	p, err := ce.db.Authenticate(ctx, ce.keyA)
	if err != nil {
		t.Fatal(err)
	}
	session, _, err := ce.db.CreateSession(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	ce.clock.advance(2 * time.Minute)

	// The provider's final status: its write waits on the database, in its
	// transaction, holding the writer connection.
	hold := holdUpdates(t, ce.dbPath, "call_attempts")
	final := ce.statusForm(sid, "completed", 9, "CallDuration", "5")
	hookURL := ce.hookURL("twilio", "status", aid, ce.token(aid))
	hookCtx, leaveHook := context.WithCancel(ctx)
	req, _ := http.NewRequestWithContext(hookCtx, http.MethodPost, hookURL, strings.NewReader(final.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Twilio-Signature", twiliosim.Signature(ce.sim.AuthToken(), hookURL, final))
	req.Header.Set(watchHeader, "1")
	hookClient := goSend(req)
	hook := watch.next(t)
	wait(t, hold.entered, "the status write to reach the database")

	// A console page's API request: authenticating its session waits for
	// the writer connection the status write holds.
	listCtx, leaveList := context.WithCancel(ctx)
	req, _ = http.NewRequestWithContext(listCtx, http.MethodGet, ce.srv.URL+campaignsPath, nil)
	req.AddCookie(&http.Cookie{Name: console.SessionCookie, Value: session})
	req.Header.Set(watchHeader, "1")
	listClient := goSend(req)
	list := watch.next(t)
	// And a console page of the same session: its lookup waits too.
	pageCtx, leavePage := context.WithCancel(ctx)
	req, _ = http.NewRequestWithContext(pageCtx, http.MethodGet, ce.srv.URL+"/console/", nil)
	req.AddCookie(&http.Cookie{Name: console.SessionCookie, Value: session})
	req.Header.Set(watchHeader, "1")
	pageClient := goSend(req)
	page := watch.next(t)

	// Both clients go away; the server sees it.
	leaveHook()
	leaveList()
	leavePage()
	wait(t, hook.ctx.Done(), "the server to see the provider go")
	wait(t, list.ctx.Done(), "the server to see the browser go")
	wait(t, page.ctx.Done(), "the server to see the console page's browser go")
	// Those two never got the writer: they end while the write waits.
	wait(t, list.done, "the abandoned API request to end")
	wait(t, page.done, "the abandoned console page to end")
	hold.free()
	wait(t, hook.done, "the abandoned webhook to end")
	wait(t, hookClient, "the provider")
	wait(t, listClient, "the browser")
	wait(t, pageClient, "the console page's browser")

	logs := ce.logs.String()
	if strings.Contains(logs, "level=ERROR") {
		t.Errorf("a request its client abandoned was logged as an error:\n%s", logs)
	}
	for route, what := range map[string]string{
		"/api/v1/telephony/:provider/status/:attempt_id": "the status webhook",
		campaignsPath:    "the session-authenticated list",
		"/console/*path": "the console page",
	} {
		lines := requestLines(logs, route)
		n := 0
		for _, l := range lines {
			if strings.Contains(l, " status=499 ") {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s: %d request lines with status=499, want 1:\n%s", what, n, strings.Join(lines, "\n"))
		}
	}
	if !strings.Contains(logs, "level=DEBUG msg=\"client closed request\"") {
		t.Errorf("no Debug line for the abandoned requests:\n%s", logs)
	}
	if got := webhookCount(t, met, "twilio", metrics.WebhookCanceled); got != 1 {
		t.Errorf(`outdial_webhooks_total{result="canceled"} = %v, want 1`, got)
	}
	if got := webhookCount(t, met, "twilio", metrics.WebhookError); got != 0 {
		t.Errorf(`outdial_webhooks_total{result="error"} = %v, want 0`, got)
	}

	// Nothing was stored; the provider's retry is applied, once.
	if got := ce.calls(cid, "")[0]; got["state"] != "in_flight" {
		t.Fatalf("attempt after the abandoned webhook = %v, want still in flight", got)
	}
	raw, err := sql.Open("sqlite", "file:"+ce.dbPath+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec("DROP TRIGGER test_hold"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if status, body, _ := ce.signed(hookURL, final); status != http.StatusNoContent {
			t.Fatalf("the provider's retry: %d %s, want 204", status, body)
		}
	}
	got := ce.calls(cid, "")[0]
	if got["state"] != "done" || got["outcome"] != "answered" {
		t.Errorf("attempt after the retry = %v, want done, answered", got)
	}
	wantCounters(t, ce.campaign(cid), 1, 1, 0, 1, 1)
	if a, d := webhookCount(t, met, "twilio", metrics.WebhookApplied), webhookCount(t, met, "twilio", metrics.WebhookDuplicate); a < 1 || d != 1 {
		t.Errorf("webhooks applied %v, duplicate %v; want the retry applied and its repeat a duplicate", a, d)
	}

	// A key-authenticated request whose client is gone before its key is
	// looked up: the "authenticate: context canceled" of the issue.
	gone, leave := context.WithCancel(ctx)
	leave()
	r := httptest.NewRequest(http.MethodGet, campaignsPath, nil).WithContext(gone)
	r.Header.Set("X-API-Key", ce.keyA)
	rec := httptest.NewRecorder()
	ce.srv.Config.Handler.ServeHTTP(rec, r)
	if rec.Code != web.StatusClientClosedRequest || rec.Body.Len() != 0 {
		t.Errorf("a request whose client is gone: %d %q, want 499 and no body", rec.Code, rec.Body.String())
	}
	logs = ce.logs.String()
	if !strings.Contains(logs, "authenticate: context canceled") || strings.Contains(logs, "level=ERROR") {
		t.Errorf("the abandoned authentication is not a Debug line, or something was logged as an error:\n%s", logs)
	}

	// A deadline of ours on a request is not the client's doing: still a
	// logged 500.
	late, cancel := context.WithDeadline(ctx, time.Now().Add(-time.Second))
	defer cancel()
	r = httptest.NewRequest(http.MethodGet, campaignsPath, nil).WithContext(late)
	r.Header.Set("X-API-Key", ce.keyA)
	rec = httptest.NewRecorder()
	ce.srv.Config.Handler.ServeHTTP(rec, r)
	if rec.Code != http.StatusInternalServerError {
		t.Errorf("a request past a deadline of ours: %d, want 500", rec.Code)
	}
	logs = ce.logs.String()
	if n := strings.Count(logs, "level=ERROR"); n != 1 || !strings.Contains(logs, "authenticate: context deadline exceeded") {
		t.Errorf("%d ERROR lines, want 1 for the deadline:\n%s", n, logs)
	}
}
