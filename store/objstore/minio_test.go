package objstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"hash"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/signer"
)

func minioClient(t *testing.T, env *bundledEnv, region string) *minio.Client {
	t.Helper()
	c, err := minio.New(env.srv.Listener.Addr().String(), &minio.Options{
		Creds:        credentials.NewStaticV4(testAccessKey, testSecretKey, ""),
		Secure:       false,
		Region:       region,
		BucketLookup: minio.BucketLookupPath,
	})
	if err != nil {
		t.Fatalf("minio.New: %v", err)
	}
	return c
}

// minio-go's own calls work against the bundled endpoint: over plain http
// PutObject uses the streaming (aws-chunked) signature, the others the
// header form with the empty payload's hash.
func TestMinioClientAgainstBundled(t *testing.T) {
	env := newBundledEnv(t, 0)
	ctx := context.Background()
	// No region: minio-go asks the bucket location first (GET ?location).
	for _, region := range []string{DefaultRegion, ""} {
		c := minioClient(t, env, region)
		ok, err := c.BucketExists(ctx, BundledBucket)
		if err != nil || !ok {
			t.Fatalf("BucketExists = %v, %v", ok, err)
		}
		if ok, err := c.BucketExists(ctx, "elsewhere"); err != nil || ok {
			t.Fatalf("BucketExists(elsewhere) = %v, %v", ok, err)
		}
	}
	c := minioClient(t, env, DefaultRegion)
	if got, want := env.forms(), []string{
		"HEAD header empty-sha256", "HEAD header empty-sha256", // with region
		"GET header empty-sha256", "HEAD header empty-sha256", // location first
		"GET header empty-sha256", // location of a missing bucket: NoSuchBucket
	}; !slices.Equal(got, want) {
		t.Fatalf("bucket calls signed as %q, want %q", got, want)
	}

	// Several chunks (64 KiB each) and a partial last one.
	big := bytes.Repeat([]byte("0123456789abcdef"), 10_000)
	for _, key := range append(vectorKeys, "campaigns/9/big.bin") {
		body := []byte(testCSV)
		if strings.HasSuffix(key, ".bin") {
			body = big
		}
		if _, err := c.PutObject(ctx, BundledBucket, key, bytes.NewReader(body), int64(len(body)), minio.PutObjectOptions{ContentType: "text/csv"}); err != nil {
			t.Fatalf("PutObject(%q): %v", key, err)
		}
		info, err := c.StatObject(ctx, BundledBucket, key, minio.StatObjectOptions{})
		if err != nil || info.Size != int64(len(body)) || info.ContentType != "text/csv" {
			t.Fatalf("StatObject(%q) = %+v, %v", key, info, err)
		}
		obj, err := c.GetObject(ctx, BundledBucket, key, minio.GetObjectOptions{})
		if err != nil {
			t.Fatalf("GetObject: %v", err)
		}
		got, err := io.ReadAll(obj)
		_ = obj.Close()
		if err != nil || !bytes.Equal(got, body) {
			t.Fatalf("GetObject(%q) read %d bytes, err %v", key, len(got), err)
		}
		if got := readObject(t, env.store, key); got != string(body) {
			t.Fatalf("Store.Open(%q) differs", key)
		}
	}
	// minio-go over http: PutObject streams aws-chunked; Stat and Get sign
	// the empty payload in the header form.
	seen := env.forms()[5:8]
	if want := []string{"PUT header " + streamingPayload, "HEAD header empty-sha256", "GET header empty-sha256"}; !slices.Equal(seen, want) {
		t.Fatalf("object calls signed as %q, want %q", seen, want)
	}

	opts := minio.GetObjectOptions{}
	if err := opts.SetRange(160_000-7, 0); err != nil {
		t.Fatalf("SetRange: %v", err)
	}
	obj, err := c.GetObject(ctx, BundledBucket, "campaigns/9/big.bin", opts)
	if err != nil {
		t.Fatalf("GetObject range: %v", err)
	}
	tail, _ := io.ReadAll(obj)
	_ = obj.Close()
	if string(tail) != string(big[len(big)-7:]) {
		t.Fatalf("range read %q", tail)
	}

	if err := c.RemoveObject(ctx, BundledBucket, "campaigns/9/big.bin", minio.RemoveObjectOptions{}); err != nil {
		t.Fatalf("RemoveObject: %v", err)
	}
	_, err = c.StatObject(ctx, BundledBucket, "campaigns/9/big.bin", minio.StatObjectOptions{})
	if minio.ToErrorResponse(err).Code != minio.NoSuchKey {
		t.Fatalf("StatObject after remove: %v, want NoSuchKey", err)
	}

	other, err := minio.New(env.srv.Listener.Addr().String(), &minio.Options{
		Creds: credentials.NewStaticV4(testAccessKey, "wrong", ""), Region: DefaultRegion, BucketLookup: minio.BucketLookupPath,
	})
	if err != nil {
		t.Fatalf("minio.New: %v", err)
	}
	if _, err := other.StatObject(ctx, BundledBucket, vectorKeys[0], minio.StatObjectOptions{}); err == nil {
		t.Fatal("StatObject with a wrong secret succeeded")
	}
	_, err = other.PutObject(ctx, BundledBucket, "campaigns/9/x.csv", strings.NewReader(testCSV), int64(len(testCSV)), minio.PutObjectOptions{})
	if minio.ToErrorResponse(err).Code != "SignatureDoesNotMatch" {
		t.Fatalf("PutObject with a wrong secret: %v, want SignatureDoesNotMatch", err)
	}
}

