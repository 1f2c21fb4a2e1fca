package web

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// The request log (API.md 13): one line per request, written once it has
// been answered, at level Info, with the message "request" and the keys
//
//	method       the request's method
//	route        the route pattern that served it, in httprouter syntax
//	             (/api/v1/campaign/:campaign_id), never the raw path: ids,
//	             file names and query strings (webhook tokens, numbers) are
//	             not logged
//	status       the status sent (200 when the handler wrote nothing);
//	             StatusClientClosedRequest (499) when the client went away
//	             before it was answered (errors.go: nothing is sent)
//	duration_ms  from the request reaching the server to the handler's
//	             return, in milliseconds (microsecond precision)
//	bytes        body bytes written (0 for HEAD)
//	org_id       the organization whose API key authenticated the request;
//	             absent when none did
//	aborted      true when the handler ended the response on purpose
//	             (http.ErrAbortHandler: a report whose stream failed)
//
// Paths served outside the router have fixed patterns: optOutRoute, the
// object store's prefix followed by "*key", and routeNotFound for a path
// no route matches. A router answer that is not a route's (405, the
// automatic OPTIONS, a trailing-slash or case redirect) is logged with the
// pattern of the route whose path it is.

// routeNotFound is the route logged for a path that no route matches.
const routeNotFound = "not_found"

// requestInfo is what a request's handlers tell its log line. ServeHTTP
// puts one in the request's context (when request logging is enabled);
// the route helpers fill it. Only the request's goroutine touches it.
type requestInfo struct {
	route string
	org   int64
}

type requestInfoKey struct{}

// requestInfoOf returns the request's requestInfo, nil when its request is
// not logged. Its methods accept a nil receiver.
func requestInfoOf(ctx context.Context) *requestInfo {
	ri, _ := ctx.Value(requestInfoKey{}).(*requestInfo)
	return ri
}

// setRoute records the pattern that serves the request, unless one is
// recorded already.
func (ri *requestInfo) setRoute(pattern string) {
	if ri != nil && ri.route == "" {
		ri.route = pattern
	}
}

// setOrg records the organization that authenticated the request.
func (ri *requestInfo) setOrg(org int64) {
	if ri != nil {
		ri.org = org
	}
}

// ServeHTTP implements http.Handler: it serves r (serve) and writes its
// request log line.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.log.Enabled(r.Context(), slog.LevelInfo) {
		s.serve(w, r)
		return
	}
	start := time.Now()
	ri := &requestInfo{}
	r = r.WithContext(context.WithValue(r.Context(), requestInfoKey{}, ri))
	lw := &loggedWriter{ResponseWriter: w, head: r.Method == http.MethodHead}
	returned := false
	defer func() {
		// Also while a handler's panic passes (http.ErrAbortHandler, or a
		// panic outside the router, which net/http recovers and logs).
		s.logRequest(r, lw, ri, time.Since(start), !returned)
	}()
	s.serve(lw, r)
	returned = true
}

// logRequest writes the request log line; see the top of this file.
func (s *Server) logRequest(r *http.Request, lw *loggedWriter, ri *requestInfo, took time.Duration, aborted bool) {
	route := ri.route
	if route == "" {
		route = s.matchRoute(r.URL.Path)
	}
	status := lw.status
	if status == 0 {
		status = http.StatusOK
	}
	attrs := make([]slog.Attr, 0, 7)
	attrs = append(attrs,
		slog.String("method", r.Method),
		slog.String("route", route),
		slog.Int("status", status),
		slog.Float64("duration_ms", float64(took.Microseconds())/1000),
		slog.Int64("bytes", lw.bytes))
	if ri.org != 0 {
		attrs = append(attrs, slog.Int64("org_id", ri.org))
	}
	if aborted {
		attrs = append(attrs, slog.Bool("aborted", true))
	}
	s.log.LogAttrs(context.WithoutCancel(r.Context()), slog.LevelInfo, "request", attrs...)
}

// matchRoute returns the pattern of the registered route whose path is
// path (with or without a trailing slash, static segments compared without
// case, as the router's redirects do), or routeNotFound. It serves the
// router's own answers only (405, OPTIONS, redirects), so a linear scan is
// enough.
func (s *Server) matchRoute(path string) string {
	for _, p := range []string{path, toggleSlash(path)} {
		for _, rt := range s.routes {
			if patternMatches(rt.Path, p) {
				return rt.Path
			}
		}
	}
	return routeNotFound
}

// toggleSlash adds a trailing slash to path, or removes the one it has.
func toggleSlash(path string) string {
	if trimmed, ok := strings.CutSuffix(path, "/"); ok {
		return trimmed
	}
	return path + "/"
}

// patternMatches reports whether path matches the httprouter pattern: a
// ":name" segment matches one non-empty segment, a "*name" segment the
// rest of the path, any other segment itself (ignoring case).
func patternMatches(pattern, path string) bool {
	for {
		pseg, prest, pmore := strings.Cut(pattern, "/")
		if strings.HasPrefix(pseg, "*") {
			return true
		}
		seg, rest, more := strings.Cut(path, "/")
		switch {
		case strings.HasPrefix(pseg, ":"):
			if seg == "" {
				return false
			}
		case !strings.EqualFold(pseg, seg):
			return false
		}
		if !pmore || !more {
			return pmore == more
		}
		pattern, path = prest, rest
	}
}

// loggedWriter passes a response through, noting its status and the body
// bytes written, for the request log.
type loggedWriter struct {
	http.ResponseWriter
	status int   // 0 until the final status is written
	bytes  int64 // body bytes written (none counted for HEAD)
	head   bool
}

func (w *loggedWriter) WriteHeader(code int) {
	if w.status == 0 && code >= 200 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *loggedWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(p)
	if !w.head {
		w.bytes += int64(n)
	}
	return n, err
}

// ReadFrom keeps net/http's own copy (sendfile for a file) for the
// object store's downloads.
func (w *loggedWriter) ReadFrom(src io.Reader) (int64, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := io.Copy(w.ResponseWriter, src)
	if !w.head {
		w.bytes += n
	}
	return n, err
}

// Flush keeps streaming responses streaming.
func (w *loggedWriter) Flush() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the connection's writer
// (guardBody's read deadlines).
func (w *loggedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
