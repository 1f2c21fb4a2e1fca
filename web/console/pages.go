package console

import (
	"bytes"
	"compress/gzip"
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/web/roles"
	"github.com/outdial/outdial/web/wire"
)

// route is one console route.
type route struct {
	// pattern is an http.ServeMux pattern with its method, e.g.
	// "GET /console/campaigns/{id}" (a GET pattern answers HEAD too).
	pattern string
	// public routes are served without a session (the sign-in pages); a
	// public handler gets a nil session when the browser has none, and
	// the session as it is otherwise (one waiting for its second factor
	// too: see signedIn).
	public bool
	// beforeTOTP routes are served to a session whose organization
	// requires a second factor its user has not turned on yet (the
	// account page, signing out); every other page sends it to the
	// account page.
	beforeTOTP bool
	// handle serves the route; a returned error becomes an error page.
	handle handlerFunc
}

// handlerFunc serves one console route. s is the signed-in session (nil
// only on a public route).
type handlerFunc func(c *Console, w http.ResponseWriter, r *http.Request, s *session) error

// navigation is the header's links, in order. A page marks its own with
// the nav argument of render (the entry's Key; "" marks none).
// An entry with Need is shown only to a role the API allows that
// operation ("METHOD pattern", as the template function can takes it).
var navigation = []navEntry{
	{"campaigns", "Campaigns", Prefix + "campaigns", ""},
	{"new-campaign", "New campaign", Prefix + "campaigns/new", "POST /api/v1/campaign"},
	{"telephony", "Telephony", Prefix + "telephony", ""},
	{"workflows", "Workflows", Prefix + "workflows", ""},
	{"suppressions", "Suppressions", Prefix + "suppressions", ""},
	{"compliance", "Compliance", Prefix + "compliance", ""},
	{"users", "Users", usersPath, "GET /api/v1/users"},
	{"api-keys", "API keys", apiKeysPath, "GET /api/v1/api-keys"},
	{"audit", "Audit", auditPath, "GET /api/v1/audit"},
}

// navEntry is one link of the header's navigation.
type navEntry struct {
	Key, Label, Href string
	// Need is the API operation whose role the link needs ("" for every
	// role).
	Need string
}

// navigationFor returns the navigation entries role may use.
func navigationFor(role store.Role) []navEntry {
	out := make([]navEntry, 0, len(navigation))
	for _, n := range navigation {
		if n.Need == "" {
			out = append(out, n)
			continue
		}
		if ok, err := canDo(role, n.Need); err == nil && ok {
			out = append(out, n)
		}
	}
	return out
}

// view is what every template gets as dot.
type view struct {
	Title string
	// Nav is the key of the navigation entry marked current.
	Nav string
	// Navigation lists the header's links.
	Navigation []navEntry
	// SignedIn is true when the request has a session; CSRF is then its
	// token, which forms that change something carry (csrf_token) and the
	// layout puts in <meta name="csrf-token"> for the scripts.
	SignedIn bool
	CSRF     string
	// Now is the console's clock when the page was rendered.
	Now time.Time
	// Data is the page's own data.
	Data any
}

//go:embed templates/*.html
var templateFS embed.FS

// templates returns, for each role (and "" for no session), the map of
// each page template's file name to the layout and that page, with the
// template function can answering for that role. They are parsed once, at
// the first page rendered (parsing them all takes a few milliseconds, which
// the service's start-up no longer waits for; TestTemplatesParse parses
// them in every test run). One set per role keeps can a plain function of
// its argument: html/template cannot rebind a function per execution.
var templates = sync.OnceValue(func() map[store.Role]map[string]*template.Template {
	out := make(map[store.Role]map[string]*template.Template, len(store.Roles())+1)
	for _, role := range append(store.Roles(), "") {
		out[role] = mustParseTemplates(templateFS, role)
	}
	return out
})

// templateFuncs are the functions every template may call, but can, which
// mustParseTemplates adds for its role.
var templateFuncs = template.FuncMap{
	"asset":   assetURL,
	"percent": percent,
	"ago":     ago,
	"bound":   bound,
}

// canDo reports whether role may call op, "METHOD /api/v1/pattern" with
// the API's route pattern (":campaign_id" wildcards, as web/roles lists
// them): what the API would not refuse with 403. An op the API has no
// such route for is an error, so a mistyped one stops the page (and its
// test) rather than hiding a control for good. The empty role (no
// session) may do nothing.
func canDo(role store.Role, op string) (bool, error) {
	method, pattern, ok := strings.Cut(op, " ")
	if !ok {
		return false, fmt.Errorf("can %q: want \"METHOD /api/v1/pattern\"", op)
	}
	if _, known := roles.Of(method, pattern); !known {
		return false, fmt.Errorf("can %q: the API has no such route with a role", op)
	}
	return roles.Allowed(role, method, pattern), nil
}

// bound is the API's range of the campaign's number field name (its name
// in the API, "retry_config.max_retries"), for a number input's min and max
// attributes; a name without one stops the page with an error.
func bound(name string) (wire.Bound, error) {
	b, ok := wire.Bounds()[name]
	if !ok {
		return b, fmt.Errorf("no range for the campaign field %q", name)
	}
	return b, nil
}

// mustParseTemplates parses templates/layout.html with each other
// templates/*.html; a template that does not parse stops the binary at
// start-up (and every test).
//
// The template function can (`{{if can "POST /api/v1/campaign"}}`) answers
// canDo for role: pages show only the controls the signed-in role may use.
// It only hides them: the API decides every request the console sends.
func mustParseTemplates(fsys fs.FS, role store.Role) map[string]*template.Template {
	funcs := template.FuncMap{"can": func(op string) (bool, error) { return canDo(role, op) }}
	layout := template.Must(template.New("layout.html").Funcs(templateFuncs).Funcs(funcs).ParseFS(fsys, "templates/layout.html"))
	names, err := fs.Glob(fsys, "templates/*.html")
	if err != nil {
		panic(err)
	}
	out := make(map[string]*template.Template, len(names))
	for _, name := range names {
		base := path.Base(name)
		if base == "layout.html" {
			continue
		}
		out[base] = template.Must(template.Must(layout.Clone()).ParseFS(fsys, name))
	}
	return out
}

