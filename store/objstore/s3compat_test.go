package objstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// A presigned PUT may carry an x-amz-content-sha256 header the URL does not
// sign, as AWS S3 allows and several SDKs send: UNSIGNED-PAYLOAD or the
// body's hex SHA-256 is accepted, a wrong hash is refused and stores
// nothing.
func TestPresignedPutContentSHA256(t *testing.T) {
	cases := []struct {
		name        string
		payload     string // x-amz-content-sha256 header; "" sends none
		contentType string
		body        string
		chunked     bool // hide the length: no Content-Length
		status      int
		code        string // S3 error code when refused
	}{
		{name: "no header", body: testCSV, status: http.StatusOK},
		{name: "unsigned payload", payload: unsignedPayload, body: testCSV, status: http.StatusOK},
		{name: "right hash", payload: sha256Hex(testCSV), body: testCSV, status: http.StatusOK},
		{name: "right hash chunked", payload: sha256Hex(testCSV), body: testCSV, chunked: true, status: http.StatusOK},
		{name: "empty body with its hash", payload: emptySHA256, body: "", status: http.StatusOK},
		{name: "wrong hash", payload: sha256Hex("something else"), body: testCSV,
			status: http.StatusBadRequest, code: "XAmzContentSHA256Mismatch"},
		{name: "wrong hash chunked", payload: sha256Hex("something else"), body: testCSV, chunked: true,
			status: http.StatusBadRequest, code: "XAmzContentSHA256Mismatch"},
		{name: "hash of the empty body", payload: emptySHA256, body: testCSV,
			status: http.StatusBadRequest, code: "XAmzContentSHA256Mismatch"},
		{name: "upper-case hash", payload: strings.ToUpper(sha256Hex(testCSV)), body: testCSV,
			status: http.StatusBadRequest, code: "InvalidArgument"},
		{name: "not a hash", payload: "abc", body: testCSV, status: http.StatusBadRequest, code: "InvalidArgument"},
		{name: "unsigned streaming trailer", payload: "STREAMING-UNSIGNED-PAYLOAD-TRAILER", body: testCSV,
			status: http.StatusNotImplemented, code: "NotImplemented"},
		{name: "signed streaming on a presigned URL", payload: streamingPayload, body: testCSV,
			status: http.StatusBadRequest, code: "InvalidRequest"},
		{name: "right hash, content type with a charset", payload: sha256Hex(testCSV), contentType: "text/csv; charset=utf-8",
			body: testCSV, status: http.StatusForbidden, code: "SignatureDoesNotMatch"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := newBundledEnv(t, 0)
			const key = "campaigns/4/sha.csv"
			u := presignedPut(t, env, key, 1000, time.Minute)
			var body io.Reader = strings.NewReader(tc.body)
			if tc.chunked {
				body = hideLength{body}
			}
			req, err := http.NewRequest(http.MethodPut, u, body)
			if err != nil {
				t.Fatalf("new request: %v", err)
			}
			req.Header.Set("Content-Type", "text/csv")
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			if tc.payload != "" {
				req.Header.Set("X-Amz-Content-Sha256", tc.payload)
			}
			resp := do(t, req)
			if tc.code != "" {
				wantS3Error(t, resp, tc.status, tc.code)
				if got := files(t, env.dir); len(got) != 0 {
					t.Fatalf("files after refused upload: %v", got)
				}
				return
			}
			if resp.StatusCode != tc.status {
				b, _ := io.ReadAll(resp.Body)
				t.Fatalf("status = %d, want %d (%s)", resp.StatusCode, tc.status, b)
			}
			if got := readObject(t, env.store, key); got != tc.body {
				t.Fatalf("object = %q, want %q", got, tc.body)
			}
		})
	}
}

