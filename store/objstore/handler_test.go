package objstore

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7/pkg/signer"
)

const testCSV = "phone_number,first_name\n+14155550100,Ada\n+14155550101,Grace\n"

// presignedPut returns a presigned upload URL of env's store.
func presignedPut(t *testing.T, env *bundledEnv, key string, maxSize int64, expires time.Duration) string {
	t.Helper()
	u, err := env.store.PresignPut(context.Background(), key, "text/csv", maxSize, expires)
	if err != nil {
		t.Fatalf("PresignPut: %v", err)
	}
	return u
}

// plainPut is what a browser-less client does with an upload URL.
func plainPut(t *testing.T, url, contentType string, body io.Reader) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, url, body)
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return do(t, req)
}

func readObject(t *testing.T, st *Store, key string) string {
	t.Helper()
	rc, err := st.Open(context.Background(), key)
	if err != nil {
		t.Fatalf("Open(%q): %v", key, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("read %q: %v", key, err)
	}
	return string(b)
}

// The whole client flow: presign, plain PUT with text/csv, read back.
func TestPresignedUploadFlow(t *testing.T) {
	env := newBundledEnv(t, 0)
	ctx := context.Background()
	for _, key := range vectorKeys {
		t.Run(key, func(t *testing.T) {
			u := presignedPut(t, env, key, int64(len(testCSV)), 15*time.Minute)
			if !strings.HasPrefix(u, env.srv.URL+PathPrefix) || !strings.Contains(u, MaxSizeParam+"=") {
				t.Fatalf("upload URL %q is not a path-style URL on the service carrying %s", u, MaxSizeParam)
			}
			resp := plainPut(t, u, "text/csv", strings.NewReader(testCSV))
			if resp.StatusCode != http.StatusOK {
				body, _ := io.ReadAll(resp.Body)
				t.Fatalf("status = %d, want %d (%s)", resp.StatusCode, http.StatusOK, body)
			}
			if got := readObject(t, env.store, key); got != testCSV {
				t.Fatalf("object = %q, want %q", got, testCSV)
			}
			info, err := env.store.Stat(ctx, key)
			if err != nil {
				t.Fatalf("Stat: %v", err)
			}
			if info.Size != int64(len(testCSV)) || info.ContentType != "text/csv" || info.Key != key {
				t.Fatalf("Stat = %+v", info)
			}
			if etag := strings.Trim(resp.Header.Get("ETag"), `"`); etag != info.ETag || len(etag) != 32 {
				t.Fatalf("ETag = %q, Stat ETag %q", etag, info.ETag)
			}
		})
	}
}

// Each refused upload answers the S3 error and stores nothing.
func TestPresignedUploadRefused(t *testing.T) {
	env := newBundledEnv(t, 0)
	const key = "campaigns/7/refused.csv"
	valid := func() string { return presignedPut(t, env, key, int64(len(testCSV)), 15*time.Minute) }

	cases := []struct {
		name        string
		url         func() string
		contentType string
		clock       time.Duration
		status      int
		code        string
	}{
		{"expired", valid, "text/csv", 15*time.Minute + time.Second, http.StatusForbidden, "AccessDenied"},
		{"wrong content type", valid, "application/json", 0, http.StatusForbidden, "SignatureDoesNotMatch"},
		{"no content type", valid, "", 0, http.StatusForbidden, "SignatureDoesNotMatch"},
		{"tampered key", func() string { return strings.Replace(valid(), "refused", "other", 1) }, "text/csv", 0, http.StatusForbidden, "SignatureDoesNotMatch"},
		{"tampered size", func() string {
			return strings.Replace(valid(), MaxSizeParam+"=", MaxSizeParam+"=9", 1)
		}, "text/csv", 0, http.StatusForbidden, "SignatureDoesNotMatch"},
		{"unsigned", func() string { return env.srv.URL + PathPrefix + key }, "text/csv", 0, http.StatusForbidden, "AccessDenied"},
		{"other bucket", func() string {
			u, err := env.store.client.PresignHeader(context.Background(), http.MethodPut, "elsewhere", key, time.Minute, nil, http.Header{"Content-Type": {"text/csv"}})
			if err != nil {
				t.Fatalf("presign: %v", err)
			}
			return u.String()
		}, "text/csv", 0, http.StatusNotFound, "NoSuchBucket"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u := tc.url()
			env.clock.set(tc.clock)
			defer env.clock.set(0)
			e := wantS3Error(t, plainPut(t, u, tc.contentType, strings.NewReader(testCSV)), tc.status, tc.code)
			if tc.name == "expired" && e.Message != "Request has expired" {
				t.Fatalf("message = %q, want Request has expired", e.Message)
			}
			if got := files(t, env.dir); len(got) != 0 {
				t.Fatalf("files after refused upload: %v", got)
			}
			if _, err := env.store.Open(context.Background(), key); !errors.Is(err, ErrNotFound) {
				t.Fatalf("Open after refused upload: %v, want ErrNotFound", err)
			}
		})
	}
}

