package web

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/outdial/outdial/store/diskspace"
)

// Limits are the resource limits of docs/api.md section 8.1 that the
// handler enforces; ConnLimits (conns.go) are the listener's. The zero
// value enforces none of them (tests of other resources).
// DefaultMaxCampaignRows is Limits.MaxCampaignRows' default: two million
// contacts. A create's time is linear in its rows but its memory is not
// flat (the duplicate-number set, and the garbage collector's headroom over
// it): measured +65 MB of RSS for 1M rows and +116 MB for 2M
// (docs/performance.md), so the default keeps a create within what a 1 GB
// appliance can give.
const DefaultMaxCampaignRows = 2_000_000

type Limits struct {
	// BodyTimeout is how long after its headers an API or webhook request
	// body may take to arrive in full; 0 means no deadline. Presigned
	// uploads to the bundled object store have none: they are held to the
	// minimum rate only, however long they are.
	BodyTimeout time.Duration
	// BodyMinRate (bytes per second) and BodyRateWindow: every request body,
	// uploads included, must bring BodyMinRate×BodyRateWindow bytes (or
	// the rest of the body when less remains) within BodyRateWindow of the
	// request's headers, and again within BodyRateWindow of each time it
	// did, so a stall or a trickle is cut at most one window after the
	// body last kept up. Zero for either disables the rate.
	BodyMinRate    int64
	BodyRateWindow time.Duration

	// DiskReserve, when set, refuses presigned uploads whose file_size
	// would leave less than the reserve free, and campaign creates while
	// free space is below it: 507 with the figures in detail.
	DiskReserve *diskspace.Reserve

	// UploadQuotaBytes and UploadQuotaFiles bound an organization's
	// uploads: those stored plus those presigned and not yet uploaded
	// (until their URL expires). A presign that would pass either answers
	// 413. Zero disables each.
	UploadQuotaBytes int64
	UploadQuotaFiles int

	// MaxCampaignRows bounds the contacts of one campaign: a CSV with more
	// accepted rows is refused (422 csv_too_many_rows) as soon as the row
	// past it is read, and nothing is stored. It keeps a create's memory
	// (the duplicate-number set, 8 bytes a contact) and time bounded
	// whatever the upload limit allows. 0 means DefaultMaxCampaignRows.
	MaxCampaignRows int
	// UploadRetention is the age at which an unused upload is deleted
	// (the sweep runs in cmd, store.SweepUploads); only the 413's detail
	// uses it here.
	UploadRetention time.Duration

	// Streams bound the open event streams (streamguard.go); the zero
	// value means the defaults.
	Streams StreamLimits

	// Now is the clock of presign reservations; nil means time.Now.
	Now func() time.Time
}

// bodyDeadlines reports whether any body deadline is configured.
func (l *Limits) bodyDeadlines() bool {
	return l.BodyTimeout > 0 || l.rate()
}

func (l *Limits) rate() bool { return l.BodyMinRate > 0 && l.BodyRateWindow > 0 }

// guardBody holds r's body, if it has one, to the body deadlines. It
// returns the request to serve (a shallow copy whose Body extends the
// connection's read deadline as data arrives) and the function to call
// once the handler has returned.
//
// The deadlines are per request (http.ResponseController.SetReadDeadline),
// not http.Server.ReadTimeout, and are cleared once the body has been read
// to its end: a long answer (a report, an event stream) or a long handler
// after the body (a campaign import) is never cut. A request without a
// body gets no deadline at all.
//
// When the handler returns without having read the body to its end (an
// early 401, 404, 413, a health check sent with a Content-Length), net/http
// reads the rest of the body (up to 256 KiB) before it answers, so that the
// connection can serve the next request. That read keeps the deadlines: the
// answer waits at most until the body's current deadline, then the
// connection is closed; and the connection counts as waiting for a body,
// so it can be shed near the connection cap. (Closing at once instead
// would turn a flood of such requests into a reconnect storm that keeps
// the kernel's accept queue full; a held connection costs memory only.)
func (s *Server) guardBody(w http.ResponseWriter, r *http.Request) (*http.Request, func()) {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 || !s.limits.bodyDeadlines() {
		return r, func() {}
	}
	g := &guardedBody{
		rc:    http.NewResponseController(w),
		body:  r.Body,
		conn:  connFromContext(r.Context()),
		start: time.Now(),
	}
	if s.limits.BodyTimeout > 0 && !s.isObjectPath(r.URL.Path) {
		g.hard = g.start.Add(s.limits.BodyTimeout)
	}
	if s.limits.rate() {
		g.window = s.limits.BodyRateWindow
		g.quantum = max(s.limits.BodyMinRate*int64(g.window)/int64(time.Second), 1)
		if g.conn != nil {
			g.progressQuantum = max(s.limits.BodyMinRate*int64(g.conn.t.stallAfter)/int64(time.Second), 1)
		}
	}
	if err := g.rc.SetReadDeadline(g.next(g.start)); err != nil {
		// No connection under this writer (a handler test's recorder).
		return r, func() {}
	}
	r2 := r.WithContext(r.Context())
	r2.Body = g
	return r2, g.done
}

// isObjectPath reports whether path is served by the bundled object store.
func (s *Server) isObjectPath(path string) bool {
	return s.objects != nil && s.objPrefix != "" &&
		(strings.HasPrefix(path, s.objPrefix) || path == strings.TrimSuffix(s.objPrefix, "/"))
}

// guardedBody is a request body read under moving deadlines; see
// Server.guardBody. Only the handler's goroutine reads it.
type guardedBody struct {
	rc    *http.ResponseController
	body  io.ReadCloser
	conn  *trackedConn // nil without a ConnTracker
	start time.Time

	hard    time.Time     // the body must be complete by then (zero: no limit)
	window  time.Duration // 0: no minimum rate
	quantum int64         // bytes that buy another window
	got     int64         // bytes since the window began

	progressQuantum int64 // bytes that count as progress for the tracker
	progress        int64 // bytes since the last progress mark

	eof bool
}

// next returns the read deadline for a window beginning at t.
func (g *guardedBody) next(t time.Time) time.Time {
	var d time.Time
	if g.window > 0 {
		d = t.Add(g.window)
	}
	if !g.hard.IsZero() && (d.IsZero() || g.hard.Before(d)) {
		d = g.hard
	}
	return d
}

func (g *guardedBody) Read(p []byte) (int, error) {
	if g.conn != nil {
		g.conn.inBody.Add(1)
	}
	n, err := g.body.Read(p)
	if g.conn != nil {
		g.conn.inBody.Add(-1)
	}
	if n > 0 {
		if g.conn != nil && g.got == 0 && g.progress == 0 {
			g.conn.gotBody.Store(true)
		}
		g.got += int64(n)
		g.progress += int64(n)
		if g.conn != nil && g.progress >= g.progressQuantum {
			g.progress = 0
			g.conn.touch()
		}
		if g.window > 0 && g.got >= g.quantum {
			g.got = 0
			_ = g.rc.SetReadDeadline(g.next(time.Now()))
		}
	}
	if errors.Is(err, io.EOF) && !g.eof {
		// The body is in: nothing more is read for this request but the
		// server's own check that the client is still there, which must
		// not time out during a long handler or answer.
		g.eof = true
		_ = g.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

func (g *guardedBody) Close() error { return g.body.Close() }

// done is called when the handler has returned; see Server.guardBody.
func (g *guardedBody) done() {
	if !g.eof && g.conn != nil {
		// net/http's own read of the rest waits for a body like a handler
		// would; setState clears this with the next request.
		g.conn.inBody.Add(1)
	}
}
