package web_test

import (
	"bytes"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/outdial/outdial/web"
)

// Test-sized body limits: a body must bring 2 KiB in each 300 ms window
// (6.7 KiB/s) and an API or webhook body must be complete within 1.5 s.
var testBodyLimits = web.Limits{BodyTimeout: 1500 * time.Millisecond, BodyMinRate: 2048 * 10 / 3, BodyRateWindow: 300 * time.Millisecond}

const testWindow = 300 * time.Millisecond

// A request whose body never comes is cut one window after its headers,
// on an API route (here an authenticated create, which reads its body) and
// on a webhook alike. Without body deadlines the connection stays open.
func TestBodyThatNeverArrivesIsCut(t *testing.T) {
	le := newLimitedEnv(t, 1<<20, testBodyLimits, web.ConnLimits{MaxConns: 100}, nil)
	rc := dialRaw(t, le.addr)
	rc.head(http.MethodPost, "/api/v1/workflow", 100, "X-API-Key: "+le.keyA, "Content-Type: application/json")
	took := rc.closedWithin(5 * time.Second)
	if took < testWindow-50*time.Millisecond || took > testWindow+2*time.Second {
		t.Fatalf("connection closed after %v, want about one window (%v)", took, testWindow)
	}
}

// A body arriving above the minimum rate is still cut at the API body
// deadline, counted from the headers.
func TestAPIBodyDeadline(t *testing.T) {
	le := newLimitedEnv(t, 1<<20, testBodyLimits, web.ConnLimits{MaxConns: 100}, nil)
	rc := dialRaw(t, le.addr)
	rc.head(http.MethodPost, "/api/v1/workflow", 1<<20, "X-API-Key: "+le.keyA, "Content-Type: application/json")
	start := time.Now()
	stop := time.After(6 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	chunk := `{"name":"` + strings.Repeat("x", 1024) // 20 KiB/s: three times the minimum rate
	for {
		if _, err := rc.c.Write([]byte(chunk)); err != nil {
			break // closed by the server
		}
		select {
		case <-tick.C:
			continue
		case <-stop:
			t.Fatal("the body was still being read after 6 s")
		}
	}
	if took := time.Since(start); took < 1400*time.Millisecond || took > 4*time.Second {
		t.Fatalf("cut after %v, want about the 1.5 s body deadline", took)
	}
}

// A handler that answers without reading the body (a health check sent
// with a Content-Length, an early 401, an unsigned upload): net/http reads
// the rest before answering, within the body's deadline, so a body that
// never comes delays the answer by one window and then the connection is
// closed; a body that does come, even after the head, keeps the connection
// reusable. Without deadlines the answer never comes.
func TestUnreadBodyWaitsOneWindow(t *testing.T) {
	le := newLimitedEnv(t, 1<<20, testBodyLimits, web.ConnLimits{MaxConns: 100}, nil)
	for _, tc := range []struct {
		method, path string
		status       int
	}{
		{http.MethodGet, "/api/v1/health", http.StatusOK},
		{http.MethodPost, "/api/v1/campaign", http.StatusUnauthorized},
		{http.MethodPut, "/outdial/campaigns/1/x.csv", http.StatusForbidden}, // unsigned
	} {
		rc := dialRaw(t, le.addr)
		start := time.Now()
		rc.head(tc.method, tc.path, 1000)
		res, _, ok := rc.response(5 * time.Second)
		took := time.Since(start)
		if !ok || res.StatusCode != tc.status {
			t.Fatalf("%s %s: answered %v (%v), want %d", tc.method, tc.path, res, ok, tc.status)
		}
		if took < testWindow-50*time.Millisecond || took > testWindow+2*time.Second {
			t.Fatalf("%s %s: answered after %v, want about one window (%v)", tc.method, tc.path, took, testWindow)
		}
		rc.closedWithin(time.Second)
	}

	// The body comes, after the head: the router's 405 does not read it,
	// net/http does, and the connection serves the next request.
	rc := dialRaw(t, le.addr)
	rc.head(http.MethodPut, "/api/v1/health", 5)
	time.Sleep(50 * time.Millisecond)
	rc.write("hello")
	if res, _, ok := rc.response(2 * time.Second); !ok || res.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("PUT health answered %v, %v", res, ok)
	}
	rc.head(http.MethodGet, "/api/v1/health", -1)
	if res, _, ok := rc.response(2 * time.Second); !ok || res.StatusCode != http.StatusOK {
		t.Fatalf("second request on the connection answered %v, %v", res, ok)
	}
}