// hideLength hides a reader's length from net/http, forcing a chunked body.
type hideLength struct{ io.Reader }

func TestUploadOverDeclaredSize(t *testing.T) {
	env := newBundledEnv(t, 0)
	const key = "campaigns/1/big.csv"
	u := presignedPut(t, env, key, 10, time.Minute)

	t.Run("content length", func(t *testing.T) {
		wantS3Error(t, plainPut(t, u, "text/csv", strings.NewReader(strings.Repeat("x", 11))), http.StatusBadRequest, "EntityTooLarge")
	})
	t.Run("chunked", func(t *testing.T) {
		// The handler refuses while reading; the client may see the 400
		// or a broken pipe, depending on timing. Either way nothing stays.
		body := hideLength{bytes.NewReader(bytes.Repeat([]byte("y"), 1<<20))}
		req, _ := http.NewRequest(http.MethodPut, u, body)
		req.Header.Set("Content-Type", "text/csv")
		if resp, err := http.DefaultClient.Do(req); err == nil {
			wantS3Error(t, resp, http.StatusBadRequest, "EntityTooLarge")
			_ = resp.Body.Close()
		}
	})
	t.Run("exactly the size", func(t *testing.T) {
		resp := plainPut(t, u, "text/csv", hideLength{strings.NewReader("0123456789")})
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status = %d, want %d", resp.StatusCode, http.StatusOK)
		}
		if got := readObject(t, env.store, key); got != "0123456789" {
			t.Fatalf("object = %q", got)
		}
	})
	t.Run("overflow keeps the previous object", func(t *testing.T) {
		wantS3Error(t, plainPut(t, u, "text/csv", strings.NewReader("0123456789A")), http.StatusBadRequest, "EntityTooLarge")
		if got := readObject(t, env.store, key); got != "0123456789" {
			t.Fatalf("object = %q, want the previous one", got)
		}
		if got := files(t, env.dir); len(got) != 1 {
			t.Fatalf("files = %v, want only the object", got)
		}
	})
}

func TestUploadOverHandlerCap(t *testing.T) {
	env := newBundledEnv(t, 5)
	u := presignedPut(t, env, "campaigns/1/capped.csv", 100, time.Minute)
	wantS3Error(t, plainPut(t, u, "text/csv", strings.NewReader("123456")), http.StatusBadRequest, "EntityTooLarge")
	if got := files(t, env.dir); len(got) != 0 {
		t.Fatalf("files = %v, want none", got)
	}
}

// failingBody yields some bytes, then the error of a vanished client.
type failingBody struct{ n int }

func (f *failingBody) Read(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, io.ErrUnexpectedEOF
	}
	n := min(len(p), f.n)
	for i := range p[:n] {
		p[i] = 'z'
	}
	f.n -= n
	return n, nil
}

func TestClientGoneMidUploadLeavesNothing(t *testing.T) {
	env := newBundledEnv(t, 0)
	signed, err := env.store.PresignPut(context.Background(), "campaigns/2/partial.csv", "text/csv", 1<<20, time.Minute)
	if err != nil {
		t.Fatalf("PresignPut: %v", err)
	}
	for _, length := range []int64{1 << 20, -1} {
		r := httptest.NewRequest(http.MethodPut, signed, &failingBody{n: 100_000})
		r.ContentLength = length
		r.Header.Set("Content-Type", "text/csv")
		w := httptest.NewRecorder()
		env.h.ServeHTTP(w, r)
		if w.Code != http.StatusBadRequest {
			t.Fatalf("status = %d, want %d", w.Code, http.StatusBadRequest)
		}
		if got := files(t, env.dir); len(got) != 0 {
			t.Fatalf("files after broken upload: %v", got)
		}
	}
}

