package web_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/store/storetest"
	"github.com/outdial/outdial/web"
	"github.com/outdial/outdial/web/console"
)

// tlsServer serves web.New with cfg.TLS set (the service terminating TLS
// itself) over real TLS, with a real SQLite database, and returns it with
// an API key.
func tlsServer(t *testing.T, publicURL string) (*httptest.Server, string) {
	t.Helper()
	db := storetest.Open(t)
	_, key, err := db.CreateAPIKey(context.Background(), "acme", "tls test", store.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv := httptest.NewTLSServer(web.New(web.Config{DB: db, Log: log, Version: testVersion, PublicURL: publicURL, TLS: true}))
	t.Cleanup(srv.Close)
	return srv, key.Reveal()
}

// noRedirects makes c return redirects instead of following them.
func noRedirects(c *http.Client) *http.Client {
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return c
}

// TestHSTSOnEveryResponse: with TLS on, the API (an answer, an auth error,
// a 404, a 405), the console's pages and redirects all carry
// Strict-Transport-Security.
func TestHSTSOnEveryResponse(t *testing.T) {
	srv, key := tlsServer(t, "")
	client := noRedirects(srv.Client())
	cases := []struct {
		method, path string
		auth         bool
		status       int
	}{
		{http.MethodGet, "/api/v1/health", false, http.StatusOK},
		{http.MethodGet, "/api/v1/campaign", true, http.StatusOK},
		{http.MethodGet, "/api/v1/campaign", false, http.StatusUnauthorized},
		{http.MethodGet, "/api/v1/nothing-here", false, http.StatusNotFound},
		{http.MethodDelete, "/api/v1/health", false, http.StatusMethodNotAllowed},
		{http.MethodGet, "/", false, http.StatusFound},
		{http.MethodGet, "/console/sign-in", false, http.StatusOK},
	}
	for _, tc := range cases {
		req, err := http.NewRequest(tc.method, srv.URL+tc.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if tc.auth {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != tc.status {
			t.Errorf("%s %s: status = %d, want %d", tc.method, tc.path, res.StatusCode, tc.status)
		}
		if got := res.Header.Get("Strict-Transport-Security"); got != "max-age=31536000" {
			t.Errorf("%s %s: Strict-Transport-Security = %q, want max-age=31536000", tc.method, tc.path, got)
		}
	}
}

// TestNoHSTSWithoutTLS: a service that does not terminate TLS (TLS ended
// by a proxy in front, or plain http) sends no HSTS of its own.
func TestNoHSTSWithoutTLS(t *testing.T) {
	e := newEnv(t)
	r := e.do(http.MethodGet, healthPath, "", nil)
	wantStatus(t, r, http.StatusOK)
	if got := r.Header.Get("Strict-Transport-Security"); got != "" {
		t.Fatalf("Strict-Transport-Security = %q without TLS", got)
	}
}

// TestSecureCookiesWithTLS: with TLS on, the console's session cookie is
// Secure even when the public URL given is http (the listener speaks only
// https), and so is the cookie that signs out.
func TestSecureCookiesWithTLS(t *testing.T) {
	srv, key := tlsServer(t, "http://outdial.example.com")
	client := noRedirects(srv.Client())
	res, err := client.PostForm(srv.URL+"/console/sign-in", url.Values{"api_key": {key}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign in: status = %d, want %d", res.StatusCode, http.StatusSeeOther)
	}
	cookies := res.Cookies()
	if len(cookies) != 1 || cookies[0].Name != console.SessionCookie {
		t.Fatalf("sign in set %v, want the session cookie", res.Header.Values("Set-Cookie"))
	}
	ck := cookies[0]
	if !ck.Secure || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode {
		t.Fatalf("session cookie %q: want Secure, HttpOnly, SameSite=Strict", res.Header.Get("Set-Cookie"))
	}

	// Signing out clears the cookie with a Secure one too.
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/console/campaigns", nil)
	req.AddCookie(ck)
	page, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(page.Body)
	page.Body.Close()
	token := csrfFromPage(t, string(body))
	req, _ = http.NewRequest(http.MethodPost, srv.URL+"/console/sign-out", strings.NewReader(url.Values{"csrf_token": {token}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(ck)
	out, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	out.Body.Close()
	set := out.Header.Values("Set-Cookie")
	if len(set) != 1 || !strings.Contains(set[0], "Max-Age=0") || !strings.Contains(set[0], "Secure") {
		t.Fatalf("sign out: status %d, Set-Cookie %q: want the cookie cleared with Secure", out.StatusCode, set)
	}
}

// csrfFromPage returns the CSRF token a console page embeds.
func csrfFromPage(t *testing.T, page string) string {
	t.Helper()
	const marker = `<meta name="csrf-token" content="`
	i := strings.Index(page, marker)
	if i < 0 {
		t.Fatalf("no CSRF token on the page:\n%s", page)
	}
	rest := page[i+len(marker):]
	return rest[:strings.IndexByte(rest, '"')]
}

// TestHTTPSRedirect: the plain-HTTP listener answers every method 308 to
// the same path and query at the https address: the host the request named
// (or the public URL's when it named none), on the public URL's port.
func TestHTTPSRedirect(t *testing.T) {
	cases := []struct {
		name, public, method, host, target, want string
	}{
		{"get on 443", "https://outdial.example.com", http.MethodGet, "outdial.example.com", "/console/campaigns?x=1&y=%2F", "https://outdial.example.com/console/campaigns?x=1&y=%2F"},
		{"post keeps its method", "https://outdial.example.com", http.MethodPost, "outdial.example.com:80", "/hooks/twilio/7?token=abc", "https://outdial.example.com/hooks/twilio/7?token=abc"},
		{"another port", "https://localhost:8443", http.MethodGet, "localhost:8080", "/api/v1/health", "https://localhost:8443/api/v1/health"},
		{"the host asked for", "https://outdial.example.com", http.MethodHead, "other.example.com", "/", "https://other.example.com/"},
		{"no host", "https://outdial.example.com:8443", http.MethodGet, "", "/a%20b", "https://outdial.example.com:8443/a%20b"},
		{"ipv6", "https://[::1]:8443", http.MethodGet, "[::1]:8080", "/", "https://[::1]:8443/"},
		{"ipv6 on 443", "https://outdial.example.com", http.MethodGet, "[2001:db8::1]", "/x", "https://[2001:db8::1]/x"},
		{"a path that looks like a host", "https://outdial.example.com", http.MethodGet, "outdial.example.com", "//evil.example/", "https://outdial.example.com//evil.example/"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h, err := web.HTTPSRedirect(tc.public)
			if err != nil {
				t.Fatal(err)
			}
			req := httptest.NewRequest(tc.method, "http://placeholder"+tc.target, strings.NewReader("body"))
			req.Host = tc.host
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != http.StatusPermanentRedirect {
				t.Fatalf("status = %d, want 308", rec.Code)
			}
			if got := rec.Header().Get("Location"); got != tc.want {
				t.Fatalf("Location = %q, want %q", got, tc.want)
			}
		})
	}
	if _, err := web.HTTPSRedirect("http://outdial.example.com"); err == nil {
		t.Fatal("HTTPSRedirect accepted an http public URL")
	}
}
