package web_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestUploadContentSHA256 PUTs to upload URLs the way SDKs do, with an
// x-amz-content-sha256 header the URL does not sign: UNSIGNED-PAYLOAD or
// the body's hash is stored, a wrong hash is refused and stores nothing.
func TestUploadContentSHA256(t *testing.T) {
	t.Parallel()
	oe := newObjEnv(t, testMaxUpload)
	body := []byte("phone_number\n+14155550100\n")
	sum := sha256.Sum256(body)
	other := sha256.Sum256([]byte("another body"))
	tests := []struct {
		name    string
		payload string
		status  int
		code    string
	}{
		// Refusals first: wantNoObject wants an empty object directory.
		{"another body's hash", hex.EncodeToString(other[:]), http.StatusBadRequest, "XAmzContentSHA256Mismatch"},
		{"aws-chunked with a trailer", "STREAMING-UNSIGNED-PAYLOAD-TRAILER", http.StatusNotImplemented, "NotImplemented"},
		{"unsigned payload", "UNSIGNED-PAYLOAD", http.StatusOK, ""},
		{"the body's hash", hex.EncodeToString(sum[:]), http.StatusOK, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := oe.presign(oe.keyA, "contacts.csv", len(body))
			req, err := http.NewRequest(http.MethodPut, p.URL, bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "text/csv")
			req.Header.Set("X-Amz-Content-Sha256", tt.payload)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			raw, _ := io.ReadAll(res.Body)
			if tt.code != "" {
				wantS3Error(t, res.StatusCode, raw, tt.status, tt.code)
				oe.wantNoObject(p.Key)
				return
			}
			if res.StatusCode != tt.status {
				t.Fatalf("status = %d, want %d: %s", res.StatusCode, tt.status, raw)
			}
			if got := oe.object(p.Key); !bytes.Equal(got, body) {
				t.Fatalf("stored %q, want %q", got, body)
			}
		})
	}
}

// TestUploadBucketPathAnswersS3 checks that every request for the bucket,
// with or without the trailing slash, reaches the bundled store and gets an
// S3 XML error, never the API's JSON; paths beside it stay the API's.
func TestUploadBucketPathAnswersS3(t *testing.T) {
	t.Parallel()
	oe := newObjEnv(t, testMaxUpload)
	tests := []struct {
		method, path string
		status       int
		code         string // "" for HEAD: no body
	}{
		{http.MethodHead, "/outdial", http.StatusForbidden, ""},
		{http.MethodHead, "/outdial/", http.StatusForbidden, ""},
		{http.MethodGet, "/outdial?list-type=2", http.StatusForbidden, "AccessDenied"},
		{http.MethodGet, "/outdial/?list-type=2&prefix=campaigns%2F", http.StatusForbidden, "AccessDenied"},
		{http.MethodGet, "/outdial", http.StatusForbidden, "AccessDenied"},
		{http.MethodGet, "/outdial/campaigns/1/unknown.csv", http.StatusForbidden, "AccessDenied"},
		{http.MethodDelete, "/outdial", http.StatusForbidden, "AccessDenied"},
		{http.MethodDelete, "/outdial/campaigns/1/unknown.csv", http.StatusForbidden, "AccessDenied"},
		{http.MethodPost, "/outdial", http.StatusForbidden, "AccessDenied"},
		{http.MethodPut, "/outdial", http.StatusForbidden, "AccessDenied"},
		{http.MethodPatch, "/outdial", http.StatusMethodNotAllowed, "MethodNotAllowed"},
		{http.MethodOptions, "/outdial/campaigns/1/unknown.csv", http.StatusMethodNotAllowed, "MethodNotAllowed"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			status, raw := send(t, tt.method, oe.srv.URL+tt.path, "", nil)
			if tt.code == "" {
				if status != tt.status || len(raw) != 0 {
					t.Fatalf("answer = %d %q, want %d with no body", status, raw, tt.status)
				}
				return
			}
			wantS3Error(t, status, raw, tt.status, tt.code)
		})
	}
	// Paths that only start like the bucket are the API's.
	for _, path := range []string{"/outdialx", "/outdial-uploads/x"} {
		status, raw := send(t, http.MethodGet, oe.srv.URL+path, "", nil)
		if status != http.StatusNotFound || !strings.Contains(string(raw), `"detail"`) {
			t.Errorf("GET %s = %d %s, want the API's JSON 404", path, status, raw)
		}
	}
}
