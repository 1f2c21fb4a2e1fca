package console_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/web/console"
)

func TestSignInWithKey(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		name    string
		key     string
		status  int
		message string
	}{
		{"empty", "  ", http.StatusUnprocessableEntity, "Paste an API key"},
		{"unknown", "odk_" + strings.Repeat("A", 43), http.StatusUnprocessableEntity, "not valid"},
		{"not a key", "<script>alert(1)</script>", http.StatusUnprocessableEntity, "not valid"},
		{"good, with spaces", " " + e.key + " ", http.StatusSeeOther, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := e.browser()
			a := b.postForm("/console/sign-in", url.Values{"api_key": {tc.key}, "next": {"/console/campaigns?before_id=7"}})
			wantStatus(t, "sign in", a, tc.status)
			if tc.status != http.StatusSeeOther {
				if !strings.Contains(a.body, tc.message) || !strings.Contains(a.body, `<label for="api_key">API key</label>`) {
					t.Fatalf("the form again with %q, got: %s", tc.message, a.body)
				}
				if b.cookie() != "" {
					t.Fatal("a failed sign-in set a session cookie")
				}
				if strings.Contains(a.body, tc.key) && strings.TrimSpace(tc.key) != "" {
					t.Fatalf("the page echoes the pasted key: %s", a.body)
				}
				return
			}
			if got := a.header.Get("Location"); got != "/console/campaigns?before_id=7" {
				t.Fatalf("Location = %q, want the page asked for", got)
			}
			ck := a.header.Get("Set-Cookie")
			for _, attr := range []string{console.SessionCookie + "=", "Path=/", "HttpOnly", "SameSite=Strict"} {
				if !strings.Contains(ck, attr) {
					t.Errorf("Set-Cookie %q lacks %s", ck, attr)
				}
			}
			if strings.Contains(ck, "Secure") || strings.Contains(ck, e.key) {
				t.Errorf("Set-Cookie %q: Secure over http, or the key itself", ck)
			}
			wantStatus(t, "campaigns after sign-in", b.get("/console/campaigns"), http.StatusOK)
		})
	}
}

func TestSessionCookieSecureOverHTTPS(t *testing.T) {
	e := newEnvURL(t, "https://outdial.example.com")
	a := e.browser().postForm("/console/sign-in", url.Values{"api_key": {e.key}})
	wantStatus(t, "sign in", a, http.StatusSeeOther)
	if ck := a.header.Get("Set-Cookie"); !strings.Contains(ck, "Secure") {
		t.Fatalf("Set-Cookie %q lacks Secure with an https public URL", ck)
	}
}

func TestSignInNextIsSameOrigin(t *testing.T) {
	e := newEnv(t)
	cases := map[string]string{
		"":                              "/console/",
		"/console/campaigns?x=1":        "/console/campaigns?x=1",
		"/console":                      "/console",
		"https://evil.example/console/": "/console/",
		"//evil.example/console/":       "/console/",
		"/\\evil.example":               "/console/",
		"/api/v1/campaign":              "/console/",
		"/console/../api/v1/campaign":   "/console/",
		"javascript:alert(1)":           "/console/",
	}
	for next, want := range cases {
		a := e.browser().postForm("/console/sign-in", url.Values{"api_key": {e.key}, "next": {next}})
		wantStatus(t, "sign in next="+next, a, http.StatusSeeOther)
		if got := a.header.Get("Location"); got != want {
			t.Errorf("next %q: Location = %q, want %q", next, got, want)
		}
	}
}

func TestSignedOutRedirectsToSignIn(t *testing.T) {
	e := newEnv(t)
	b := e.browser()
	for _, path := range []string{"/console/", "/console/campaigns", "/console/campaigns?before_id=3"} {
		for _, method := range []string{http.MethodGet, http.MethodHead} {
			a := b.do(method, path, nil)
			wantStatus(t, method+" "+path, a, http.StatusSeeOther)
			want := "/console/sign-in?next=" + url.QueryEscape(path)
			if got := a.header.Get("Location"); got != want {
				t.Errorf("%s %s: Location = %q, want %q", method, path, got, want)
			}
		}
	}
	// A form sent without a session is refused, not redirected.
	a := b.postForm("/console/sign-out", url.Values{"csrf_token": {"x"}})
	wantStatus(t, "sign-out signed out", a, http.StatusForbidden)
	// A session cookie that names no session is signed out too.
	u, _ := url.Parse(e.srv.URL)
	b.client.Jar.SetCookies(u, []*http.Cookie{{Name: console.SessionCookie, Value: "forged", Path: "/"}})
	wantStatus(t, "forged cookie", b.get("/console/"), http.StatusSeeOther)
}

