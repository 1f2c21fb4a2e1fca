package web_test

import (
	"context"
	"net/http"
	"regexp"
	"testing"

	"github.com/outdial/outdial/web/console"
)

// consoleSession starts a console session for key (as signing in does) and
// returns its cookie header value and CSRF token.
func (e *testEnv) consoleSession(key string) (cookie, csrf string) {
	e.t.Helper()
	ctx := context.Background()
	p, err := e.db.Authenticate(ctx, key)
	if err != nil {
		e.t.Fatal(err)
	}
	token, s, err := e.db.CreateSession(ctx, p)
	if err != nil {
		e.t.Fatal(err)
	}
	e.addSecret(token)
	return console.SessionCookie + "=" + token, s.CSRFToken
}

// TestSessionCookieAuth: the API accepts the console's session cookie in
// place of a key; a request that changes something needs the session's
// CSRF token beside it, and is refused before anything happens without it;
// key requests are unaffected.
func TestSessionCookieAuth(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cookie, csrf := e.consoleSession(e.keyA)
	_, otherCSRF := e.consoleSession(e.keyA)
	ended, endedCSRF := e.consoleSession(e.keyA)
	if err := e.db.DeleteSession(context.Background(), ended[len(console.SessionCookie)+1:]); err != nil {
		t.Fatal(err)
	}
	policy := func() any { return e.a(http.MethodGet, compliancePath, nil).Body }
	before := policy()
	change := map[string]any{"attempt_cap": map[string]any{"enabled": true}}

	cases := []struct {
		name    string
		method  string
		body    any
		key     string
		headers []string
		status  int
		detail  string
		changed bool
	}{
		{"GET with the cookie", http.MethodGet, nil, "", []string{"Cookie", cookie}, http.StatusOK, "", false},
		{"HEAD with the cookie", http.MethodHead, nil, "", []string{"Cookie", cookie}, http.StatusOK, "", false},
		{"PUT without the token", http.MethodPut, change, "", []string{"Cookie", cookie}, http.StatusForbidden, "CSRF token missing or invalid", false},
		{"PUT with a wrong token", http.MethodPut, change, "", []string{"Cookie", cookie, console.CSRFHeader, "nope"}, http.StatusForbidden, "CSRF token missing or invalid", false},
		{"PUT with another session's token", http.MethodPut, change, "", []string{"Cookie", cookie, console.CSRFHeader, otherCSRF}, http.StatusForbidden, "CSRF token missing or invalid", false},
		{"PUT with a bad body and no token", http.MethodPut, rawBody("{"), "", []string{"Cookie", cookie}, http.StatusForbidden, "CSRF token missing or invalid", false},
		{"an ended session", http.MethodPut, change, "", []string{"Cookie", ended, console.CSRFHeader, endedCSRF}, http.StatusUnauthorized, "Not authenticated", false},
		{"GET with an ended session", http.MethodGet, nil, "", []string{"Cookie", ended}, http.StatusUnauthorized, "Not authenticated", false},
		{"a forged cookie", http.MethodGet, nil, "", []string{"Cookie", console.SessionCookie + "=forged"}, http.StatusUnauthorized, "Not authenticated", false},
		{"the key wins over an ended session", http.MethodGet, nil, e.keyA, []string{"Cookie", ended}, http.StatusOK, "", false},
		{"a key needs no token", http.MethodPut, map[string]any{"attempt_cap": map[string]any{"max_attempts": 4}}, e.keyA, nil, http.StatusOK, "", true},
		{"PUT with the token", http.MethodPut, change, "", []string{"Cookie", cookie, console.CSRFHeader, csrf}, http.StatusOK, "", true},
	}
	for _, tc := range cases {
		r := e.do(tc.method, compliancePath, tc.key, tc.body, tc.headers...)
		if tc.detail != "" {
			wantDetail(t, r, tc.status, tc.detail)
		} else {
			wantStatus(t, r, tc.status)
		}
		if tc.status == http.StatusUnauthorized && r.Header.Get("WWW-Authenticate") != "Bearer" {
			t.Errorf("%s: WWW-Authenticate = %q, want Bearer", tc.name, r.Header.Get("WWW-Authenticate"))
		}
		after := policy()
		if changed := !equalJSON(after, before); changed != tc.changed {
			t.Fatalf("%s: policy changed = %v, want %v (%v → %v)", tc.name, changed, tc.changed, before, after)
		}
		before = after
	}
	// The cookie acts for its key's organization only.
	if r := e.do(http.MethodGet, compliancePath, "", nil, "Cookie", cookie); !equalJSON(r.Body, policy()) {
		t.Fatalf("GET with the cookie = %s, want organization A's policy", r.Raw)
	}
}

// routeParam matches a wildcard segment of an httprouter pattern.
var routeParam = regexp.MustCompile(`:[a-z_]+`)

// TestSessionCookieAuthEveryMutation: every operation that changes
// something refuses the cookie without the CSRF token, with the 403 the
// document gives it (the validator checks that).
func TestSessionCookieAuthEveryMutation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cookie, _ := e.consoleSession(e.keyA)
	n := 0
	for _, rt := range openAPIServer(t).Routes() {
		switch rt.Method {
		case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		default:
			continue
		}
		path := routeParam.ReplaceAllString(rt.Path, "1")
		if r := e.do(rt.Method, path, "", nil); r.Status != http.StatusUnauthorized {
			continue // public: webhooks and the opt-out
		}
		n++
		wantDetail(t, e.do(rt.Method, path, "", rawBody("{}"), "Cookie", cookie), http.StatusForbidden, "CSRF token missing or invalid")
	}
	if n < 10 {
		t.Fatalf("only %d authenticated mutations found", n)
	}
}