// uploadAtRate PUTs size bytes to a presigned URL in chunks of chunk bytes
// every every, over a raw connection, and returns the status (0 when the
// server closed the connection without an answer) and how long it took.
func uploadAtRate(t *testing.T, le *limitedEnv, presignedURL string, size, chunk int, every time.Duration) (int, time.Duration) {
	t.Helper()
	u, err := url.Parse(presignedURL)
	if err != nil {
		t.Fatal(err)
	}
	rc := dialRaw(t, le.addr)
	rc.head(http.MethodPut, u.RequestURI(), size, "Content-Type: text/csv")
	body := bytes.Repeat([]byte("a"), size)
	copy(body, "phone_number\n")
	start := time.Now()
	for off := 0; off < size; off += chunk {
		if _, err := rc.c.Write(body[off:min(off+chunk, size)]); err != nil {
			return 0, time.Since(start)
		}
		time.Sleep(every)
	}
	res, _, ok := rc.response(5 * time.Second)
	if !ok {
		return 0, time.Since(start)
	}
	return res.StatusCode, time.Since(start)
}

// A presigned upload has no overall deadline, only the minimum rate: a
// slow but steady upload that takes longer than the API body deadline
// succeeds, one below the minimum rate is cut and stores nothing.
func TestUploadMinimumRate(t *testing.T) {
	le := newLimitedEnv(t, 1<<20, testBodyLimits, web.ConnLimits{MaxConns: 100}, nil)

	const size = 24 << 10
	ok := le.presign(le.keyA, "steady.csv", size)
	// 1 KiB every 40 ms: 25 KiB/s, about 4 times the minimum; ~1 s in all.
	status, took := uploadAtRate(t, le, ok.URL, size, 1<<10, 40*time.Millisecond)
	if status != http.StatusOK {
		t.Fatalf("steady upload: status %d after %v, want 200", status, took)
	}
	if got := le.object(ok.Key); len(got) != size {
		t.Fatalf("stored %d bytes, want %d", len(got), size)
	}

	// 1 KiB every 400 ms: 2.5 KiB/s, below the minimum.
	slow := le.presign(le.keyA, "slow.csv", size)
	status, took = uploadAtRate(t, le, slow.URL, size, 1<<10, 400*time.Millisecond)
	if status == http.StatusOK || took > 4*time.Second {
		t.Fatalf("slow upload: status %d after %v, want cut within a window or two", status, took)
	}
	le.wantNoObjectKey(slow.Key)
}

// wantNoObjectKey fails the test when key exists.
func (le *limitedEnv) wantNoObjectKey(key string) {
	le.t.Helper()
	objs, err := le.objects.List(le.t.Context(), key)
	if err != nil || len(objs) != 0 {
		le.t.Fatalf("objects under %q: %v, %v; want none", key, objs, err)
	}
}

// slowHandler stands in for a long handler and a long answer (a campaign
// import after its body, a report, an event stream): the deadlines must
// not cut them.
type slowHandler struct{ wait time.Duration }

func (h slowHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := readAll(r)
	if err != nil {
		http.Error(w, "body: "+err.Error(), http.StatusBadRequest)
		return
	}
	select {
	case <-time.After(h.wait):
	case <-r.Context().Done():
		http.Error(w, "cancelled", http.StatusConflict)
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	for range 4 { // a long answer, sent in pieces
		w.Write(body) //nolint:errcheck
		http.NewResponseController(w).Flush()
		time.Sleep(h.wait / 4)
	}
}

func readAll(r *http.Request) ([]byte, error) {
	var b bytes.Buffer
	_, err := b.ReadFrom(r.Body)
	return b.Bytes(), err
}

// The deadlines end with the body: a handler that works and answers for
// several windows after it (or a request without a body) is not cut, and
// its context is not cancelled.
func TestLongHandlerAndAnswerNotCut(t *testing.T) {
	le := newLimitedEnv(t, 1<<20, testBodyLimits, web.ConnLimits{MaxConns: 100}, func(c *web.Config) {
		c.Objects = slowHandler{wait: 4 * testWindow}
	})
	for _, body := range []string{"some body", ""} {
		req, _ := http.NewRequest(http.MethodPost, le.srv.URL+"/outdial/slow", strings.NewReader(body))
		if body == "" {
			req.Method, req.Body = http.MethodGet, nil
		}
		start := time.Now()
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%q: %v", body, err)
		}
		got, _ := readAllBody(res)
		if res.StatusCode != http.StatusOK || string(got) != strings.Repeat(body, 4) {
			t.Fatalf("%q: %d %q after %v", body, res.StatusCode, got, time.Since(start))
		}
	}
}

func readAllBody(res *http.Response) ([]byte, error) {
	defer res.Body.Close()
	var b bytes.Buffer
	_, err := b.ReadFrom(res.Body)
	return b.Bytes(), err
}
