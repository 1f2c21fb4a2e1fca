package carrier

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	vonageTestKeyOnce sync.Once
	vonageTestRSA     *rsa.PrivateKey
)

// vonageTestKey is an RSA key generated once per test binary.
func vonageTestKey(t testing.TB) *rsa.PrivateKey {
	t.Helper()
	vonageTestKeyOnce.Do(func() {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		vonageTestRSA = k
	})
	return vonageTestRSA
}

// vonageTestPEM is the test key as PEM, PKCS#1 or PKCS#8.
func vonageTestPEM(t testing.TB, pkcs8 bool) string {
	t.Helper()
	k := vonageTestKey(t)
	if !pkcs8 {
		return string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}))
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
}

const (
	vonageTestAppID  = "aaaaaaaa-bbbb-cccc-dddd-0123456789ab"
	vonageTestAPIKey = "a1b2c3d"
	vonageTestSecret = "vonage-signature-secret-0123456789"
)

// vonageTestCreds are a configuration's credentials with the test key.
func vonageTestCreds(t testing.TB) map[string]any {
	return map[string]any{"api_key": vonageTestAPIKey, "api_secret": "api-secret-xyz", "application_id": vonageTestAppID,
		"private_key": vonageTestPEM(t, false), "signature_secret": vonageTestSecret, "machine_detection": false}
}

// newVonageTest is the carrier of vonageTestCreds (changed by mod) against
// base, with the clock now.
func newVonageTest(t testing.TB, base string, now time.Time, mod func(map[string]any)) *vonage {
	t.Helper()
	creds := vonageTestCreds(t)
	if mod != nil {
		mod(creds)
	}
	c, err := New(Vonage, creds, Options{BaseURLs: map[string]string{Vonage: base}, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	return c.(*vonage)
}

// vonageTestCheckRS256 verifies an application JWT with the public key (its
// own code, not the carrier's) and returns its claims.
func vonageTestCheckRS256(t *testing.T, pub *rsa.PublicKey, tok string) map[string]any {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("token %q is not a compact JWS", tok)
	}
	hdr, _ := base64.RawURLEncoding.DecodeString(parts[0])
	var h map[string]any
	if err := json.Unmarshal(hdr, &h); err != nil || h["alg"] != "RS256" || h["typ"] != "JWT" {
		t.Fatalf("header %s, want alg RS256 typ JWT", hdr)
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(pub, crypto.SHA256, sum[:], sig); err != nil {
		t.Fatalf("RS256 signature does not verify with the public key: %v", err)
	}
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var c map[string]any
	if err := json.Unmarshal(payload, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestVonageNewChecksCredentials(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(map[string]any)
		ok   bool
	}{
		{"pkcs1 key", nil, true},
		{"pkcs8 key", func(c map[string]any) { c["private_key"] = vonageTestPEM(t, true) }, true},
		{"no application id", func(c map[string]any) { c["application_id"] = "" }, false},
		{"no key", func(c map[string]any) { delete(c, "private_key") }, false},
		{"not pem", func(c map[string]any) { c["private_key"] = "not a key" }, false},
		{"garbage pem", func(c map[string]any) {
			c["private_key"] = string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte("garbage")}))
		}, false},
	} {
		creds := vonageTestCreds(t)
		if tc.mod != nil {
			tc.mod(creds)
		}
		_, err := New(Vonage, creds, Options{})
		if (err == nil) != tc.ok {
			t.Errorf("%s: err %v, want ok %v", tc.name, err, tc.ok)
		}
		if err != nil && strings.Contains(err.Error(), "PRIVATE KEY") {
			t.Errorf("%s: error %q quotes the key", tc.name, err)
		}
	}
}

func TestVonageStringHidesSecrets(t *testing.T) {
	c := newVonageTest(t, "http://x", time.Now(), nil)
	for _, s := range []string{c.String(), fmt.Sprintf("%v %+v %#v %s", c, c, c, c)} {
		for _, secret := range []string{vonageTestSecret, "api-secret-xyz", "PRIVATE KEY"} {
			if strings.Contains(s, secret) {
				t.Fatalf("%q shows a secret", s)
			}
		}
	}
}

// vonageRecorder is an httptest server answering every request with status
// and body, recording the last request.
type vonageRecorder struct {
	mu      sync.Mutex
	method  string
	path    string
	auth    string
	ctype   string
	body    []byte
	status  int
	answer  string
	headers map[string]string
}

// set changes the answer.
func (r *vonageRecorder) set(status int, answer string) {
	r.mu.Lock()
	r.status, r.answer = status, answer
	r.mu.Unlock()
}

// last returns the last request's method, path and body.
func (r *vonageRecorder) last() (method, path, body string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.method, r.path, string(r.body)
}

func (r *vonageRecorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	b, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.method, r.path, r.auth, r.ctype, r.body = req.Method, req.URL.Path, req.Header.Get("Authorization"), req.Header.Get("Content-Type"), b
	status, answer := r.status, r.answer
	for k, v := range r.headers {
		w.Header().Set(k, v)
	}
	r.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, answer)
}

