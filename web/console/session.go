package console

import (
	"crypto/subtle"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/outdial/outdial/store"
)

// session is the signed-in operator of a request: the store's session and
// the cookie's token, which the console's API calls carry.
type session struct {
	store.Session
	token string
}

// currentSession returns the request's session, nil when it has no valid
// session cookie (none, ended, expired, or its key revoked). A failed lookup
// counts as signed out; it is logged, unless the browser went away
// (clientClosed).
func (c *Console) currentSession(r *http.Request) *session {
	ck, err := r.Cookie(SessionCookie)
	if err != nil || ck.Value == "" {
		return nil
	}
	s, err := c.db.Session(r.Context(), ck.Value)
	if err != nil {
		if store.ErrorCode(err) != store.ENOTFOUND && !clientClosed(r) {
			c.log.ErrorContext(r.Context(), "console session lookup", "error", err.Error())
		}
		return nil
	}
	return &session{Session: s, token: ck.Value}
}

// validCSRF reports whether r carries s's CSRF token, as the form field
// csrf_token or the X-CSRF-Token header (compared in constant time).
func validCSRF(r *http.Request, s *session) bool {
	got := r.Header.Get(CSRFHeader)
	if got == "" {
		got = r.PostFormValue(csrfField)
	}
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(s.CSRFToken)) == 1
}

// maxFormBytes bounds the body of a console form: the API's own body limit
// (8 MiB), since a form carries what the console sends on to it (a 1 MiB
// workflow definition, pretty-printed and URL-encoded, is well over 1 MiB).
const maxFormBytes = 8 << 20

// setSessionCookie hands the browser its session token: HttpOnly,
// SameSite=Strict, for the whole site (the API reads it too), Secure when
// the service is reached over https. It has no expiry of its own: the store
// ends the session after 12 hours without use.
func (c *Console) setSessionCookie(w http.ResponseWriter, token string) {
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: token, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: c.secure})
}

// clearSessionCookie makes the browser drop its session cookie.
func (c *Console) clearSessionCookie(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: c.secure})
}

// safeNext returns next when it is a console path of this site (what the
// sign-in page may send the browser back to), else the console's home.
func safeNext(next string) string {
	if next == "" || strings.ContainsAny(next, "\\\r\n\t") {
		return Prefix
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || strings.HasPrefix(next, "//") {
		return Prefix
	}
	if u.Path != "/console" && !strings.HasPrefix(u.Path, Prefix) {
		return Prefix
	}
	if strings.Contains(u.Path, "/../") || strings.HasSuffix(u.Path, "/..") {
		return Prefix
	}
	return u.RequestURI()
}

// queryEscape escapes s for a query parameter value.
func queryEscape(s string) string { return url.QueryEscape(s) }

// signedIn returns s unless it waits for its second factor (a correct
// password, no code yet), which makes a browser signed in for nothing but
// the code page (secondfactor.go).
func signedIn(s *session) *session {
	if s == nil || s.SecondFactorPending {
		return nil
	}
	return s
}

// peerAddress is the connection's peer address without its port: what the
// sign-in throttle counts failures of (API.md 17), as the audit trail
// records it.
func peerAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
