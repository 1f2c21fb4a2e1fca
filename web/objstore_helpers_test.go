package web_test

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/store/objstore"
	"github.com/outdial/outdial/web"
)

// objEnv is a testEnv whose server also carries the bundled object store,
// wired the way cmd/serve wires it: objstore.NewBundled with the listener's
// own host:port as endpoint, credentials derived from the server secret,
// MaxObjectSize = MaxUploadBytes, and the handler mounted on the same
// listener through web.Config{Uploads, Objects, ObjectsPrefix}. The store's
// clock is the real time plus an adjustable offset (minio-go stamps
// presigned URLs with time.Now, so the verifier's clock must follow it).
//
// restart (of the embedded testEnv) brings back a server without the object
// store; objEnv tests do not use it.
type objEnv struct {
	*testEnv
	objects   *objstore.Store
	objDir    string
	clock     *offsetClock
	maxUpload int64
}

// offsetClock is time.Now plus an offset that tests move forward.
type offsetClock struct {
	mu  sync.Mutex
	off time.Duration
}

func (c *offsetClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.off)
}

func (c *offsetClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.off += d
}

// newObjEnv returns an objEnv whose largest upload is maxUpload bytes.
func newObjEnv(t *testing.T, maxUpload int64) *objEnv {
	t.Helper()
	e := newEnv(t)
	// Replace the plain server newEnv started: the bundled store must know
	// the listener's address before the handler exists.
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
	st, h, err := objstore.NewBundled(objstore.BundledConfig{
		Dir:           oe.objDir,
		Endpoint:      srv.Listener.Addr().String(),
		Insecure:      true,
		AccessKey:     "outdial-" + hex.EncodeToString(sealer.Derive("s3-access-key")[:8]),
		SecretKey:     secretKey,
		MaxObjectSize: maxUpload,
		Now:           oe.clock.now,
		Logger:        log,
	})
	if err != nil {
		t.Fatalf("NewBundled: %v", err)
	}
	oe.objects = st
	srv.Config.Handler = openAPIValidated(t, web.New(web.Config{
		DB: e.db, Log: log, Version: testVersion, MaxUploadBytes: maxUpload,
		Uploads: st, Objects: h, ObjectsPrefix: objstore.PathPrefix,
	}))
	srv.Start()
	e.srv = srv
	return oe
}

// presign asks for an upload URL as the holder of key and returns the 200
// answer, failing the test otherwise.
func (oe *objEnv) presign(key, fileName string, size int) presigned {
	oe.t.Helper()
	r := oe.do(http.MethodPost, presignPath, key, map[string]any{"file_name": fileName, "file_size": size})
	wantStatus(oe.t, r, http.StatusOK)
	m := r.obj(oe.t)
	p := presigned{}
	p.URL, _ = m["upload_url"].(string)
	p.Key, _ = m["file_key"].(string)
	if p.URL == "" || p.Key == "" {
		oe.t.Fatalf("presign answer lacks upload_url or file_key: %s", r.Raw)
	}
	return p
}

// presigned is the useful part of a presign answer.
type presigned struct{ URL, Key string }

// s3Error is an S3 XML error body as a client parses it.
type s3Error struct {
	XMLName xml.Name `xml:"Error"`
	Code    string
	Message string
}

// wantS3Error checks that an answer of the bundled store is status with the
// S3 XML error code.
func wantS3Error(t *testing.T, status int, raw []byte, wantStatus int, code string) s3Error {
	t.Helper()
	var e s3Error
	if err := xml.Unmarshal(raw, &e); err != nil {
		t.Fatalf("status %d, body %q is not an S3 XML error: %v", status, raw, err)
	}
	if status != wantStatus || e.Code != code {
		t.Fatalf("answer = %d %s (%q), want %d %s", status, e.Code, e.Message, wantStatus, code)
	}
	return e
}

// put sends body to url with plain net/http, as curl would, with the given
// Content-Type ("" sends none), and returns the status and body. A
// *bytes.Reader body is sent with its Content-Length; another reader is sent
// chunked, with no declared length.
func put(t *testing.T, url, contentType string, body io.Reader) (int, []byte) {
	t.Helper()
	return send(t, http.MethodPut, url, contentType, body)
}

// send is put with any method; body may be nil.
func send(t *testing.T, method, url, contentType string, body io.Reader) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return res.StatusCode, raw
}

// object returns the stored bytes of key read through the objstore Store,
// failing the test when it cannot be read.
func (oe *objEnv) object(key string) []byte {
	oe.t.Helper()
	rc, err := oe.objects.Open(oe.t.Context(), key)
	if err != nil {
		oe.t.Fatalf("open %q: %v", key, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		oe.t.Fatalf("read %q: %v", key, err)
	}
	return data
}

// wantNoObject fails the test when key exists or when any file (object or
// leftover temp file) is under the object directory.
func (oe *objEnv) wantNoObject(key string) {
	oe.t.Helper()
	if _, err := oe.objects.Stat(oe.t.Context(), key); !errors.Is(err, objstore.ErrNotFound) {
		oe.t.Errorf("stat %q: err = %v, want ErrNotFound", key, err)
	}
	if fs := oe.files(); len(fs) > 0 {
		oe.t.Errorf("object directory holds files %q, want none", fs)
	}
}

// files lists the regular files under the object directory.
func (oe *objEnv) files() []string {
	oe.t.Helper()
	var out []string
	err := filepath.WalkDir(oe.objDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		oe.t.Fatalf("walk %s: %v", oe.objDir, err)
	}
	return out
}

// rawDo sends body as is with key and returns the status and the raw
// answer, without do's JSON decoding and secret scan: for multi-megabyte
// bodies that hold no secret, where those checks would dominate a -race run.
// A 500 still fails the test.
func (e *testEnv) rawDo(method, path, key, body string) (int, []byte) {
	e.t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatalf("new request: %v", err)
	}
	req.Header.Set("X-API-Key", key)
	res, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatalf("read body: %v", err)
	}
	if res.StatusCode == http.StatusInternalServerError {
		e.t.Errorf("%s %s: status 500: %s", method, path, raw)
	}
	return res.StatusCode, raw
}