func TestRootRedirectsToConsole(t *testing.T) {
	e := newEnv(t)
	for _, path := range []string{"/", "/console"} {
		for _, method := range []string{http.MethodGet, http.MethodHead} {
			a := e.browser().do(method, path, nil)
			wantStatus(t, method+" "+path, a, http.StatusFound)
			if got := a.header.Get("Location"); got != "/console/" {
				t.Errorf("%s %s: Location = %q, want /console/", method, path, got)
			}
		}
	}
}

func TestSignOut(t *testing.T) {
	e := newEnv(t)
	b := e.browser()
	b.signIn(e.key)
	token := b.cookie()
	csrf := b.csrf()
	// Without or with a wrong token: refused, still signed in.
	for _, bad := range []string{"", "wrong", csrf + "x"} {
		a := b.postForm("/console/sign-out", url.Values{"csrf_token": {bad}})
		wantStatus(t, "sign-out with token "+bad, a, http.StatusForbidden)
	}
	// From another site: refused even with the token.
	a := b.do(http.MethodPost, "/console/sign-out", strings.NewReader(url.Values{"csrf_token": {csrf}}.Encode()),
		"Content-Type", "application/x-www-form-urlencoded", "Origin", "https://evil.example")
	wantStatus(t, "sign-out from another origin", a, http.StatusForbidden)
	wantStatus(t, "still signed in", b.get("/console/"), http.StatusOK)

	a = b.postForm("/console/sign-out", url.Values{"csrf_token": {csrf}})
	wantStatus(t, "sign-out", a, http.StatusSeeOther)
	if got := a.header.Get("Location"); got != "/console/sign-in" {
		t.Fatalf("Location = %q, want /console/sign-in", got)
	}
	if _, err := e.db.Session(context.Background(), token); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("the session after sign-out: %v, want ENOTFOUND", err)
	}
	wantStatus(t, "page after sign-out", b.get("/console/"), http.StatusSeeOther)
}

func TestSessionIdleExpiry(t *testing.T) {
	e := newEnv(t)
	b := e.browser()
	b.signIn(e.key)
	for range 2 {
		e.clock.advance(11 * time.Hour)
		wantStatus(t, "after 11 h", b.get("/console/"), http.StatusOK)
		a, _ := b.apiJSON(http.MethodGet, "/api/v1/campaign", nil)
		wantStatus(t, "API after 11 h", a, http.StatusOK)
	}
	e.clock.advance(12 * time.Hour)
	wantStatus(t, "page after 12 h idle", b.get("/console/"), http.StatusSeeOther)
	a, m := b.apiJSON(http.MethodGet, "/api/v1/campaign", nil)
	wantStatus(t, "API after 12 h idle", a, http.StatusUnauthorized)
	if m["detail"] != "Not authenticated" || a.header.Get("WWW-Authenticate") != "Bearer" {
		t.Fatalf("401 = %v, WWW-Authenticate %q", m, a.header.Get("WWW-Authenticate"))
	}
}

func TestRevokedKeyEndsSessions(t *testing.T) {
	e := newEnv(t)
	b := e.browser()
	b.signIn(e.key)
	wantStatus(t, "before", b.get("/console/"), http.StatusOK)
	if err := e.db.RevokeAPIKey(context.Background(), e.p.APIKeyID); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, "page after revoke", b.get("/console/"), http.StatusSeeOther)
	a, _ := b.apiJSON(http.MethodGet, "/api/v1/campaign", nil)
	wantStatus(t, "API after revoke", a, http.StatusUnauthorized)
	a = e.browser().postForm("/console/sign-in", url.Values{"api_key": {e.key}})
	wantStatus(t, "sign in with the revoked key", a, http.StatusUnprocessableEntity)
}

func TestSignInLink(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	link, err := e.db.CreateSignInLink(ctx, e.p, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	b := e.browser()
	a := b.get("/console/sign-in/link?token=" + url.QueryEscape(link))
	wantStatus(t, "link", a, http.StatusSeeOther)
	if a.header.Get("Location") != "/console/" || b.cookie() == "" {
		t.Fatalf("link: Location %q, cookie %q", a.header.Get("Location"), b.cookie())
	}
	wantStatus(t, "signed in by the link", b.get("/console/"), http.StatusOK)

	// Works once.
	other := e.browser()
	a = other.get("/console/sign-in/link?token=" + url.QueryEscape(link))
	wantStatus(t, "link again", a, http.StatusBadRequest)
	if other.cookie() != "" || !strings.Contains(a.body, "does not work") {
		t.Fatalf("second use: cookie %q, body %s", other.cookie(), a.body)
	}
	// Expires.
	late, err := e.db.CreateSignInLink(ctx, e.p, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	e.clock.advance(time.Minute)
	wantStatus(t, "expired link", e.browser().get("/console/sign-in/link?token="+url.QueryEscape(late)), http.StatusBadRequest)
	wantStatus(t, "no token", e.browser().get("/console/sign-in/link"), http.StatusBadRequest)
}
