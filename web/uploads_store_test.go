package web_test

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/outdial/outdial/store/objstore"
)

func TestUploadSafeNames(t *testing.T) {
	t.Parallel()
	oe := newObjEnv(t, testMaxUpload)
	tests := []struct{ fileName, safe string }{
		{"my contacts.csv", "my_contacts.csv"},
		{"Ünïcødé.csv", "_n_c_d_.csv"},
		{"名前.CSV", "__.CSV"},
		{"😀 list.csv", "__list.csv"},
		{"../../etc/passwd.csv", ".._.._etc_passwd.csv"},
		{"..\\..\\win.csv", ".._.._win.csv"},
		{"a/b/c.csv", "a_b_c.csv"},
		{"/abs.csv", "_abs.csv"},
		{"..csv", "..csv"},
		{"a+b%20c&d=e?f#g.csv", "a_b_20c_d_e_f_g.csv"},
		{"tab\there\nnul\x00.csv", "tab_here_nul_.csv"},
		{"keep-dash_under.score.csv", "keep-dash_under.score.csv"},
		{strings.Repeat("ab", 100) + "_tail.csv", (strings.Repeat("ab", 100) + "_tail.csv")[109:]},
	}
	body := []byte("phone_number\n+14155550100\n")
	for _, tt := range tests {
		t.Run(tt.safe, func(t *testing.T) {
			p := oe.presign(oe.keyA, tt.fileName, len(body))
			want := regexp.MustCompile(fmt.Sprintf(`^campaigns/%d/[0-9a-f-]{36}_%s$`, oe.orgA, regexp.QuoteMeta(tt.safe)))
			if !want.MatchString(p.Key) {
				t.Fatalf("file_key = %q, want safe name %q", p.Key, tt.safe)
			}
			if err := objstore.ValidateKey(p.Key); err != nil {
				t.Fatalf("key %q: %v", p.Key, err)
			}
			if status, raw := put(t, p.URL, "text/csv", bytes.NewReader(body)); status != http.StatusOK {
				t.Fatalf("PUT status = %d: %s", status, raw)
			}
			if got := oe.object(p.Key); !bytes.Equal(got, body) {
				t.Fatalf("stored %q, want %q", got, body)
			}
		})
	}
}

// TestUploadFlow is the whole flow as a client without a browser does it:
// presign, PUT the bytes with plain net/http, and the service reads exactly
// those bytes back.
func TestUploadFlow(t *testing.T) {
	t.Parallel()
	oe := newObjEnv(t, testMaxUpload)
	csv := []byte("\ufeffphone_number,first_name,note\r\n+14155550100,Ada,\"quoted, with comma\"\r\n+14155550101,Zoë,日本\r\n")
	p := oe.presign(oe.keyA, "Contacts List.csv", len(csv))
	status, raw := put(t, p.URL, "text/csv", bytes.NewReader(csv))
	if status != http.StatusOK {
		t.Fatalf("PUT status = %d, want 200: %s", status, raw)
	}
	if got := oe.object(p.Key); !bytes.Equal(got, csv) {
		t.Fatalf("stored bytes = %q, want %q", got, csv)
	}
	info, err := oe.objects.Stat(t.Context(), p.Key)
	if err != nil {
		t.Fatal(err)
	}
	if info.Size != int64(len(csv)) || info.ContentType != "text/csv" {
		t.Errorf("object info = %+v, want size %d, text/csv", info, len(csv))
	}

	// file_size is an upper bound: a smaller body is fine, streamed
	// without a declared length too.
	small := []byte("phone_number\n+14155550102\n")
	p2 := oe.presign(oe.keyA, "small.csv", 1000)
	if status, raw := put(t, p2.URL, "text/csv", io.MultiReader(bytes.NewReader(small))); status != http.StatusOK {
		t.Fatalf("chunked PUT status = %d, want 200: %s", status, raw)
	}
	if got := oe.object(p2.Key); !bytes.Equal(got, small) {
		t.Fatalf("stored bytes = %q, want %q", got, small)
	}
	// Exactly file_size bytes is fine.
	exact := bytes.Repeat([]byte("x"), testMaxUpload)
	p3 := oe.presign(oe.keyA, "exact.csv", testMaxUpload)
	if status, raw := put(t, p3.URL, "text/csv", bytes.NewReader(exact)); status != http.StatusOK {
		t.Fatalf("PUT of file_size bytes: status = %d: %s", status, raw)
	}
	if got := oe.object(p3.Key); !bytes.Equal(got, exact) {
		t.Fatalf("stored %d bytes, want %d", len(got), len(exact))
	}
}