// headerSigned sends a request signed in the Authorization header form.
func headerSigned(t *testing.T, env *bundledEnv, method, path string, body []byte, payload string, header http.Header) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, env.srv.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	req.Header.Set("X-Amz-Content-Sha256", payload)
	return do(t, signer.SignV4(*req, testAccessKey, testSecretKey, "", DefaultRegion))
}

func TestPayloadHashMismatchStoresNothing(t *testing.T) {
	env := newBundledEnv(t, 0)
	// The signed hash is the empty body's; the body is not empty.
	resp := headerSigned(t, env, http.MethodPut, PathPrefix+"campaigns/1/hash.csv", []byte(testCSV), emptySHA256,
		http.Header{"Content-Type": {"text/csv"}})
	wantS3Error(t, resp, http.StatusBadRequest, "XAmzContentSHA256Mismatch")
	if got := files(t, env.dir); len(got) != 0 {
		t.Fatalf("files = %v, want none", got)
	}
	// A wrong Content-MD5 is refused too.
	resp = headerSigned(t, env, http.MethodPut, PathPrefix+"campaigns/1/md5.csv", []byte(testCSV), unsignedPayload,
		http.Header{"Content-Md5": {"1B2M2Y8AsgTpgAmY7PhCfg=="}})
	wantS3Error(t, resp, http.StatusBadRequest, "BadDigest")
	if got := files(t, env.dir); len(got) != 0 {
		t.Fatalf("files = %v, want none", got)
	}
}

func TestPathTraversalRefused(t *testing.T) {
	env := newBundledEnv(t, 0)
	for _, path := range []string{
		"/outdial/../etc/passwd",
		"/outdial/campaigns/../../x",
		"/outdial/campaigns/./x",
		"/outdial/..",
		"/outdial//etc/passwd",
		"/outdial/nul%00byte",
		"/outdial/ctl%0Aline",
		"/outdial/tab%09",
	} {
		t.Run(path, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPut, path, strings.NewReader("x"))
			req.Host = env.srv.Listener.Addr().String()
			req.Header.Set("X-Amz-Content-Sha256", unsignedPayload)
			signed := signer.SignV4(*req, testAccessKey, testSecretKey, "", DefaultRegion)
			w := httptest.NewRecorder()
			env.h.ServeHTTP(w, signed)
			wantS3Error(t, w.Result(), http.StatusBadRequest, "InvalidArgument")
		})
	}
	if got := files(t, env.dir); len(got) != 0 {
		t.Fatalf("files = %v, want none", got)
	}
}

func TestKeyTooLong(t *testing.T) {
	env := newBundledEnv(t, 0)
	resp := headerSigned(t, env, http.MethodGet, PathPrefix+strings.Repeat("k", maxKeyLen+1), nil, emptySHA256, nil)
	wantS3Error(t, resp, http.StatusBadRequest, "KeyTooLongError")
}