// A refused hash leaves the object already under the key as it was.
func TestPresignedPutHashMismatchKeepsPrevious(t *testing.T) {
	env := newBundledEnv(t, 0)
	const key = "campaigns/4/keep.csv"
	u := presignedPut(t, env, key, 1000, time.Minute)
	if resp := plainPut(t, u, "text/csv", strings.NewReader(testCSV)); resp.StatusCode != http.StatusOK {
		t.Fatalf("first PUT status = %d, want %d", resp.StatusCode, http.StatusOK)
	}
	req, _ := http.NewRequest(http.MethodPut, u, strings.NewReader("phone_number\n"))
	req.Header.Set("Content-Type", "text/csv")
	req.Header.Set("X-Amz-Content-Sha256", sha256Hex(testCSV))
	wantS3Error(t, do(t, req), http.StatusBadRequest, "XAmzContentSHA256Mismatch")
	if got := readObject(t, env.store, key); got != testCSV {
		t.Fatalf("object = %q, want the previous one", got)
	}
	if got := files(t, env.dir); len(got) != 1 {
		t.Fatalf("files = %v, want only the object", got)
	}
}

// A URL presigned with the hash header signs its value (minio-go and
// aws-sdk-go v1 do so): the body must have that hash, and the header can
// be neither changed nor left out.
func TestPresignedPutSignedContentSHA256(t *testing.T) {
	env := newBundledEnv(t, 0)
	const key = "campaigns/4/signed-hash.csv"
	hash := sha256Hex(testCSV)
	signed, err := env.store.client.PresignHeader(context.Background(), http.MethodPut, BundledBucket, key, time.Minute, nil,
		http.Header{"Content-Type": {"text/csv"}, "X-Amz-Content-Sha256": {hash}})
	if err != nil {
		t.Fatalf("presign: %v", err)
	}
	if sh := signed.Query().Get("X-Amz-SignedHeaders"); !strings.Contains(sh, "x-amz-content-sha256") {
		t.Fatalf("X-Amz-SignedHeaders = %q, want x-amz-content-sha256 signed", sh)
	}
	cases := []struct {
		name    string
		payload string // "" sends no header
		body    string
		status  int
		code    string
	}{
		{"other body", hash, "phone_number\n", http.StatusBadRequest, "XAmzContentSHA256Mismatch"},
		{"header changed", unsignedPayload, testCSV, http.StatusForbidden, "SignatureDoesNotMatch"},
		{"header left out", "", testCSV, http.StatusForbidden, "SignatureDoesNotMatch"},
		{"the signed body", hash, testCSV, http.StatusOK, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPut, signed.String(), strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "text/csv")
			if tc.payload != "" {
				req.Header.Set("X-Amz-Content-Sha256", tc.payload)
			}
			resp := do(t, req)
			if tc.code != "" {
				wantS3Error(t, resp, tc.status, tc.code)
				if _, err := env.store.Open(context.Background(), key); !errors.Is(err, ErrNotFound) {
					t.Fatalf("Open after refused upload: %v, want ErrNotFound", err)
				}
				return
			}
			if resp.StatusCode != tc.status {
				t.Fatalf("status = %d, want %d", resp.StatusCode, tc.status)
			}
			if got := readObject(t, env.store, key); got != testCSV {
				t.Fatalf("object = %q, want %q", got, testCSV)
			}
		})
	}
}