// TestUploadRefused sends uploads the bundled store must refuse, each with
// a fresh presigned URL; none may leave anything behind.
func TestUploadRefused(t *testing.T) {
	t.Parallel()
	oe := newObjEnv(t, testMaxUpload)
	body := []byte("phone_number\n+14155550100\n")
	const sigMismatch = "SignatureDoesNotMatch"
	tests := []struct {
		name        string
		size        int                                 // file_size declared at presign time
		tamper      func(u *url.URL, key string) string // returns the URL to send
		method      string
		contentType string
		body        io.Reader
		status      int
		code        string
	}{
		{name: "wrong content type", contentType: "application/octet-stream", status: 403, code: sigMismatch},
		{name: "content type with a parameter", contentType: "text/csv; charset=utf-8", status: 403, code: sigMismatch},
		{name: "upper-case content type", contentType: "TEXT/CSV", status: 403, code: sigMismatch},
		{name: "no content type", contentType: "", status: 403, code: sigMismatch},
		{name: "body over file_size", size: len(body) - 1, contentType: "text/csv", status: 400, code: "EntityTooLarge"},
		{name: "chunked body over file_size", size: len(body) - 1, contentType: "text/csv",
			body: io.MultiReader(bytes.NewReader(body)), status: 400, code: "EntityTooLarge"},
		{name: "chunked body over the server's maximum", size: testMaxUpload, contentType: "text/csv",
			body: io.MultiReader(bytes.NewReader(bytes.Repeat([]byte("y"), testMaxUpload+1))), status: 400, code: "EntityTooLarge"},
		{name: "another uuid in the key", contentType: "text/csv", status: 403, code: sigMismatch,
			tamper: func(u *url.URL, key string) string {
				u.Path = "/outdial/" + key[:strings.LastIndex(key, "/")+1] + uuid.NewString() + "_contacts.csv"
				return u.String()
			}},
		{name: "another file name in the key", contentType: "text/csv", status: 403, code: sigMismatch,
			tamper: func(u *url.URL, key string) string {
				u.Path = "/outdial/" + strings.TrimSuffix(key, "contacts.csv") + "other.csv"
				return u.String()
			}},
		{name: "another organization's prefix", contentType: "text/csv", status: 403, code: sigMismatch,
			tamper: func(u *url.URL, key string) string {
				u.Path = "/outdial/" + strings.Replace(key, fmt.Sprintf("campaigns/%d/", oe.orgA), fmt.Sprintf("campaigns/%d/", oe.orgB), 1)
				return u.String()
			}},
		{name: "raised max size", contentType: "text/csv", status: 403, code: sigMismatch,
			tamper: func(u *url.URL, _ string) string {
				q := u.Query()
				q.Set(objstore.MaxSizeParam, "999999999")
				u.RawQuery = q.Encode()
				return u.String()
			}},
		{name: "max size removed", contentType: "text/csv", status: 403, code: sigMismatch,
			tamper: func(u *url.URL, _ string) string {
				q := u.Query()
				q.Del(objstore.MaxSizeParam)
				u.RawQuery = q.Encode()
				return u.String()
			}},
		{name: "longer expiry", contentType: "text/csv", status: 403, code: sigMismatch,
			tamper: func(u *url.URL, _ string) string {
				q := u.Query()
				q.Set("X-Amz-Expires", "604800")
				u.RawQuery = q.Encode()
				return u.String()
			}},
		{name: "signature changed", contentType: "text/csv", status: 403, code: sigMismatch,
			tamper: func(u *url.URL, _ string) string {
				q := u.Query()
				sig := []byte(q.Get("X-Amz-Signature"))
				sig[0] = map[bool]byte{true: '1', false: '0'}[sig[0] == '0']
				q.Set("X-Amz-Signature", string(sig))
				u.RawQuery = q.Encode()
				return u.String()
			}},
		{name: "unsigned", contentType: "text/csv", status: 403, code: "AccessDenied",
			tamper: func(u *url.URL, _ string) string {
				u.RawQuery = ""
				return u.String()
			}},
		{name: "signature missing", contentType: "text/csv", status: 400, code: "AuthorizationQueryParametersError",
			tamper: func(u *url.URL, _ string) string {
				q := u.Query()
				q.Del("X-Amz-Signature")
				u.RawQuery = q.Encode()
				return u.String()
			}},
		{name: "another bucket", contentType: "text/csv", status: 403, code: sigMismatch,
			tamper: func(u *url.URL, key string) string {
				u.Path = "/outdial/other/" + key
				return u.String()
			}},
		{name: "GET with the upload URL", method: http.MethodGet, status: 403, code: sigMismatch},
		{name: "DELETE with the upload URL", method: http.MethodDelete, status: 403, code: sigMismatch},
		{name: "POST with the upload URL", method: http.MethodPost, contentType: "text/csv", status: 403, code: sigMismatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			size := tt.size
			if size == 0 {
				size = len(body)
			}
			p := oe.presign(oe.keyA, "contacts.csv", size)
			target := p.URL
			if tt.tamper != nil {
				u, err := url.Parse(p.URL)
				if err != nil {
					t.Fatal(err)
				}
				target = tt.tamper(u, p.Key)
			}
			method := cmp.Or(tt.method, http.MethodPut)
			rd := tt.body
			if rd == nil {
				rd = bytes.NewReader(body)
			}
			status, raw := send(t, method, target, tt.contentType, rd)
			wantS3Error(t, status, raw, tt.status, tt.code)
			oe.wantNoObject(p.Key)
		})
	}
	// A refusal does not use the URL up: the right request still works.
	p := oe.presign(oe.keyA, "contacts.csv", len(body))
	status, raw := put(t, p.URL, "application/json", bytes.NewReader(body))
	wantS3Error(t, status, raw, http.StatusForbidden, sigMismatch)
	if status, raw := put(t, p.URL, "text/csv", bytes.NewReader(body)); status != http.StatusOK {
		t.Fatalf("PUT after a refused one: status = %d: %s", status, raw)
	}
	if got := oe.object(p.Key); !bytes.Equal(got, body) {
		t.Fatalf("stored %q, want %q", got, body)
	}
	// Client mistakes are not the service's errors: nothing is logged at
	// error level.
	if logs := oe.logs.String(); strings.Contains(logs, "level=ERROR") {
		t.Errorf("refused uploads logged errors:\n%s", logs)
	}
}