func TestObjectMethods(t *testing.T) {
	env := newBundledEnv(t, 0)
	const path = PathPrefix + "campaigns/5/range test.csv"
	escaped := PathPrefix + "campaigns/5/range%20test.csv"
	if resp := headerSigned(t, env, http.MethodPut, escaped, []byte(testCSV), unsignedPayload, http.Header{"Content-Type": {"text/csv"}}); resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT status = %d", resp.StatusCode)
	}

	t.Run("get range", func(t *testing.T) {
		resp := headerSigned(t, env, http.MethodGet, escaped, nil, emptySHA256, http.Header{"Range": {"bytes=13-24"}})
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusPartialContent || string(body) != testCSV[13:25] {
			t.Fatalf("status = %d body %q, want %d %q", resp.StatusCode, body, http.StatusPartialContent, testCSV[13:25])
		}
		if cr := resp.Header.Get("Content-Range"); cr != "bytes 13-24/"+strconv.Itoa(len(testCSV)) {
			t.Fatalf("Content-Range = %q", cr)
		}
	})
	t.Run("get suffix range", func(t *testing.T) {
		resp := headerSigned(t, env, http.MethodGet, escaped, nil, emptySHA256, http.Header{"Range": {"bytes=-6"}})
		body, _ := io.ReadAll(resp.Body)
		if string(body) != testCSV[len(testCSV)-6:] {
			t.Fatalf("body = %q", body)
		}
	})
	t.Run("unsatisfiable range", func(t *testing.T) {
		resp := headerSigned(t, env, http.MethodGet, escaped, nil, emptySHA256, http.Header{"Range": {"bytes=5000-"}})
		wantS3Error(t, resp, http.StatusRequestedRangeNotSatisfiable, "InvalidRange")
	})
	t.Run("presigned get", func(t *testing.T) {
		u, err := env.store.client.PresignedGetObject(context.Background(), BundledBucket, "campaigns/5/range test.csv", time.Minute, nil)
		if err != nil {
			t.Fatalf("presign get: %v", err)
		}
		resp := do(t, mustRequest(t, http.MethodGet, u.String()))
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || string(body) != testCSV || resp.Header.Get("Content-Type") != "text/csv" {
			t.Fatalf("status = %d, type %q, body %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
	})
	t.Run("head", func(t *testing.T) {
		resp := headerSigned(t, env, http.MethodHead, escaped, nil, emptySHA256, nil)
		if resp.StatusCode != http.StatusOK || resp.ContentLength != int64(len(testCSV)) ||
			resp.Header.Get("ETag") == "" || resp.Header.Get("Last-Modified") == "" {
			t.Fatalf("HEAD = %d, length %d, headers %v", resp.StatusCode, resp.ContentLength, resp.Header)
		}
	})
	t.Run("method not allowed", func(t *testing.T) {
		wantS3Error(t, headerSigned(t, env, http.MethodPatch, escaped, nil, emptySHA256, nil), http.StatusMethodNotAllowed, "MethodNotAllowed")
	})
	t.Run("multipart not implemented", func(t *testing.T) {
		wantS3Error(t, headerSigned(t, env, http.MethodPost, escaped+"?uploads", nil, emptySHA256, nil), http.StatusNotImplemented, "NotImplemented")
	})
	t.Run("delete", func(t *testing.T) {
		if resp := headerSigned(t, env, http.MethodDelete, escaped, nil, emptySHA256, nil); resp.StatusCode != http.StatusNoContent {
			t.Fatalf("DELETE status = %d, want %d", resp.StatusCode, http.StatusNoContent)
		}
		e := wantS3Error(t, headerSigned(t, env, http.MethodGet, escaped, nil, emptySHA256, nil), http.StatusNotFound, "NoSuchKey")
		if e.Resource != path {
			t.Fatalf("Resource = %q, want %q", e.Resource, path)
		}
		if resp := headerSigned(t, env, http.MethodHead, escaped, nil, emptySHA256, nil); resp.StatusCode != http.StatusNotFound {
			t.Fatalf("HEAD after delete = %d, want 404", resp.StatusCode)
		}
		if resp := headerSigned(t, env, http.MethodDelete, escaped, nil, emptySHA256, nil); resp.StatusCode != http.StatusNoContent {
			t.Fatalf("second DELETE status = %d, want %d", resp.StatusCode, http.StatusNoContent)
		}
		if got := files(t, env.dir); len(got) != 0 {
			t.Fatalf("files = %v, want none", got)
		}
	})
	t.Run("bucket", func(t *testing.T) {
		if resp := headerSigned(t, env, http.MethodHead, PathPrefix, nil, emptySHA256, nil); resp.StatusCode != http.StatusOK {
			t.Fatalf("HEAD bucket = %d", resp.StatusCode)
		}
		resp := headerSigned(t, env, http.MethodGet, PathPrefix+"?location=", nil, emptySHA256, nil)
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), ">"+DefaultRegion+"</LocationConstraint>") {
			t.Fatalf("GET ?location = %d %s", resp.StatusCode, body)
		}
		wantS3Error(t, headerSigned(t, env, http.MethodGet, "/elsewhere/", nil, emptySHA256, nil), http.StatusNotFound, "NoSuchBucket")
	})
}

func mustRequest(t *testing.T, method, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	return req
}
