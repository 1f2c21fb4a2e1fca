// Package web is Outdial's HTTP layer: every route (routes.go), API-key
// authentication and tenancy, one file per resource whose handlers always
// decode → validate → call the store → respond, and errors.go, which turns any
// error into the contract's {"detail": ...} body and status.
package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/outdial/outdial/dialer"
	"github.com/outdial/outdial/dialer/carrier"
	"github.com/outdial/outdial/dialer/phone"
	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/web/console"
	"github.com/outdial/outdial/web/roles"
)

// Config holds what the HTTP layer needs from the outside.
type Config struct {
	DB      *store.DB
	Log     *slog.Logger
	Version string
	// Uploads presigns contact-file uploads.
	Uploads Uploader
	// MaxUploadBytes bounds file_size of an upload (default
	// DefaultMaxUploadBytes).
	MaxUploadBytes int64
	// Objects, when set, is the bundled S3 endpoint; it serves every request
	// whose path starts with ObjectsPrefix or is ObjectsPrefix without its
	// trailing slash (the bucket itself), unauthenticated by API key (it
	// verifies S3 signatures itself).
	Objects       http.Handler
	ObjectsPrefix string
	// Dialer runs campaigns and takes provider webhooks; nil in tests of
	// other resources.
	Dialer *dialer.Engine
	// PublicURL is the base URL providers reach the service at; webhook
	// signatures are checked over it.
	PublicURL string
	// Carriers are the provider options (API base URLs) auto-created
	// provider applications are made with.
	Carriers carrier.Options
	// Limits are the body deadlines, disk reserve and upload quota
	// (limits.go); the zero value enforces none.
	Limits Limits
	// TLS says the service terminates TLS itself (serve --tls-cert or
	// --acme-domain, API.md 18): every response the Server writes carries
	// Strict-Transport-Security (HSTS), and every cookie it sets is Secure,
	// whatever PublicURL says.
	TLS bool
	// Node names this process among the nodes sharing the database (serve
	// --node-name, API.md 16); the health check reports it. Empty: "local",
	// the dialer's default name.
	Node string
	// ConsoleNow is the console's clock (relative times on its pages); nil:
	// time.Now. Sessions expire on the store's clock (DB.Now).
	ConsoleNow func() time.Time
}

// Server serves the Outdial API. Build it with New; it is an http.Handler.
type Server struct {
	db        *store.DB
	uploads   Uploader
	maxUpload int64
	objects   http.Handler
	objPrefix string
	dialer    *dialer.Engine
	publicURL string
	carriers  carrier.Options
	limits    Limits
	quota     *uploadQuota
	log       *slog.Logger
	version   string
	node      string // Config.Node
	tls       bool   // Config.TLS
	router    *httprouter.Router
	routes    []Route
	hub       *eventHub        // the live event streams (eventhub.go); nil without a dialer
	streams   *streamGuard     // their bounds and credential checks (streamguard.go)
	console   *console.Console // the operator console (console.go)
}

// Route is one registered method and path (httprouter syntax, ":name" for a
// wildcard).
type Route struct {
	Method string
	Path   string
}

// New returns a Server with every route registered.
func New(cfg Config) *Server {
	s := &Server{db: cfg.DB, log: cfg.Log, version: cfg.Version, uploads: cfg.Uploads,
		maxUpload: cfg.MaxUploadBytes, objects: cfg.Objects, objPrefix: cfg.ObjectsPrefix,
		dialer: cfg.Dialer, publicURL: strings.TrimRight(cfg.PublicURL, "/"), carriers: cfg.Carriers,
		limits: cfg.Limits, quota: newUploadQuota(cfg.Limits), tls: cfg.TLS, node: cfg.Node}
	if s.maxUpload <= 0 {
		s.maxUpload = DefaultMaxUploadBytes
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.version == "" {
		s.version = "dev"
	}
	if s.node == "" {
		s.node = "local"
	}
	s.router = httprouter.New()
	s.router.NotFound = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requestInfoOf(r.Context()).setRoute(routeNotFound)
		writeJSON(w, http.StatusNotFound, map[string]string{"detail": "Not Found"})
	})
	s.router.MethodNotAllowed = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"detail": "Method Not Allowed"})
	})
	s.router.PanicHandler = func(w http.ResponseWriter, r *http.Request, v any) {
		if v == http.ErrAbortHandler {
			// A handler ending its response on purpose (a report whose
			// stream failed): net/http closes the connection unfinished.
			panic(v)
		}
		s.log.ErrorContext(r.Context(), "panic in handler", slog.String("method", r.Method),
			slog.String("path", phone.MaskText(r.URL.Path)), slog.String("panic", phone.MaskText(fmt.Sprint(v))))
		writeJSON(w, http.StatusInternalServerError, map[string]string{"detail": "Internal Server Error"})
	}
	if s.dialer != nil {
		s.hub = newEventHub(s.db, s.dialer, s.log)
	}
	s.streams = newStreamGuard(s.db, s.log, cfg.Limits.Streams)
	s.registerRoutes()
	s.console = s.newConsole(cfg)
	return s
}