// render answers 200 with the page template name inside the layout.
func (c *Console) render(w http.ResponseWriter, r *http.Request, s *session, name, title, nav string, data any) error {
	return c.renderStatus(w, r, s, http.StatusOK, name, title, nav, data)
}

// renderStatus answers status with the page template name inside the
// layout, gzip-compressed when the browser accepts it. The page is rendered
// in full before anything is sent, so a template error is an error page,
// not half a page.
func (c *Console) renderStatus(w http.ResponseWriter, r *http.Request, s *session, status int, name, title, nav string, data any) error {
	var role store.Role
	if s != nil {
		role = s.Role
	}
	set, ok := templates()[role]
	if !ok {
		set = templates()[""] // a role the console does not know may do nothing
	}
	t, ok := set[name]
	if !ok {
		return fmt.Errorf("console: no template %q", name)
	}
	v := view{Title: title, Nav: nav, Navigation: navigationFor(role), Now: c.now(), Data: data}
	if s != nil {
		v.SignedIn, v.CSRF = true, s.CSRFToken
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", v); err != nil {
		return fmt.Errorf("render %s: %w", name, err)
	}
	writeCompressible(w, r, status, "text/html; charset=utf-8", buf.Bytes())
	return nil
}

// errorPage is the data of error.html.
type errorPage struct {
	Status  int
	Message string
}

// renderError answers status with an error page saying message.
func (c *Console) renderError(w http.ResponseWriter, r *http.Request, s *session, status int, message string) {
	err := c.renderStatus(w, r, s, status, "error.html", http.StatusText(status), "", errorPage{status, message})
	if err != nil {
		c.log.ErrorContext(r.Context(), "console error page", "error", err.Error())
		http.Error(w, http.StatusText(status), status)
	}
}

// statusClientClosedRequest is web's StatusClientClosedRequest (nginx's
// 499): the status of a request whose browser went away before it was
// answered.
const statusClientClosedRequest = 499

// clientClosed reports whether r's browser went away: its context was
// cancelled by net/http (the plain context.Canceled), not by a deadline or
// a cause of ours. The rule of web's errors.go, for the console's own
// database calls (its API calls are answered 499 by the API already).
func clientClosed(r *http.Request) bool {
	ctx := r.Context()
	return ctx.Err() != nil && context.Cause(ctx) == context.Canceled
}

// handleError answers a handler's error: an API error as a page with its
// status and detail (a 401 means the session ended: back to sign-in), a
// request whose browser went away as 499 with nothing sent and nothing
// logged above Debug, anything else as a logged 500.
func (c *Console) handleError(w http.ResponseWriter, r *http.Request, s *session, err error) {
	var ae *apiError
	if clientClosed(r) {
		c.log.DebugContext(context.WithoutCancel(r.Context()), "console: client closed request", "method", r.Method, "pattern", r.Pattern, "error", err.Error())
		w.WriteHeader(statusClientClosedRequest)
		return
	}
	if errors.As(err, &ae) {
		if ae.status == http.StatusUnauthorized {
			c.clearSessionCookie(w)
			http.Redirect(w, r, signInPath+"?next="+queryEscape(safeNext(r.URL.RequestURI())), http.StatusSeeOther)
			return
		}
		if ae.status < 500 {
			c.renderError(w, r, s, ae.status, ae.detail)
			return
		}
	}
	c.log.ErrorContext(r.Context(), "console page", "method", r.Method, "pattern", r.Pattern, "error", err.Error())
	c.renderError(w, r, s, http.StatusInternalServerError, "Something went wrong on our side. Try again in a moment.")
}

// percent returns part of whole in percent, 0..100, rounded down (0 when
// whole is 0).
func percent(part, whole int64) int64 {
	if whole <= 0 || part <= 0 {
		return 0
	}
	return min(100, part*100/whole)
}

// ago says how long before now t was, in the largest whole unit ("just
// now", "5 min ago", "3 h ago", "2 days ago"); an RFC 3339 string is
// parsed first, and an empty or unparsable one is "".
func ago(now time.Time, t any) string {
	var at time.Time
	switch v := t.(type) {
	case time.Time:
		at = v
	case string:
		p, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return ""
		}
		at = p
	case *string:
		if v == nil {
			return ""
		}
		return ago(now, *v)
	default:
		return ""
	}
	d := now.Sub(at)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h ago", int(d/time.Hour))
	default:
		return fmt.Sprintf("%d days ago", int(d/(24*time.Hour)))
	}
}

// writeCompressible answers status with body of type ctype, gzip-compressed
// when the request accepts it.
func writeCompressible(w http.ResponseWriter, r *http.Request, status int, ctype string, body []byte) {
	h := w.Header()
	h.Set("Content-Type", ctype)
	h.Add("Vary", "Accept-Encoding")
	if acceptsGzip(r) {
		h.Set("Content-Encoding", "gzip")
		body = gzipBytes(body, gzip.DefaultCompression) // per request: cheaper than the assets' best
	}
	h.Set("Content-Length", fmt.Sprint(len(body)))
	w.WriteHeader(status)
	w.Write(body) //nolint:errcheck // client gone
}

// acceptsGzip reports whether the request's Accept-Encoding lists gzip
// with a non-zero quality.
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			continue
		}
		q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
		return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
	}
	return false
}
