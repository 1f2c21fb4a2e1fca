package web

import (
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/web/console"
)

// The operator console (API.md 14, package web/console) is served beside
// the API: "/", "/console" and every path under /console/ are the console's
// (console.Owns), everything else the API's. The console calls the API in
// process with the browser's session cookie, which authenticate accepts in
// place of an API key; a cookie-authenticated request that changes
// something (any method but GET and HEAD) must also carry the session's
// CSRF token in X-CSRF-Token, else it is refused with 403 before its
// handler runs.

// Routes logged for the console's requests (the request log never holds a
// raw path).
const (
	routeConsoleRoot = "/"
	routeConsole     = "/console/*path"
)

// csrfDetail is the 403 of a cookie-authenticated request without the
// session's CSRF token.
const csrfDetail = "CSRF token missing or invalid"

// newConsole builds the console over s: it calls the API through s itself
// (request log included), keeps its sessions in cfg.DB, and marks its cookie
// Secure when the service serves TLS itself (cfg.TLS) or its public URL is
// https (TLS ended by a proxy in front).
func (s *Server) newConsole(cfg Config) *console.Console {
	return console.New(console.Config{
		DB:     cfg.DB,
		API:    s,
		Secure: cfg.TLS || strings.HasPrefix(strings.ToLower(s.publicURL), "https://"),
		Now:    cfg.ConsoleNow,
		Log:    s.log,
	})
}

// routeConsole serves r when its path is the console's, and reports whether
// it did.
func (s *Server) routeConsole(w http.ResponseWriter, r *http.Request) bool {
	if !console.Owns(r.URL.Path) {
		return false
	}
	route := routeConsole
	if r.URL.Path == "/" {
		route = routeConsoleRoot
	}
	requestInfoOf(r.Context()).setRoute(route)
	s.console.ServeHTTP(w, r)
	return true
}

// sessionPrincipal authenticates r by the console's session cookie: no
// cookie, or a session that has ended (signed out, 12 h idle, its key
// revoked), is 401 "Not authenticated", as a request without credentials;
// a request that changes something without the session's CSRF token in
// X-CSRF-Token (compared in constant time) is 403.
func (s *Server) sessionPrincipal(r *http.Request) (store.Principal, error) {
	ck, err := r.Cookie(console.SessionCookie)
	if err != nil || ck.Value == "" {
		return store.Principal{}, &authError{"Not authenticated"}
	}
	sess, err := s.db.Session(r.Context(), ck.Value)
	if store.ErrorCode(err) == store.ENOTFOUND {
		return store.Principal{}, &authError{"Not authenticated"}
	}
	if err != nil {
		return store.Principal{}, err
	}
	if sess.SecondFactorPending {
		// A password was right; the second factor is still to come
		// (the console's code page): nothing else yet.
		return store.Principal{}, &authError{"Not authenticated"}
	}
	if sess.TOTPRequired {
		return store.Principal{}, errStatus(http.StatusForbidden,
			"the organization requires two-factor authentication: turn it on at /console/account first")
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		got := r.Header.Get(console.CSRFHeader)
		if got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(sess.CSRFToken)) != 1 {
			return store.Principal{}, errStatus(http.StatusForbidden, csrfDetail)
		}
	}
	return sess.Principal, nil
}