// serve routes r: the bundled object store, the opt-out (optout.go) and
// the agent's events (agentevents.go), the
// console (console.go), then the router; over TLS it sets HSTS first. ServeHTTP (requestlog.go) calls it
// and logs the request.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if s.tls {
		w.Header().Set("Strict-Transport-Security", HSTS)
	}
	r, done := s.guardBody(w, r)
	defer done()
	if s.isObjectPath(r.URL.Path) {
		requestInfoOf(r.Context()).setRoute(s.objPrefix + "*key")
		s.objects.ServeHTTP(w, r)
		return
	}
	if s.routeTokenPaths(w, r) {
		return
	}
	if s.routeConsole(w, r) {
		return
	}
	s.router.ServeHTTP(w, r)
}

// Routes returns every registered route, in registration order.
func (s *Server) Routes() []Route { return append([]Route(nil), s.routes...) }

// publicHandler serves a route that needs no API key.
type publicHandler func(w http.ResponseWriter, r *http.Request, ps httprouter.Params) error

// authedHandler serves a route on behalf of an authenticated organization.
type authedHandler func(w http.ResponseWriter, r *http.Request, ps httprouter.Params, org int64) error

// handle registers handle for method and path, and for HEAD too when method
// is GET (API.md 13: HEAD is answered wherever GET is, with the same status
// and headers; net/http sends no body, and a handler whose body is costly
// to produce checks r.Method). The request log gets path as the route.
func (s *Server) handle(method, path string, handle httprouter.Handle) {
	logged := func(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
		requestInfoOf(r.Context()).setRoute(path)
		handle(w, r, ps)
	}
	s.routes = append(s.routes, Route{method, path})
	s.router.Handle(method, path, logged)
	if method == http.MethodGet {
		s.routes = append(s.routes, Route{http.MethodHead, path})
		s.router.Handle(http.MethodHead, path, logged)
	}
}

// public registers a route that needs no API key (and its HEAD; see handle).
func (s *Server) public(method, path string, h publicHandler) {
	s.handle(method, path, func(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
		if err := h(w, r, ps); err != nil {
			s.writeError(w, r, err)
		}
	})
}

// authed registers a route that needs an API key (and its HEAD; see
// handle). The handler gets the key's organization, which the request log
// reports too; the key itself is in the request's context (principalOf).
func (s *Server) authed(method, path string, h authedHandler) { s.authedAfter(method, path, nil, h) }