// TestUploadExpiry moves the bundled store's clock: a URL works until
// expires_in seconds have passed, then answers 403 AccessDenied.
func TestUploadExpiry(t *testing.T) {
	t.Parallel()
	oe := newObjEnv(t, testMaxUpload)
	body := []byte("phone_number\n+14155550100\n")
	early := oe.presign(oe.keyA, "early.csv", len(body))
	late := oe.presign(oe.keyA, "late.csv", len(body))

	oe.clock.advance(890 * time.Second)
	if status, raw := put(t, early.URL, "text/csv", bytes.NewReader(body)); status != http.StatusOK {
		t.Fatalf("PUT 890 s after presign: status = %d: %s", status, raw)
	}
	oe.clock.advance(11 * time.Second)
	status, raw := put(t, late.URL, "text/csv", bytes.NewReader(body))
	e := wantS3Error(t, status, raw, http.StatusForbidden, "AccessDenied")
	if e.Message != "Request has expired" {
		t.Errorf("message = %q, want %q", e.Message, "Request has expired")
	}
	if _, err := oe.objects.Stat(t.Context(), late.Key); err == nil {
		t.Errorf("expired upload stored %q", late.Key)
	}
	if got := oe.object(early.Key); !bytes.Equal(got, body) {
		t.Errorf("stored %q, want %q", got, body)
	}
}

// TestUploadOrganizations checks that each organization gets its own key
// prefix and that their uploads are separate objects.
func TestUploadOrganizations(t *testing.T) {
	t.Parallel()
	oe := newObjEnv(t, testMaxUpload)
	bodyA, bodyB := []byte("phone_number\n+14155550100\n"), []byte("phone_number\n+442071838750\n")
	pa := oe.presign(oe.keyA, "contacts.csv", len(bodyA))
	pb := oe.presign(oe.keyB, "contacts.csv", len(bodyB))
	if !strings.HasPrefix(pa.Key, fmt.Sprintf("campaigns/%d/", oe.orgA)) || !strings.HasPrefix(pb.Key, fmt.Sprintf("campaigns/%d/", oe.orgB)) {
		t.Fatalf("keys %q and %q, want prefixes of organizations %d and %d", pa.Key, pb.Key, oe.orgA, oe.orgB)
	}
	for _, c := range []struct {
		p    presigned
		body []byte
	}{{pa, bodyA}, {pb, bodyB}} {
		if status, raw := put(t, c.p.URL, "text/csv", bytes.NewReader(c.body)); status != http.StatusOK {
			t.Fatalf("PUT status = %d: %s", status, raw)
		}
	}
	if got := oe.object(pa.Key); !bytes.Equal(got, bodyA) {
		t.Errorf("A's object = %q", got)
	}
	if got := oe.object(pb.Key); !bytes.Equal(got, bodyB) {
		t.Errorf("B's object = %q", got)
	}
	// B's URL cannot be bent to write under A's prefix.
	pb2 := oe.presign(oe.keyB, "contacts.csv", len(bodyB))
	u, _ := url.Parse(pb2.URL)
	stolen := strings.Replace(pb2.Key, fmt.Sprintf("campaigns/%d/", oe.orgB), fmt.Sprintf("campaigns/%d/", oe.orgA), 1)
	u.Path = "/outdial/" + stolen
	status, raw := put(t, u.String(), "text/csv", bytes.NewReader(bodyB))
	wantS3Error(t, status, raw, http.StatusForbidden, "SignatureDoesNotMatch")
	if _, err := oe.objects.Stat(t.Context(), stolen); err == nil {
		t.Errorf("object %q was written with organization B's URL", stolen)
	}
}