// The remote-mode Store works against any S3 service; the bundled
// endpoint is one.
func TestRemoteStoreAgainstBundled(t *testing.T) {
	env := newBundledEnv(t, 0)
	ctx := context.Background()
	st, err := NewRemote(ctx, RemoteConfig{
		Endpoint: env.srv.Listener.Addr().String(), Bucket: BundledBucket,
		AccessKey: testAccessKey, SecretKey: testSecretKey, Insecure: true,
	})
	if err != nil {
		t.Fatalf("NewRemote: %v", err)
	}
	if st.Bundled() || st.Bucket() != BundledBucket {
		t.Fatalf("Bundled() = %v, Bucket() = %q", st.Bundled(), st.Bucket())
	}
	exerciseStore(t, st)
}

// exerciseStore runs the service's use of a Store: presign, plain PUT,
// Open, Stat, not-found, Put, Delete.
func exerciseStore(t *testing.T, st *Store) {
	t.Helper()
	ctx := context.Background()
	key := "campaigns/11/4f1c-uuid_my contacts+ü.csv"
	u, err := st.PresignPut(ctx, key, "text/csv", int64(len(testCSV)), 15*time.Minute)
	if err != nil {
		t.Fatalf("PresignPut: %v", err)
	}
	req, _ := http.NewRequest(http.MethodPut, u, strings.NewReader(testCSV))
	req.Header.Set("Content-Type", "text/csv")
	resp := do(t, req)
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("PUT status = %d, want %d: %s", resp.StatusCode, http.StatusOK, body)
	}
	if got := readObject(t, st, key); got != testCSV {
		t.Fatalf("object = %q, want %q", got, testCSV)
	}
	info, err := st.Stat(ctx, key)
	if err != nil || info.Size != int64(len(testCSV)) || info.ContentType != "text/csv" {
		t.Fatalf("Stat = %+v, %v", info, err)
	}
	if _, err := st.Open(ctx, "campaigns/11/missing.csv"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Open(missing) = %v, want ErrNotFound", err)
	}
	if _, err := st.Stat(ctx, "campaigns/11/missing.csv"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Stat(missing) = %v, want ErrNotFound", err)
	}
	if _, err := st.Put(ctx, "campaigns/11/seeded.csv", "text/csv", strings.NewReader("a\n"), 2); err != nil {
		t.Fatalf("Put: %v", err)
	}
	if got := readObject(t, st, "campaigns/11/seeded.csv"); got != "a\n" {
		t.Fatalf("seeded object = %q", got)
	}
	for _, k := range []string{key, "campaigns/11/seeded.csv", "campaigns/11/missing.csv"} {
		if err := st.Delete(ctx, k); err != nil {
			t.Fatalf("Delete(%q): %v", k, err)
		}
	}
	if _, err := st.Open(ctx, key); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Open after Delete = %v, want ErrNotFound", err)
	}
	if _, err := st.Open(ctx, "../escape"); !errors.Is(err, ErrInvalidKey) {
		t.Fatalf("Open(../escape) = %v, want ErrInvalidKey", err)
	}
}