func TestVonagePlaceWireFormat(t *testing.T) {
	rec := &vonageRecorder{status: 201, answer: `{"uuid":"63f61863-4a51-4f6b-86e1-46edebcf9356","status":"started","direction":"outbound","conversation_uuid":"CON-f972836a"}`}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	now := time.Unix(1_800_000_000, 0)
	call := Call{AttemptID: 7, To: "+14155550123", From: "+14155550100",
		AnswerURL:   "https://svc.example/api/v1/telephony/vonage/answer/7?t=tok",
		StatusURL:   "https://svc.example/api/v1/telephony/vonage/status/7?t=tok",
		RingTimeout: 60 * time.Second, TimeLimit: 3600 * time.Second}
	for _, tc := range []struct {
		name   string
		md     bool
		call   func(*Call)
		golden string
	}{
		{"plain", false, nil, `{"to":[{"type":"phone","number":"14155550123"}],"from":{"type":"phone","number":"14155550100"},` +
			`"answer_url":["https://svc.example/api/v1/telephony/vonage/answer/7?t=tok"],"answer_method":"POST",` +
			`"event_url":["https://svc.example/api/v1/telephony/vonage/status/7?t=tok"],"event_method":"POST",` +
			`"ringing_timer":60,"length_timer":3600}`},
		{"machine detection from the configuration", true, nil, `{"to":[{"type":"phone","number":"14155550123"}],"from":{"type":"phone","number":"14155550100"},` +
			`"answer_url":["https://svc.example/api/v1/telephony/vonage/answer/7?t=tok"],"answer_method":"POST",` +
			`"event_url":["https://svc.example/api/v1/telephony/vonage/status/7?t=tok"],"event_method":"POST",` +
			`"ringing_timer":60,"length_timer":3600,"machine_detection":"continue"}`},
		{"machine detection from the call, timers clamped", false, func(c *Call) {
			c.MachineDetection, c.RingTimeout, c.TimeLimit = true, 500*time.Millisecond+120*time.Second, 3*time.Hour
		}, `{"to":[{"type":"phone","number":"14155550123"}],"from":{"type":"phone","number":"14155550100"},` +
			`"answer_url":["https://svc.example/api/v1/telephony/vonage/answer/7?t=tok"],"answer_method":"POST",` +
			`"event_url":["https://svc.example/api/v1/telephony/vonage/status/7?t=tok"],"event_method":"POST",` +
			`"ringing_timer":120,"length_timer":7200,"machine_detection":"continue"}`},
		{"no timers", false, func(c *Call) { c.RingTimeout, c.TimeLimit = 0, 0 },
			`{"to":[{"type":"phone","number":"14155550123"}],"from":{"type":"phone","number":"14155550100"},` +
				`"answer_url":["https://svc.example/api/v1/telephony/vonage/answer/7?t=tok"],"answer_method":"POST",` +
				`"event_url":["https://svc.example/api/v1/telephony/vonage/status/7?t=tok"],"event_method":"POST"}`},
	} {
		c := newVonageTest(t, srv.URL+"/", now, func(m map[string]any) { m["machine_detection"] = tc.md })
		cl := call
		if tc.call != nil {
			tc.call(&cl)
		}
		placed, err := c.Place(context.Background(), cl)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if placed.ProviderCallID != "63f61863-4a51-4f6b-86e1-46edebcf9356" {
			t.Fatalf("%s: call id %q", tc.name, placed.ProviderCallID)
		}
		rec.mu.Lock()
		if rec.method != http.MethodPost || rec.path != "/v1/calls" || rec.ctype != "application/json" {
			t.Fatalf("%s: %s %s (%s), want POST /v1/calls JSON", tc.name, rec.method, rec.path, rec.ctype)
		}
		if string(rec.body) != tc.golden {
			t.Fatalf("%s: body\n%s\nwant\n%s", tc.name, rec.body, tc.golden)
		}
		auth := rec.auth
		rec.mu.Unlock()
		tok, ok := strings.CutPrefix(auth, "Bearer ")
		if !ok {
			t.Fatalf("%s: Authorization %q, want a bearer token", tc.name, auth)
		}
		claims := vonageTestCheckRS256(t, &vonageTestKey(t).PublicKey, tok)
		if claims["application_id"] != vonageTestAppID || claims["iat"] != float64(now.Unix()) ||
			claims["exp"] != float64(now.Add(5*time.Minute).Unix()) || claims["jti"] == "" {
			t.Fatalf("%s: claims %v", tc.name, claims)
		}
	}
}

func TestVonageTokensAreUnique(t *testing.T) {
	c := newVonageTest(t, "http://x", time.Now(), nil)
	seen := map[any]bool{}
	for i := 0; i < 20; i++ {
		tok, err := c.apiToken()
		if err != nil {
			t.Fatal(err)
		}
		jti := vonageTestCheckRS256(t, &vonageTestKey(t).PublicKey, tok)["jti"]
		if seen[jti] {
			t.Fatalf("jti %v minted twice", jti)
		}
		seen[jti] = true
	}
}

