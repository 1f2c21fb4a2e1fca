package web

import (
	"net/http"
	"strconv"

	"github.com/julienschmidt/httprouter"

	"github.com/outdial/outdial/store"
)

// The opt-out from the call (API.md 12.4): the voice agent, which receives
// the attempt id and its webhook token in its stream parameters, posts
// /api/v1/telephony/opt-out/{attempt_id}?t=<token> when the callee asks not
// to be called again, and the attempt's number goes on its organization's
// suppression list.
//
// httprouter v1.3.0 panics on the static segment "opt-out" beside the
// webhooks' :provider wildcard at the same position, so ServeHTTP routes
// this path before the router (tokenroutes.go); registerRoutes lists it in
// Routes.

// optOutRoute is the opt-out route in httprouter syntax, as Routes lists it.
const optOutRoute = "/api/v1/telephony/opt-out/:attempt_id"

// optOutPrefix is optOutRoute up to its wildcard.
const optOutPrefix = "/api/v1/telephony/opt-out/"

// optOutReason is the reason of the entries the opt-out adds.
const optOutReason = "opted out during the call"

// optOut adds the attempt's number to its organization's suppression list
// with source opt_out:<attempt_id>, no expiry, and answers 204. The token
// is checked before anything is looked up, so a wrong or missing token is
// 403 whether the attempt exists or not (ids cannot be probed) and changes
// nothing; a right token for an attempt that no longer exists (its campaign
// was deleted) is 404. Idempotent: a number already on the list stays as it
// is, except that an entry that would expire no longer does.
func (s *Server) optOut(w http.ResponseWriter, r *http.Request, ps httprouter.Params) error {
	id, err := pathID(ps, "attempt_id")
	if err != nil {
		return err
	}
	if s.dialer == nil {
		return errStatus(http.StatusServiceUnavailable, "the dialer is not running")
	}
	if !s.dialer.ValidToken(id, r.URL.Query().Get("t")) {
		return errStatus(http.StatusForbidden, "Forbidden")
	}
	ctx := r.Context()
	a, err := s.db.GetAttempt(ctx, id)
	if err != nil {
		return err
	}
	org, err := s.db.CampaignOrganization(ctx, a.CampaignID)
	if store.ErrorCode(err) == store.ENOTFOUND {
		return errStatus(http.StatusNotFound, "call attempt "+strconv.FormatInt(id, 10)+" not found")
	}
	if err != nil {
		return err
	}
	res, err := s.db.AddSuppressions(ctx, org, store.NewSuppressions{Reason: optOutReason,
		Source: store.SourceOptOut + ":" + strconv.FormatInt(id, 10)}, []string{a.PhoneNumber})
	if err != nil {
		return err
	}
	if res.Added > 0 {
		s.suppressionsAdded(ctx, org)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