func TestBundledStore(t *testing.T) {
	env := newBundledEnv(t, 0)
	if !env.store.Bundled() || env.store.Bucket() != BundledBucket {
		t.Fatalf("Bundled() = %v, Bucket() = %q", env.store.Bundled(), env.store.Bucket())
	}
	exerciseStore(t, env.store)
	if _, err := env.store.PresignPut(context.Background(), "k.csv", "text/csv", 0, time.Minute); err == nil {
		t.Fatal("PresignPut with max size 0 succeeded")
	}
	if _, err := env.store.Put(context.Background(), "k.csv", "text/csv", strings.NewReader("abc"), 2); err == nil {
		t.Fatal("Put of more bytes than declared succeeded")
	}
	if got := files(t, env.dir); len(got) != 0 {
		t.Fatalf("files = %v, want none", got)
	}
}

// sha256Hasher adapts crypto/sha256 to the hasher minio-go's streaming
// signer takes.
type sha256Hasher struct{ hash.Hash }

func (sha256Hasher) Close() {}

// streamingRequest signs body with minio-go's aws-chunked signer and
// returns the encoded body and headers, so tests can corrupt them.
func streamingRequest(t *testing.T, env *bundledEnv, key string, body []byte) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, env.srv.URL+PathPrefix+key, bytes.NewReader(body))
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	req.Header.Set("Content-Type", "text/csv")
	req = signer.StreamingSignV4(req, testAccessKey, testSecretKey, "", DefaultRegion, int64(len(body)), time.Now().UTC(), sha256Hasher{sha256.New()})
	encoded, err := io.ReadAll(req.Body)
	if err != nil {
		t.Fatalf("encode body: %v", err)
	}
	req.Body = io.NopCloser(bytes.NewReader(encoded))
	req.ContentLength = int64(len(encoded))
	return req
}

func TestStreamingUpload(t *testing.T) {
	body := bytes.Repeat([]byte("+14155550100,Ada\n"), 9000) // three chunks
	corrupt := func(at func([]byte) int) func(*http.Request) {
		return func(req *http.Request) {
			b, _ := io.ReadAll(req.Body)
			b[at(b)] ^= 1
			req.Body = io.NopCloser(bytes.NewReader(b))
		}
	}
	cases := []struct {
		name   string
		mutate func(*http.Request)
		status int
		code   string
	}{
		{"valid", nil, http.StatusOK, ""},
		{"flipped data byte", corrupt(func(b []byte) int { return 70_000 }), http.StatusForbidden, "SignatureDoesNotMatch"},
		{"flipped last chunk byte", corrupt(func(b []byte) int { return len(b) - 120 }), http.StatusForbidden, "SignatureDoesNotMatch"},
		{"flipped chunk signature", corrupt(func(b []byte) int { return bytes.Index(b, []byte("chunk-signature=")) + 20 }), http.StatusForbidden, "SignatureDoesNotMatch"},
		{"broken framing", corrupt(func(b []byte) int { return bytes.Index(b, []byte("\r\n")) }), http.StatusBadRequest, "IncompleteBody"},
		{"truncated", func(req *http.Request) {
			b, _ := io.ReadAll(req.Body)
			req.Body = io.NopCloser(bytes.NewReader(b[:len(b)-100]))
			req.ContentLength = int64(len(b) - 100)
		}, http.StatusBadRequest, "IncompleteBody"},
		{"decoded length lies", func(req *http.Request) {
			req.Header.Set("X-Amz-Decoded-Content-Length", "10")
		}, http.StatusForbidden, "SignatureDoesNotMatch"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := newBundledEnv(t, 0)
			req := streamingRequest(t, env, "campaigns/3/stream.csv", body)
			if tc.mutate != nil {
				tc.mutate(req)
			}
			resp := do(t, req)
			if tc.code == "" {
				if resp.StatusCode != tc.status {
					b, _ := io.ReadAll(resp.Body)
					t.Fatalf("status = %d, want %d: %s", resp.StatusCode, tc.status, b)
				}
				if got := readObject(t, env.store, "campaigns/3/stream.csv"); got != string(body) {
					t.Fatalf("object has %d bytes, want %d", len(got), len(body))
				}
				return
			}
			wantS3Error(t, resp, tc.status, tc.code)
			if got := files(t, env.dir); len(got) != 0 {
				t.Fatalf("files = %v, want none", got)
			}
		})
	}
}

func TestStreamingUploadOverPresignedCap(t *testing.T) {
	env := newBundledEnv(t, 1000)
	req := streamingRequest(t, env, "campaigns/3/stream.csv", bytes.Repeat([]byte("x"), 1001))
	wantS3Error(t, do(t, req), http.StatusBadRequest, "EntityTooLarge")
	if got := files(t, env.dir); len(got) != 0 {
		t.Fatalf("files = %v, want none", got)
	}
}