func TestVonageErrorMapping(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	for _, tc := range []struct {
		name       string
		status     int
		body       string
		header     map[string]string
		kind, code string
		retryAfter time.Duration
		msg        string
	}{
		{"rate limited", 429, `{"type":"https://developer.nexmo.com/api-errors#throttled","title":"Too Many Requests","detail":"rate limit exceeded"}`,
			map[string]string{"Retry-After": "2"}, RateLimited, "throttled", 2 * time.Second, "Too Many Requests; rate limit exceeded"},
		{"unauthorized", 401, `{"type":"https://developer.nexmo.com/api-errors#unauthorized","title":"Unauthorized","detail":"You did not provide correct credentials."}`,
			nil, AuthFailed, "unauthorized", 0, "Unauthorized; You did not provide correct credentials."},
		{"forbidden", 403, `{"type":"https://developer.nexmo.com/api-errors#forbidden","title":"Forbidden"}`, nil, AuthFailed, "forbidden", 0, "Forbidden"},
		{"validation", 400, `{"type":"https://developer.nexmo.com/api-errors/voice#validation","title":"Bad Request","invalid_parameters":[{"name":"to[0].number","reason":"must match \\d{7,15}"}]}`,
			nil, Rejected, "validation", 0, `Bad Request; to[0].number: must match \d{7,15}`},
		{"not json", 402, `<html>`, nil, Rejected, "", 0, "Payment Required"},
	} {
		rec := &vonageRecorder{status: tc.status, answer: tc.body, headers: tc.header}
		srv := httptest.NewServer(rec)
		c := newVonageTest(t, srv.URL, now, nil)
		_, err := c.Place(context.Background(), Call{To: "+14155550123", From: "+14155550100", AnswerURL: "http://a/x"})
		srv.Close()
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("%s: err %v, want *Error", tc.name, err)
		}
		if e.Kind != tc.kind || e.Code != tc.code || e.RetryAfter != tc.retryAfter || e.Message != tc.msg || e.HTTPStatus != tc.status {
			t.Fatalf("%s: %+v, want kind %s code %s retry %v msg %q", tc.name, *e, tc.kind, tc.code, tc.retryAfter, tc.msg)
		}
	}
	// A 5xx is a plain error: the call may have been created.
	rec := &vonageRecorder{status: 503, answer: `{"type":"x#unavailable","title":"Service Unavailable"}`}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	_, err := newVonageTest(t, srv.URL, now, nil).Place(context.Background(), Call{To: "+1", From: "+1", AnswerURL: "http://a"})
	if err == nil || KindOf(err) != "" {
		t.Fatalf("503: err %v, want a plain error", err)
	}
}

func TestVonageHangUpAndQuery(t *testing.T) {
	rec := &vonageRecorder{status: 204}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	c := newVonageTest(t, srv.URL, time.Now(), nil)
	ctx := context.Background()
	if err := c.HangUp(ctx, "uu/id"); err != nil {
		t.Fatal(err)
	}
	if m, p, b := rec.last(); m != http.MethodPut || p != "/v1/calls/uu/id" || b != `{"action":"hangup"}` {
		t.Fatalf("hang up sent %s %s %s", m, p, b)
	}
	rec.set(404, `{"type":"https://developer.nexmo.com/api-errors#not-found","title":"Not Found"}`)
	if err := c.HangUp(ctx, "gone"); err != nil {
		t.Fatalf("hang up of an ended call: %v, want nil", err)
	}
	rec.set(401, `{"title":"Unauthorized"}`)
	if err := c.HangUp(ctx, "x"); KindOf(err) != AuthFailed {
		t.Fatalf("hang up 401: %v", err)
	}
	if err := c.HangUp(ctx, ""); err == nil {
		t.Fatal("hang up of no call: nil error")
	}

	for _, tc := range []struct {
		answer string
		want   Status
	}{
		{`{"uuid":"u1","status":"completed","duration":"42"}`, Status{ProviderCallID: "u1", Raw: "completed", Answered: true, Final: true, Outcome: OutcomeAnswered, DurationSeconds: 42}},
		{`{"uuid":"u1","status":"busy"}`, Status{ProviderCallID: "u1", Raw: "busy", Final: true, Outcome: OutcomeBusy}},
		{`{"uuid":"u1","status":"ringing"}`, Status{ProviderCallID: "u1", Raw: "ringing"}},
		{`{"status":"timeout","duration":null}`, Status{ProviderCallID: "asked", Raw: "timeout", Final: true, Outcome: OutcomeNoAnswer}},
	} {
		rec.set(200, tc.answer)
		got, err := c.Query(ctx, "asked")
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(withoutReplayKeys(got), tc.want) {
			t.Fatalf("query %s: %+v, want %+v", tc.answer, got, tc.want)
		}
		if m, p, _ := rec.last(); m != http.MethodGet || p != "/v1/calls/asked" {
			t.Fatalf("query sent %s %s", m, p)
		}
	}
	rec.set(404, `{"title":"Not Found"}`)
	if _, err := c.Query(ctx, "nope"); KindOf(err) != Rejected {
		t.Fatalf("query 404: %v, want Rejected", err)
	}
}
