package web

import (
	"errors"
	"io"
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/outdial/outdial/dialer"
	"github.com/outdial/outdial/dialer/carrier"
)

// maxWebhookBytes bounds a provider webhook body.
const maxWebhookBytes = 1 << 20

// webhook reads a provider request into a carrier.Webhook whose PublicURL is
// the URL the provider was given: the service's public URL plus the request
// path and query exactly as received.
func (s *Server) webhook(r *http.Request) (carrier.Webhook, error) {
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxWebhookBytes))
	if err != nil {
		return carrier.Webhook{}, errStatus(http.StatusRequestEntityTooLarge, "Request body too large")
	}
	base := s.publicURL
	if base == "" {
		base = "http://" + r.Host
	}
	return carrier.Webhook{Request: r, Body: body, PublicURL: base + r.URL.RequestURI()}, nil
}

func webhookErr(err error) error {
	if errors.Is(err, dialer.ErrForbidden) {
		return errStatus(http.StatusForbidden, "Forbidden")
	}
	if errors.Is(err, dialer.ErrMalformed) {
		return errStatus(http.StatusBadRequest, "the webhook's payload cannot be read")
	}
	return err
}

// webhookCall is a provider request for one attempt, not yet verified: its id,
// the provider named in the path, its token and the request itself.
type webhookCall struct {
	provider  string
	attemptID int64
	token     string
	hook      carrier.Webhook
}

// readWebhook parses what every provider webhook carries; a service without
// a dialer answers 503.
func (s *Server) readWebhook(r *http.Request, ps httprouter.Params) (webhookCall, error) {
	id, err := pathID(ps, "attempt_id")
	if err != nil {
		return webhookCall{}, err
	}
	if s.dialer == nil {
		return webhookCall{}, errStatus(http.StatusServiceUnavailable, "the dialer is not running")
	}
	hook, err := s.webhook(r)
	if err != nil {
		return webhookCall{}, err
	}
	return webhookCall{provider: ps.ByName("provider"), attemptID: id, token: r.URL.Query().Get("t"), hook: hook}, nil
}

// telephonyStatus takes a provider's call-status webhook.
func (s *Server) telephonyStatus(w http.ResponseWriter, r *http.Request, ps httprouter.Params) error {
	c, err := s.readWebhook(r, ps)
	if err != nil {
		return err
	}
	if err := s.dialer.HandleStatus(r.Context(), c.provider, c.attemptID, c.token, c.hook); err != nil {
		return webhookErr(err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// telephonyAnswer answers a provider's question of what to do with an
// answered call.
func (s *Server) telephonyAnswer(w http.ResponseWriter, r *http.Request, ps httprouter.Params) error {
	c, err := s.readWebhook(r, ps)
	if err != nil {
		return err
	}
	ct, body, err := s.dialer.Answer(r.Context(), c.provider, c.attemptID, c.token, c.hook)
	if err != nil {
		return webhookErr(err)
	}
	if ct == "" {
		w.WriteHeader(http.StatusNoContent) // a status event sent to the answer URL
		return nil
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(http.StatusOK)
	w.Write(body) //nolint:errcheck // provider gone
	return nil
}
