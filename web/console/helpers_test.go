package console_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/store/storetest"
	"github.com/outdial/outdial/web"
	"github.com/outdial/outdial/web/console"
)

// env is the whole web.Server (API and console) over a real SQLite file,
// served by httptest, with one API key and settable clocks for the store
// (session expiry) and the console.
type env struct {
	t     *testing.T
	db    *store.DB
	srv   *httptest.Server
	key   string
	p     store.Principal
	clock *clock
}

// clock is a settable clock shared by the store and the console.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvURL(t, "")
}

// newEnvURL is newEnv with the service's public URL.
func newEnvURL(t *testing.T, publicURL string) *env {
	t.Helper()
	db := storetest.Open(t)
	e := &env{t: t, db: db, clock: &clock{t: time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)}}
	db.Now = e.clock.now
	k, key, err := db.CreateAPIKey(context.Background(), "acme", "console test", store.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	e.key, e.p = key.Reveal(), store.Principal{APIKeyID: k.ID, OrganizationID: k.OrganizationID}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	e.srv = httptest.NewServer(web.New(web.Config{DB: db, Log: log, Version: "test", PublicURL: publicURL, ConsoleNow: e.clock.now}))
	t.Cleanup(e.srv.Close)
	return e
}

// browser is an HTTP client with a cookie jar that does not follow
// redirects, as a test of each answer wants.
type browser struct {
	e      *env
	client *http.Client
}

func (e *env) browser() *browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return &browser{e: e, client: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

// answer is one response, its body read (and gunzipped when it was sent
// compressed).
type answer struct {
	status int
	header http.Header
	body   string
	raw    []byte // the body as sent
}

// do sends a request; headers are name, value pairs.
func (b *browser) do(method, path string, body io.Reader, headers ...string) answer {
	b.e.t.Helper()
	req, err := http.NewRequest(method, b.e.srv.URL+path, body)
	if err != nil {
		b.e.t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	if req.Header.Get("Accept-Encoding") == "" {
		req.Header.Set("Accept-Encoding", "identity") // no transparent gzip: tests see what was sent
	}
	res, err := b.client.Do(req)
	if err != nil {
		b.e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		b.e.t.Fatal(err)
	}
	a := answer{status: res.StatusCode, header: res.Header, body: string(raw), raw: raw}
	if res.Header.Get("Content-Encoding") == "gzip" && len(raw) > 0 {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			b.e.t.Fatalf("%s %s: gzip: %v", method, path, err)
		}
		plain, err := io.ReadAll(zr)
		if err != nil {
			b.e.t.Fatalf("%s %s: gunzip: %v", method, path, err)
		}
		a.body = string(plain)
	}
	return a
}

func (b *browser) get(path string) answer {
	b.e.t.Helper()
	return b.do(http.MethodGet, path, nil)
}

// postForm sends form values as a browser's form would (with this site as
// Origin).
func (b *browser) postForm(path string, form url.Values) answer {
	b.e.t.Helper()
	return b.do(http.MethodPost, path, strings.NewReader(form.Encode()),
		"Content-Type", "application/x-www-form-urlencoded", "Origin", b.e.srv.URL)
}

// signIn signs in with key and fails the test unless that worked.
func (b *browser) signIn(key string) {
	b.e.t.Helper()
	a := b.postForm("/console/sign-in", url.Values{"api_key": {key}, "next": {"/console/"}})
	if a.status != http.StatusSeeOther || a.header.Get("Location") != "/console/" {
		b.e.t.Fatalf("sign in: %d, Location %q: %s", a.status, a.header.Get("Location"), a.body)
	}
}

// cookie returns the browser's session cookie value ("" without one).
func (b *browser) cookie() string {
	u, _ := url.Parse(b.e.srv.URL)
	for _, c := range b.client.Jar.Cookies(u) {
		if c.Name == console.SessionCookie {
			return c.Value
		}
	}
	return ""
}

var csrfMeta = regexp.MustCompile(`<meta name="csrf-token" content="([^"]+)">`)

// csrf reads the CSRF token from a signed-in page.
func (b *browser) csrf() string {
	b.e.t.Helper()
	a := b.get("/console/campaigns")
	m := csrfMeta.FindStringSubmatch(a.body)
	if a.status != http.StatusOK || m == nil {
		b.e.t.Fatalf("no csrf-token meta on the campaigns page (%d): %s", a.status, a.body)
	}
	return m[1]
}

// apiJSON calls the API with the browser's cookie and optional headers and
// decodes the JSON answer.
func (b *browser) apiJSON(method, path string, body any, headers ...string) (answer, map[string]any) {
	b.e.t.Helper()
	var rd io.Reader
	if body != nil {
		data, _ := json.Marshal(body)
		rd = bytes.NewReader(data)
		headers = append(headers, "Content-Type", "application/json")
	}
	a := b.do(method, path, rd, headers...)
	var m map[string]any
	if strings.TrimSpace(a.body) != "" {
		if err := json.Unmarshal([]byte(a.body), &m); err != nil {
			b.e.t.Fatalf("%s %s: not a JSON object: %s", method, path, a.body)
		}
	}
	return a, m
}

// wantStatus fails the test when a's status is not want.
func wantStatus(t *testing.T, what string, a answer, want int) {
	t.Helper()
	if a.status != want {
		t.Fatalf("%s: status = %d, want %d; body %s", what, a.status, want, a.body)
	}
}
