// Package console is Outdial's operator console (API.md 14): server-rendered
// html/template pages with small plain-JavaScript modules, served by the same
// binary under /console/, with the templates and static files embedded.
//
// The console holds no data of its own beyond its sign-in sessions (the
// store's): every page gets what it shows by calling the public API in
// process, exactly as a client would, with the browser's session cookie
// (api.go), and renders the JSON it gets back, decoded into the API's own
// body types (web/wire, which also holds a campaign's defaults and ranges
// the forms show: nothing the API owns is copied here). The API accepts
// that cookie (web's authenticate) and, for requests that change
// something, also wants the session's CSRF token in the X-CSRF-Token
// header.
//
// # Layout
//
//	console.go     Config, New, the request flow: security headers, sessions,
//	               CSRF of forms, the sign-in redirect, error pages
//	session.go     the session cookie, CSRF tokens of forms, the next page
//	routes.go      every route of the console, in one function
//	pages.go       the route type, navigation and rendering
//	assets.go      embedded static files: fingerprints, gzip, caching
//	api.go         in-process calls of the public API
//	signin.go      sign-in (signin_password.go: with a password;
//	               secondfactor.go: its code page), sign-out and the
//	               one-time sign-in link
//	hashing.go     argon2id hashes (at most 3 at once) and the throttle
//	setpassword.go the page of a set-password link
//	account.go     the user's own password and second factor
//	campaigns.go   the campaigns list
//	campaign.go    the campaign page (campaign_forms.go: its buttons and forms)
//	newcampaign.go the new-campaign form (newcampaign_form.go: its fields and
//	               the create body; newcampaign_problems.go: where problems show)
//	workflows.go   the workflows list and delete (workflows_edit.go: the
//	               definition editor's pages and forms; static/workflow*.js:
//	               its list of nodes and edges, drawing and problems)
//	users.go       users (invite, role, disable, delete) and the
//	               organization's two-factor toggle (admins)
//	apikeys.go     API keys: create (shown once), revoke (admins)
//	audit.go       the audit trail: filters, pages, the JSON Lines export
//	templates/     layout.html (the frame of every page) and one file per page
//	static/        console.css and the ES modules (console.js is shared)
//
// # Adding a page
//
// Add one Go file, one template and its routes' lines in routes.go:
//
//  1. templates/thing.html defines the block "content" (and, when the page
//     has its own script, "scripts" with a <script type="module"> whose src
//     is {{asset "thing.js"}}). It is rendered inside layout.html, with the
//     view (pages.go) as dot: .Data is what the handler passed, .CSRF the
//     session's token (forms that change something carry it as the hidden
//     field csrf_token), .Now the console's clock. Template functions:
//     asset, percent, ago, bound (a campaign field's range), and can
//     (pages.go): {{if can "POST /api/v1/campaign/:campaign_id/start"}}
//     wraps a control the session's role may use (web/roles, the table
//     the API enforces, with the API's route pattern). A page shows only
//     what its role may use; its handlers still send everything to the
//     API, which decides (403): never a check of the console's own.
//
//  2. thing.go holds the handlers, which decode the API's answers into
//     its body types (web/wire; a body the console is the first to read is
//     added there, and web answers with it):
//
//     func thingPage(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
//     var thing wire.Thing
//     if err := c.api(r, s).get("/api/v1/things/"+r.PathValue("id"), &thing); err != nil {
//     return err
//     }
//     return c.render(w, r, s, "thing.html", "Thing", "things", thing)
//     }
//
//  3. routes.go lists its routes, with the others of the console (public
//     only for a page served without a session):
//
//     {pattern: "GET " + Prefix + "things/{id}", handle: thingPage},
//
// The navigation (pages.go) already links every section (an entry with
// Need only for a role that may use it); render's nav argument marks the
// current one.
//
// A route's pattern is an http.ServeMux pattern with its method; a GET
// pattern answers HEAD too. Every route but the public ones (sign-in,
// set-password) needs a session: signed out (or with a password but not
// yet its second factor), a GET is redirected to the sign-in page (which
// comes back to it), anything else is refused. While the organization
// requires a second factor the user has not turned on, only the routes
// marked beforeTOTP (the account page, sign-out) are served: a GET goes to
// the account page, anything else is refused. A non-GET route's form must carry
// the session's CSRF token (checked before the handler runs). Errors a
// handler returns become error pages (an API error keeps its status and
// detail; an API 401 means the session ended: back to sign-in). Static files
// dropped into static/ are served fingerprinted; reference them with the
// template function asset, and from other modules with a relative import
// ("./console.js"), which is rewritten to the fingerprinted name.
package console

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/outdial/outdial/store"
)

// SessionCookie is the name of the console's session cookie, which the API
// accepts in place of an API key.
const SessionCookie = "outdial_session"

// CSRFHeader is the header that carries the session's CSRF token on API
// requests authenticated by the session cookie that change something.
const CSRFHeader = "X-CSRF-Token"

// csrfField is the form field that carries the CSRF token of console forms.
const csrfField = "csrf_token"

