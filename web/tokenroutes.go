package web

import (
	"net/http"
	"strings"

	"github.com/julienschmidt/httprouter"
)

// Routes verified by an attempt's webhook token and served before the
// router: a static segment ("opt-out", "agent") beside the webhooks'
// :provider wildcard at the same position panics httprouter v1.3.0, so
// ServeHTTP routes these paths first (routeTokenPaths) and answers OPTIONS,
// a trailing slash and the other methods as the router would;
// registerRoutes lists them in Routes.

// tokenRoute is one such route: POST only, one :attempt_id segment.
type tokenRoute struct {
	route  string // in httprouter syntax, as Routes lists it
	prefix string // route up to its wildcard
	handle publicHandler
}

func (s *Server) tokenRoutes() []tokenRoute {
	return []tokenRoute{
		{optOutRoute, optOutPrefix, s.optOut},
		{agentEventsRoute, agentEventsPrefix, s.agentEvent},
	}
}

// routeTokenPaths serves r when its path is one of tokenRoutes' prefixes
// and one non-empty segment, and reports whether it did. A POST to that
// path with a trailing slash is redirected (307) to it, as the router
// redirects its own paths; any other path is the router's.
func (s *Server) routeTokenPaths(w http.ResponseWriter, r *http.Request) bool {
	for _, tr := range s.tokenRoutes() {
		rest, ok := strings.CutPrefix(r.URL.Path, tr.prefix)
		if !ok {
			continue
		}
		id, slash := strings.CutSuffix(rest, "/")
		if id == "" || strings.Contains(id, "/") || (slash && r.Method != http.MethodPost) {
			return false
		}
		requestInfoOf(r.Context()).setRoute(tr.route)
		if slash {
			u := *r.URL
			u.Path = tr.prefix + id
			http.Redirect(w, r, u.String(), http.StatusTemporaryRedirect)
			return true
		}
		const allow = "OPTIONS, POST"
		switch r.Method {
		case http.MethodPost:
			if err := tr.handle(w, r, httprouter.Params{{Key: "attempt_id", Value: id}}); err != nil {
				s.writeError(w, r, err)
			}
		case http.MethodOptions:
			w.Header().Set("Allow", allow)
		default:
			w.Header().Set("Allow", allow)
			s.router.MethodNotAllowed.ServeHTTP(w, r)
		}
		return true
	}
	return false
}