// Every request under the bucket path, bucket-level or not, answers an S3
// XML error with a code: anonymous calls AccessDenied, unknown methods
// MethodNotAllowed, missing keys NoSuchKey. HEAD answers carry no body.
func TestBucketPathErrors(t *testing.T) {
	env := newBundledEnv(t, 0)
	ctx := context.Background()
	presignedGet, err := env.store.client.PresignedGetObject(ctx, BundledBucket, "campaigns/1/missing.csv", time.Minute, nil)
	if err != nil {
		t.Fatalf("presign get: %v", err)
	}
	presignedHead, err := env.store.client.PresignedHeadObject(ctx, BundledBucket, "campaigns/1/missing.csv", time.Minute, nil)
	if err != nil {
		t.Fatalf("presign head: %v", err)
	}
	plain := func(method, path string) func() *http.Response {
		return func() *http.Response { return do(t, mustRequest(t, method, env.srv.URL+path)) }
	}
	signed := func(method, path string) func() *http.Response {
		return func() *http.Response { return headerSigned(t, env, method, path, nil, emptySHA256, nil) }
	}
	cases := []struct {
		name   string
		send   func() *http.Response
		status int
		code   string // checked in the body; HEAD answers have none
		allow  string // Allow header of a 405
	}{
		{"anonymous head of the bucket", plain(http.MethodHead, "/outdial"), http.StatusForbidden, "", ""},
		{"anonymous head of the bucket with slash", plain(http.MethodHead, "/outdial/"), http.StatusForbidden, "", ""},
		{"anonymous list v2", plain(http.MethodGet, "/outdial?list-type=2"), http.StatusForbidden, "AccessDenied", ""},
		{"anonymous list v2 with slash", plain(http.MethodGet, "/outdial/?list-type=2&prefix=campaigns/"), http.StatusForbidden, "AccessDenied", ""},
		{"anonymous list v1", plain(http.MethodGet, "/outdial/"), http.StatusForbidden, "AccessDenied", ""},
		{"anonymous location", plain(http.MethodGet, "/outdial?location"), http.StatusForbidden, "AccessDenied", ""},
		{"anonymous get of a missing key", plain(http.MethodGet, "/outdial/campaigns/1/missing.csv"), http.StatusForbidden, "AccessDenied", ""},
		{"anonymous delete of the bucket", plain(http.MethodDelete, "/outdial"), http.StatusForbidden, "AccessDenied", ""},
		{"anonymous delete of a key", plain(http.MethodDelete, "/outdial/campaigns/1/x.csv"), http.StatusForbidden, "AccessDenied", ""},
		{"anonymous post to the bucket", plain(http.MethodPost, "/outdial/"), http.StatusForbidden, "AccessDenied", ""},
		{"anonymous multi-delete", plain(http.MethodPost, "/outdial?delete"), http.StatusForbidden, "AccessDenied", ""},
		{"patch of a key", plain(http.MethodPatch, "/outdial/campaigns/1/x.csv"), http.StatusMethodNotAllowed, "MethodNotAllowed", "DELETE, GET, HEAD, PUT"},
		{"options of the bucket", plain(http.MethodOptions, "/outdial"), http.StatusMethodNotAllowed, "MethodNotAllowed", "GET, HEAD, PUT"},
		{"trace of the bucket", plain(http.MethodTrace, "/outdial/"), http.StatusMethodNotAllowed, "MethodNotAllowed", "GET, HEAD, PUT"},
		{"signed list v2", signed(http.MethodGet, "/outdial/?list-type=2"), http.StatusNotImplemented, "NotImplemented", ""},
		{"signed delete of the bucket", signed(http.MethodDelete, "/outdial/"), http.StatusMethodNotAllowed, "MethodNotAllowed", "GET, HEAD, PUT"},
		{"signed post to the bucket", signed(http.MethodPost, "/outdial"), http.StatusNotImplemented, "NotImplemented", ""},
		{"signed get of a missing key", signed(http.MethodGet, "/outdial/campaigns/1/missing.csv"), http.StatusNotFound, "NoSuchKey", ""},
		{"signed head of a missing key", signed(http.MethodHead, "/outdial/campaigns/1/missing.csv"), http.StatusNotFound, "", ""},
		{"presigned get of a missing key", func() *http.Response { return do(t, mustRequest(t, http.MethodGet, presignedGet.String())) }, http.StatusNotFound, "NoSuchKey", ""},
		{"presigned head of a missing key", func() *http.Response { return do(t, mustRequest(t, http.MethodHead, presignedHead.String())) }, http.StatusNotFound, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := tc.send()
			if got := resp.Header.Get("Allow"); got != tc.allow {
				t.Fatalf("Allow = %q, want %q", got, tc.allow)
			}
			if tc.code != "" {
				e := wantS3Error(t, resp, tc.status, tc.code)
				if tc.status == http.StatusMethodNotAllowed && (e.Method != resp.Request.Method || e.ResourceType == "") {
					t.Fatalf("MethodNotAllowed body %+v lacks Method / ResourceType", e)
				}
				return
			}
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status || len(body) != 0 || resp.Header.Get("x-amz-request-id") == "" {
				t.Fatalf("HEAD = %d, body %q, request id %q; want %d, no body, a request id",
					resp.StatusCode, body, resp.Header.Get("x-amz-request-id"), tc.status)
			}
		})
	}
	if got := files(t, env.dir); len(got) != 0 {
		t.Fatalf("files = %v, want none", got)
	}
}