// Prefix starts every console path.
const Prefix = "/console/"

// contentSecurityPolicy is sent with every console response: nothing inline,
// nothing from another host.
const contentSecurityPolicy = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; " +
	"connect-src 'self'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'"

// Config is what the console needs.
type Config struct {
	// DB holds the sign-in sessions and checks pasted API keys.
	DB *store.DB
	// API serves the public API; the console calls it in process for
	// everything it shows or changes.
	API http.Handler
	// Secure marks the session cookie Secure (the service serves TLS
	// itself, or its public URL is https).
	Secure bool
	// Now is the console's clock (relative times on pages); nil: time.Now.
	// Sessions expire on the store's clock.
	Now func() time.Time
	// Log gets the errors behind 500 pages; nil discards them.
	Log *slog.Logger
}

// Console serves the console. Build it with New.
type Console struct {
	db     *store.DB
	apiH   http.Handler
	secure bool
	now    func() time.Time
	log    *slog.Logger
	mux    *http.ServeMux
	// hashSlots bounds the argon2id hashes computed at once (hashing.go).
	hashSlots chan struct{}
}

// New returns the console's handler for "/", "/console" and everything under
// Prefix (see Owns).
func New(cfg Config) *Console {
	c := &Console{db: cfg.DB, apiH: cfg.API, secure: cfg.Secure, now: cfg.Now, log: cfg.Log, mux: http.NewServeMux(),
		hashSlots: make(chan struct{}, maxConcurrentHashes)}
	if c.now == nil {
		c.now = time.Now
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	c.mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, Prefix, http.StatusFound)
	})
	c.mux.HandleFunc("GET /console", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, Prefix, http.StatusFound)
	})
	c.mux.HandleFunc("GET "+staticPrefix+"{file}", serveAsset)
	for _, rt := range routes() {
		c.mux.HandleFunc(rt.pattern, c.wrap(rt))
	}
	c.mux.HandleFunc(Prefix, func(w http.ResponseWriter, r *http.Request) {
		c.renderError(w, r, signedIn(c.currentSession(r)), http.StatusNotFound, "There is no such page.")
	})
	return c
}

// Owns reports whether path is the console's: "/", "/console" or any path
// under Prefix.
func Owns(path string) bool {
	return path == "/" || path == "/console" || strings.HasPrefix(path, Prefix)
}

// Routes returns the patterns of the console's pages (http.ServeMux syntax,
// method first), in the order routes.go lists them.
func Routes() []string {
	rs := routes()
	out := make([]string, len(rs))
	for i, rt := range rs {
		out[i] = rt.pattern
	}
	return out
}

// ServeHTTP serves a console path with the security headers every console
// response carries.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store") // assets replace it
	c.mux.ServeHTTP(w, r)
}

// wrap runs rt's handler: the session (or the redirect to sign-in), the
// same-origin check and CSRF token of a request that changes something,
// and the error page of a failed handler.
func (c *Console) wrap(rt route) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s := c.currentSession(r)
		if s == nil && clientClosed(r) {
			// The browser went away while its session was looked up:
			// neither signed out nor an error of ours.
			w.WriteHeader(statusClientClosedRequest)
			return
		}
		safe := r.Method == http.MethodGet || r.Method == http.MethodHead
		if !safe {
			r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
		}
		if !safe && !sameOrigin(r) {
			c.renderError(w, r, s, http.StatusForbidden, "This form was sent from another site.")
			return
		}
		if !rt.public {
			s = signedIn(s) // a password without its second factor yet is not signed in
			if s == nil {
				if safe {
					http.Redirect(w, r, signInPath+"?next="+queryEscape(r.URL.RequestURI()), http.StatusSeeOther)
					return
				}
				c.renderError(w, r, nil, http.StatusForbidden, "Your session has ended. Sign in again.")
				return
			}
			if !safe && r.Header.Get(CSRFHeader) == "" {
				var tooLarge *http.MaxBytesError
				if err := r.ParseForm(); errors.As(err, &tooLarge) {
					c.renderError(w, r, s, http.StatusRequestEntityTooLarge,
						fmt.Sprintf("This form is larger than the %d MiB a form may be.", maxFormBytes>>20))
					return
				}
			}
			if !safe && !validCSRF(r, s) {
				c.renderError(w, r, s, http.StatusForbidden, "This form has expired. Reload the page and try again.")
				return
			}
			if s.TOTPRequired && !rt.beforeTOTP {
				// The organization requires a second factor this user
				// has not turned on: the account page first.
				if safe {
					http.Redirect(w, r, accountPath, http.StatusSeeOther)
					return
				}
				c.renderError(w, r, s, http.StatusForbidden, totpRequiredMessage)
				return
			}
		}
		if err := rt.handle(c, w, r, s); err != nil {
			c.handleError(w, r, s, err)
		}
	}
}

// sameOrigin reports whether a request that changes something came from a
// console page: its Origin header, when sent (browsers send it on every
// POST), names the host the request was sent to.
func sameOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	_, host, ok := strings.Cut(origin, "://")
	return ok && strings.EqualFold(host, r.Host)
}