// authedAfter is authed with pre run first, before authentication: an
// error it returns is the answer (the event streams' bounds, which refuse
// a credential known to hold its most streams without a database read).
// The route's entry in web/roles decides which roles may call
// it (403 otherwise, before the handler runs) and, for a route that changes
// something, what its audit entry says (audit.go); a route without one
// panics here, at registration.
func (s *Server) authedAfter(method, path string, pre func(http.ResponseWriter, *http.Request) error, h authedHandler) {
	op, ok := roles.Of(method, path)
	if !ok {
		panic("web: route " + method + " " + path + " has no entry in web/roles")
	}
	s.handle(method, path, func(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
		var p store.Principal
		var err error
		if pre != nil {
			err = pre(w, r)
		}
		if err == nil {
			p, err = s.authenticate(r)
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		requestInfoOf(r.Context()).setOrg(p.OrganizationID)
		r = r.WithContext(context.WithValue(r.Context(), principalKey{}, p))
		if op.Action != "" {
			s.audited(w, r, ps, p, op, path, h)
			return
		}
		if !p.Role.Allows(op.Need) {
			err = errStatus(http.StatusForbidden, op.Refusal(p.Role))
		} else {
			err = h(w, r, ps, p.OrganizationID)
		}
		if err != nil {
			s.writeError(w, r, err)
		}
	})
}

// principalKey is the context key of the authenticated store.Principal.
type principalKey struct{}

// principalOf returns the API key and organization that authenticated r;
// the zero Principal outside an authed handler.
func principalOf(r *http.Request) store.Principal {
	p, _ := r.Context().Value(principalKey{}).(store.Principal)
	return p
}

// authenticate finds the request's API key: X-API-Key, else
// "Authorization: Bearer <key>", else the console's session cookie
// (sessionPrincipal, console.go: a request that changes something needs the
// session's CSRF token too). Missing, or a session that has ended: 401 "Not
// authenticated"; unknown or revoked key: 401 "Invalid API key"; both with
// WWW-Authenticate: Bearer.
func (s *Server) authenticate(r *http.Request) (store.Principal, error) {
	if p, ok := r.Context().Value(principalKey{}).(store.Principal); ok {
		// A read the server makes itself for a request it authenticated
		// already (audit.go's snapshot): the context key is this
		// package's, no request from outside carries it.
		return p, nil
	}
	key := requestKey(r)
	if key == "" {
		return s.sessionPrincipal(r)
	}
	p, err := s.db.Authenticate(r.Context(), key)
	if store.ErrorCode(err) == store.ENOTFOUND {
		return store.Principal{}, &authError{"Invalid API key"}
	}
	return p, err
}

// requestKey returns the API key r carries: X-API-Key, else
// "Authorization: Bearer <key>"; "" when neither.
func requestKey(r *http.Request) string {
	key := strings.TrimSpace(r.Header.Get("X-API-Key"))
	if key == "" {
		scheme, token, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
		if ok && strings.EqualFold(scheme, "Bearer") {
			key = strings.TrimSpace(token)
		}
	}
	return key
}

// authError is a 401 with WWW-Authenticate: Bearer.
type authError struct{ detail string }

func (e *authError) Error() string { return e.detail }

// pathResources names what each integer path parameter identifies, for 404
// messages.
var pathResources = map[string]string{
	"config_id":       "telephony configuration",
	"phone_number_id": "phone number",
	"workflow_id":     "workflow",
	"campaign_id":     "campaign",
	"attempt_id":      "call attempt",
	"suppression_id":  "suppression",
	"user_id":         "user",
	"key_id":          "API key",
	"audit_id":        "audit entry",
}

// pathID parses the integer path parameter name. A value that is not an
// integer is 422 int_parsing at ["path", name]; an integer too large for
// int64 cannot name anything and is 404.
func pathID(ps httprouter.Params, name string) (int64, error) {
	what := pathResources[name]
	raw := ps.ByName(name)
	id, err := strconv.ParseInt(strings.TrimSpace(raw), 10, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) && strings.Trim(strings.TrimSpace(raw), "+-0123456789") == "" {
			return 0, errStatus(http.StatusNotFound, what+" not found")
		}
		return 0, Problems{{Loc: []any{"path", name}, Msg: "Input should be a valid integer, unable to parse string as an integer",
			Type: "int_parsing", Input: raw}}.Err()
	}
	return id, nil
}

// pathIDs parses several integer path parameters, reporting every bad one.
func pathIDs(ps httprouter.Params, names ...string) ([]int64, error) {
	var all Problems
	ids := make([]int64, len(names))
	for i, n := range names {
		id, err := pathID(ps, n)
		var ve *ValidationError
		switch {
		case errors.As(err, &ve):
			all = append(all, ve.Problems...)
		case err != nil:
			return nil, err
		}
		ids[i] = id
	}
	return ids, all.Err()
}
