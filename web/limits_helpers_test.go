package web_test

import (
	"bufio"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/store/objstore"
	"github.com/outdial/outdial/web"
)

// limitedEnv is an objEnv whose server runs with resource limits: the
// router gets limits in web.Config and the listener is wired by
// web.ConnLimits.Apply, the way cmd/serve wires the real server.
type limitedEnv struct {
	*objEnv
	tracker *web.ConnTracker
	addr    string // host:port of the listener
}

// newLimitedEnv is newObjEnv with limits; cfg, when not nil, may change
// the router's configuration before it is built.
func newLimitedEnv(t *testing.T, maxUpload int64, lim web.Limits, cl web.ConnLimits, cfg func(*web.Config)) *limitedEnv {
	t.Helper()
	e := newEnv(t)
	e.srv.Close()
	srv := httptest.NewUnstartedServer(nil)
	sealer, err := store.NewSealer(e.secret)
	if err != nil {
		t.Fatalf("sealer: %v", err)
	}
	secretKey := base64.RawURLEncoding.EncodeToString(sealer.Derive("s3-secret-key"))
	e.addSecret(secretKey)
	oe := &objEnv{testEnv: e, objDir: filepath.Join(e.dir, "objects"), clock: &offsetClock{}, maxUpload: maxUpload}
	log := slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	bundled := objstore.BundledConfig{
		Dir:           oe.objDir,
		Endpoint:      srv.Listener.Addr().String(),
		Insecure:      true,
		AccessKey:     "outdial-" + hex.EncodeToString(sealer.Derive("s3-access-key")[:8]),
		SecretKey:     secretKey,
		MaxObjectSize: maxUpload,
		Now:           oe.clock.now,
		Logger:        log,
	}
	if lim.DiskReserve != nil {
		bundled.SpaceCheck = lim.DiskReserve.Check
	}
	st, h, err := objstore.NewBundled(bundled)
	if err != nil {
		t.Fatalf("NewBundled: %v", err)
	}
	oe.objects = st
	wc := web.Config{DB: e.db, Log: log, Version: testVersion, MaxUploadBytes: maxUpload,
		Uploads: st, Objects: h, ObjectsPrefix: objstore.PathPrefix, Limits: lim}
	if cfg != nil {
		cfg(&wc)
	}
	srv.Config.Handler = openAPIValidated(t, web.New(wc))
	le := &limitedEnv{objEnv: oe, addr: srv.Listener.Addr().String()}
	srv.Listener, le.tracker = cl.Apply(srv.Config, srv.Listener)
	t.Cleanup(le.tracker.Close)
	srv.Start()
	e.srv = srv
	return le
}

// rawConn is a client connection that writes requests byte by byte as a
// test wants them.
type rawConn struct {
	t  *testing.T
	c  net.Conn
	br *bufio.Reader
}

func dialRaw(t *testing.T, addr string) *rawConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{t: t, c: c, br: bufio.NewReader(c)}
}

// head writes a request's head: method, path, the headers given as
// "Name: value" lines, and Content-Length when length >= 0.
func (rc *rawConn) head(method, path string, length int, headers ...string) {
	rc.t.Helper()
	rc.request(method, path, length, "", headers...)
}

// request writes a request head as head does, and body, in one write.
func (rc *rawConn) request(method, path string, length int, body string, headers ...string) {
	rc.t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\n", method, path, rc.c.RemoteAddr())
	for _, h := range headers {
		b.WriteString(h + "\r\n")
	}
	if length >= 0 {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", length)
	}
	b.WriteString("\r\n")
	rc.write(b.String() + body)
}

func (rc *rawConn) write(s string) {
	rc.t.Helper()
	if _, err := io.WriteString(rc.c, s); err != nil {
		rc.t.Fatalf("write: %v", err)
	}
}

// response reads one answer (waiting at most wait); ok is false when the
// connection was closed first.
func (rc *rawConn) response(wait time.Duration) (*http.Response, []byte, bool) {
	rc.t.Helper()
	_ = rc.c.SetReadDeadline(time.Now().Add(wait))
	res, err := http.ReadResponse(rc.br, nil)
	if err != nil {
		if isTimeoutErr(err) {
			rc.t.Fatalf("no answer and no close within %v", wait)
		}
		return nil, nil, false
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	return res, body, true
}

// closedWithin waits up to wait for the server to close the connection
// (anything it answered first is read and dropped) and returns how long
// that took; it fails the test when the connection is still open.
func (rc *rawConn) closedWithin(wait time.Duration) time.Duration {
	rc.t.Helper()
	start := time.Now()
	_ = rc.c.SetReadDeadline(start.Add(wait))
	_, err := io.Copy(io.Discard, rc.br)
	if isTimeoutErr(err) {
		rc.t.Fatalf("connection still open after %v", wait)
	}
	return time.Since(start)
}

// stillOpen checks that the server has not closed the connection within d.
func (rc *rawConn) stillOpen(d time.Duration) {
	rc.t.Helper()
	_ = rc.c.SetReadDeadline(time.Now().Add(d))
	_, err := rc.br.Peek(1)
	if !isTimeoutErr(err) {
		rc.t.Fatalf("connection closed or answered early: %v", err)
	}
}

func isTimeoutErr(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
