package web

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"

	"github.com/julienschmidt/httprouter"

	"github.com/outdial/outdial/dialer/carrier"
	"github.com/outdial/outdial/store"
)

// provision creates the provider application of a configuration whose
// application field (Plivo and Vobiz application_id, Telnyx connection_id,
// Cloudonix application_name) is absent or empty, and stores the created
// id in creds (API.md 2.3). The application points at this service's
// application-level callback URLs. A provider's refusal is answered as the
// contract says (422 provider_auth_failed, 404, 502) and nothing is saved.
func (s *Server) provision(ctx context.Context, r *http.Request, org int64, name, provider string, creds store.Credentials) error {
	if carrier.ApplicationField(provider) == "" {
		return nil
	}
	base := s.publicBase(r)
	t := carrier.Target{
		Name:      applicationName(org, name),
		AnswerURL: base + "/api/v1/telephony/" + provider + "/answer",
		StatusURL: base + "/api/v1/telephony/" + provider + "/status",
	}
	field, value, err := carrier.Provision(ctx, provider, creds, t, s.carriers)
	var pe *carrier.ProvisionError
	switch {
	case errors.As(err, &pe) && pe.Status == http.StatusUnprocessableEntity:
		var p Problems
		p.Add([]any{"body", "config", pe.Field}, pe.Type, pe.Message, maskedInput(provider, pe.Field, creds[pe.Field]), nil)
		return p.Err()
	case errors.As(err, &pe) && pe.Status == http.StatusBadGateway:
		// The client learns which provider failed; the transport error
		// (resolver and peer addresses) goes to the log only.
		return &httpError{status: http.StatusBadGateway, detail: provider + ": " + pe.Message, cause: pe.Err}
	case errors.As(err, &pe):
		return errStatus(pe.Status, pe.Message)
	case err != nil:
		return &httpError{status: http.StatusBadGateway, detail: provider + ": provider unreachable", cause: err}
	}
	if field != "" {
		creds[field] = value
	}
	return nil
}

// applicationName names an auto-created application after the organization
// and configuration, with a random suffix: providers keep application names
// unique, and an update that replaces the application must not collide
// with the one it replaces.
func applicationName(org int64, name string) string {
	var b [4]byte
	rand.Read(b[:]) //nolint:errcheck // crypto/rand never fails
	return "outdial-" + strconv.FormatInt(org, 10) + "-" + name + "-" + hex.EncodeToString(b[:])
}

// maskedInput is a stored credential as a 422 may echo it.
func maskedInput(provider, field string, v any) any {
	spec, _ := carrier.Lookup(provider)
	if f, ok := spec.Field(field); ok {
		if s, isStr := v.(string); isStr {
			return f.MaskedInput(s)
		}
	}
	return v
}

// publicBase is the service's public URL, or the request's own host when
// none is configured.
func (s *Server) publicBase(r *http.Request) string {
	if s.publicURL != "" {
		return s.publicURL
	}
	return "http://" + r.Host
}

// applicationAnswer answers a provider's answer request to an auto-created
// application's URL (a call no campaign placed, e.g. an inbound call): the
// provider's markup that hangs up. Nothing is read or changed.
func (s *Server) applicationAnswer(w http.ResponseWriter, _ *http.Request, ps httprouter.Params) error {
	c, err := carrier.New(ps.ByName("provider"), nil, s.carriers)
	if err != nil {
		return errStatus(http.StatusNotFound, "Not Found")
	}
	ct, body := c.AnswerMarkup(carrier.Answer{})
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(http.StatusOK)
	w.Write(body) //nolint:errcheck // provider gone
	return nil
}

// applicationStatus takes a status event sent to an auto-created
// application's URL: events of calls the dialer placed go to their own
// per-attempt URLs, so these are acknowledged and dropped.
func (s *Server) applicationStatus(w http.ResponseWriter, _ *http.Request, ps httprouter.Params) error {
	if _, ok := carrier.Lookup(ps.ByName("provider")); !ok {
		return errStatus(http.StatusNotFound, "Not Found")
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
