package objstore

import (
	"encoding/xml"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	testAccessKey = "OUTDIALTESTKEY01"
	testSecretKey = "s3cr3t/with+plus=and/slash"
	testHost      = "outdial.test:8080"
)

// testClock is an adjustable clock: the real time plus an offset, since
// minio-go's signer stamps requests with time.Now.
type testClock struct {
	mu  sync.Mutex
	off time.Duration
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.off)
}

func (c *testClock) set(off time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.off = off
}

// bundledEnv is a bundled Store whose handler answers on a real listener.
type bundledEnv struct {
	store *Store
	h     *Handler
	srv   *httptest.Server
	dir   string
	clock *testClock

	mu   sync.Mutex
	seen []string // "METHOD form payload" of every request, for assertions
}

// record notes how each request was signed, then serves it.
func (env *bundledEnv) record(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		form := "header"
		if r.URL.Query().Has("X-Amz-Signature") {
			form = "query"
		}
		payload := r.Header.Get("X-Amz-Content-Sha256")
		if payload == emptySHA256 {
			payload = "empty-sha256"
		} else if len(payload) == 64 {
			payload = "sha256"
		}
		env.mu.Lock()
		env.seen = append(env.seen, r.Method+" "+form+" "+payload)
		env.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

func (env *bundledEnv) forms() []string {
	env.mu.Lock()
	defer env.mu.Unlock()
	return slices.Clone(env.seen)
}

func newBundledEnv(t *testing.T, maxObject int64) *bundledEnv {
	t.Helper()
	env := &bundledEnv{dir: t.TempDir(), clock: &testClock{}}
	env.srv = httptest.NewUnstartedServer(nil)
	st, h, err := NewBundled(BundledConfig{
		Dir:           env.dir,
		Endpoint:      env.srv.Listener.Addr().String(),
		Insecure:      true,
		AccessKey:     testAccessKey,
		SecretKey:     testSecretKey,
		MaxObjectSize: maxObject,
		Now:           env.clock.now,
	})
	if err != nil {
		t.Fatalf("NewBundled: %v", err)
	}
	env.store, env.h = st, h
	env.srv.Config.Handler = env.record(h)
	env.srv.Start()
	t.Cleanup(env.srv.Close)
	return env
}

// files lists the regular files under dir (objects and temp files alike).
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk %s: %v", dir, err)
	}
	return out
}

// s3ErrorResponse is the XML error body as a client parses it.
type s3ErrorResponse struct {
	XMLName      xml.Name `xml:"Error"`
	Code         string
	Message      string
	Method       string
	ResourceType string
	Resource     string
	RequestID    string `xml:"RequestId"`
}

// wantS3Error checks an answer is the S3 error code with status.
func wantS3Error(t *testing.T, resp *http.Response, status int, code string) s3ErrorResponse {
	t.Helper()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != status {
		t.Fatalf("status = %d, want %d (body %s)", resp.StatusCode, status, body)
	}
	var e s3ErrorResponse
	if err := xml.Unmarshal(body, &e); err != nil {
		t.Fatalf("error body %q is not S3 XML: %v", body, err)
	}
	if e.Code != code {
		t.Fatalf("code = %q, want %q (message %q)", e.Code, code, e.Message)
	}
	if e.RequestID == "" || e.RequestID != resp.Header.Get("x-amz-request-id") || e.Resource == "" {
		t.Fatalf("error body %+v lacks request id / resource", e)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/xml") {
		t.Fatalf("Content-Type = %q, want application/xml", ct)
	}
	return e
}

// do sends a request and fails the test on a transport error.
func do(t *testing.T, req *http.Request) *http.Response {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}
