package carrier

// The core shared by Plivo and Vobiz. Vobiz's Voice API is a copy of
// Plivo's (same resources, JSON fields, XML and callback parameters); what
// differs is captured by plivoDialect: the base URL and path prefix, how
// requests authenticate and how webhooks are signed. This file holds the
// REST side (place, hang up, query a call); plivo_webhook.go the status
// table, the XML answer and the webhook checks; plivo_sign.go the signature
// schemes; plivo_provision.go the application create.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// plivoDialect is what differs between Plivo and Vobiz.
type plivoDialect struct {
	// provider is the provider name (Plivo or Vobiz): the key of
	// Options.BaseURLs and the prefix of errors.
	provider string
	// defaultBase is the API base URL used unless Options.BaseURLs
	// overrides it.
	defaultBase string
	// apiPrefix comes before /Account/{auth_id}/...: "/v1" (Plivo) or
	// "/api/v1" (Vobiz).
	apiPrefix string
	// headerAuth sends X-Auth-ID and X-Auth-Token (Vobiz) instead of HTTP
	// Basic auth_id:auth_token (Plivo).
	headerAuth bool
	// verify checks a webhook's signature headers for the request signed
	// with params (the form parameters the signature covers, when it does)
	// and returns the keys (nonces) that identify the signed request
	// (Status.ReplayKeys). A missing or wrong signature is an error wrapping
	// ErrForged.
	verify func(token string, w Webhook, params url.Values) (replayKeys []string, err error)
}

// plivoLike is the Carrier of one Plivo or Vobiz account. The auth token is
// only ever sent as a credential and used as the HMAC key of webhook
// signatures; it never appears in an error, a log line or a String method.
type plivoLike struct {
	d                *plivoDialect
	authID           string
	authToken        string
	machineDetection bool
	base             string // without trailing slash
	client           *http.Client
	now              func() time.Time
}

// newPlivoLike binds a configuration's credentials (auth_id, auth_token,
// machine_detection) to dialect d. Missing credentials are not checked
// here: the provider refuses the requests (AuthFailed) and no webhook
// verifies.
func newPlivoLike(d *plivoDialect, creds map[string]any, opts Options) *plivoLike {
	return &plivoLike{
		d:                d,
		authID:           credString(creds, "auth_id"),
		authToken:        credString(creds, "auth_token"),
		machineDetection: credBool(creds, "machine_detection"),
		base:             strings.TrimRight(opts.baseURL(d.provider, d.defaultBase), "/"),
		client:           opts.client(),
		now:              opts.now,
	}
}

// String, GoString and LogValue describe the carrier without its auth token,
// so printing or logging it (even with %+v or %#v) cannot leak it.
func (c *plivoLike) String() string {
	return c.d.provider + " carrier (auth_id " + c.authID + ")"
}

// GoString: see String.
func (c *plivoLike) GoString() string { return c.String() }

// LogValue: see String.
func (c *plivoLike) LogValue() slog.Value { return slog.StringValue(c.String()) }

// accountURL is the URL of a resource under the account, ending in "/" as
// both APIs write them: resource "Call" gives .../Account/{auth_id}/Call/.
func (c *plivoLike) accountURL(resource ...string) string {
	var b strings.Builder
	b.WriteString(c.base + c.d.apiPrefix + "/Account/" + url.PathEscape(c.authID) + "/")
	for _, r := range resource {
		b.WriteString(url.PathEscape(r))
		b.WriteString("/")
	}
	return b.String()
}

// plivoNumber formats an E.164 number as both APIs want it: without the
// leading "+" ("+14155550100" → "14155550100"). SIP URIs and anything else
// are sent as given.
func plivoNumber(n string) string {
	if strings.HasPrefix(n, "+") {
		return n[1:]
	}
	return n
}

// plivoPlaceBody is the make-call JSON body (Plivo CallCreateParams; Vobiz
// takes the same fields).
type plivoPlaceBody struct {
	From                   string `json:"from"`
	To                     string `json:"to"`
	AnswerURL              string `json:"answer_url"`
	AnswerMethod           string `json:"answer_method"`
	RingURL                string `json:"ring_url,omitempty"`
	RingMethod             string `json:"ring_method,omitempty"`
	HangupURL              string `json:"hangup_url,omitempty"`
	HangupMethod           string `json:"hangup_method,omitempty"`
	MachineDetection       string `json:"machine_detection,omitempty"`
	MachineDetectionURL    string `json:"machine_detection_url,omitempty"`
	MachineDetectionMethod string `json:"machine_detection_method,omitempty"`
	RingTimeout            int    `json:"ring_timeout,omitempty"`
	TimeLimit              int    `json:"time_limit,omitempty"`
}

// placeBody is the make-call body of call: numbers without "+", the answer
// URL asked with POST, the status URL as hangup_url and ring_url (both
// POST). Machine detection ("true", asynchronous, its verdict posted to the
// status URL) is asked for when the configuration's machine_detection or
// the call's MachineDetection is set. ring_timeout and time_limit are whole
// seconds rounded up, left out (the provider's defaults) when zero.
func (c *plivoLike) placeBody(call Call) plivoPlaceBody {
	b := plivoPlaceBody{
		From:         plivoNumber(call.From),
		To:           plivoNumber(call.To),
		AnswerURL:    call.AnswerURL,
		AnswerMethod: http.MethodPost,
	}
	if call.StatusURL != "" {
		b.HangupURL, b.HangupMethod = call.StatusURL, http.MethodPost
		b.RingURL, b.RingMethod = call.StatusURL, http.MethodPost
	}
	if (c.machineDetection || call.MachineDetection) && call.StatusURL != "" {
		b.MachineDetection = "true"
		b.MachineDetectionURL, b.MachineDetectionMethod = call.StatusURL, http.MethodPost
	}
	if call.RingTimeout > 0 {
		b.RingTimeout = max(ceilSeconds(call.RingTimeout), 1)
	}
	if call.TimeLimit > 0 {
		b.TimeLimit = ceilSeconds(call.TimeLimit)
	}
	return b
}

// plivoPlaced is the make-call answer: {"message": "call fired",
// "request_uuid": "...", "api_id": "..."}. request_uuid is a list for a
// bulk call, which we never place.
type plivoPlaced struct {
	Message     string          `json:"message"`
	RequestUUID json.RawMessage `json:"request_uuid"`
	APIID       string          `json:"api_id"`
}

// requestUUID returns the request_uuid, a string or the first of a list.
func (p plivoPlaced) requestUUID() string {
	var s string
	if json.Unmarshal(p.RequestUUID, &s) == nil {
		return s
	}
	var list []string
	if json.Unmarshal(p.RequestUUID, &list) == nil && len(list) > 0 {
		return list[0]
	}
	return ""
}

// Place creates the call (POST .../Account/{auth_id}/Call/). The provider
// answers with a request_uuid, which is the Placed id: the call's CallUUID
// only arrives in its callbacks (Status.RequestID ties them together).
// HTTP 429 is RateLimited (with the Retry-After hint), 401/403 AuthFailed,
// any other 4xx Rejected with the provider's message. A 5xx answer, an
// unreadable answer or a transport error is a plain error: the call may or
// may not have been created.
func (c *plivoLike) Place(ctx context.Context, call Call) (Placed, error) {
	var p plivoPlaced
	if err := c.do(ctx, http.MethodPost, c.accountURL("Call"), c.placeBody(call), &p); err != nil {
		return Placed{}, fmt.Errorf("%s create call: %w", c.d.provider, err)
	}
	id := p.requestUUID()
	if id == "" {
		return Placed{}, fmt.Errorf("%s create call: answer has no request_uuid", c.d.provider)
	}
	return Placed{ProviderCallID: id}, nil
}

// HangUp ends a call: DELETE .../Call/{id}/ for a call's CallUUID; when the
// provider does not know that call (404), id may still be the request_uuid
// of a call queued or not yet answered, cancelled with DELETE
// .../Request/{id}/. A 404 there too means the call is over, which is not an
// error. Other errors map as for Place.
func (c *plivoLike) HangUp(ctx context.Context, providerCallID string) error {
	if providerCallID == "" {
		return fmt.Errorf("%s hang up: empty call id", c.d.provider)
	}
	err := c.do(ctx, http.MethodDelete, c.accountURL("Call", providerCallID), nil, nil)
	if plivoNotFound(err) {
		err = c.do(ctx, http.MethodDelete, c.accountURL("Request", providerCallID), nil, nil)
		if plivoNotFound(err) {
			return nil
		}
	}
	if err != nil {
		return fmt.Errorf("%s hang up %s: %w", c.d.provider, providerCallID, err)
	}
	return nil
}

// Query asks for a call's status, trying in turn the live call (GET
// .../Call/{id}/?status=live: not final), the call detail record of an
// ended call (GET .../Call/{id}/: final, mapped by plivoCDRStatus) and a
// queued call request (GET .../Call/{id}/?status=queued: not final), each
// time moving on only when the provider answers 404. The first two know
// the call by its CallUUID, the last by the request_uuid Place returned. A
// call none of them knows is a Rejected *Error with HTTP 404.
func (c *plivoLike) Query(ctx context.Context, providerCallID string) (Status, error) {
	if providerCallID == "" {
		return Status{}, fmt.Errorf("%s query: empty call id", c.d.provider)
	}
	u := c.accountURL("Call", providerCallID)
	var live plivoLiveCall
	err := c.do(ctx, http.MethodGet, u+"?status=live", nil, &live)
	if err == nil {
		return live.status(providerCallID), nil
	}
	if plivoNotFound(err) {
		var cdr plivoCDR
		if err = c.do(ctx, http.MethodGet, u, nil, &cdr); err == nil {
			return cdr.status(providerCallID), nil
		}
	}
	if plivoNotFound(err) {
		var q plivoQueuedCall
		if err = c.do(ctx, http.MethodGet, u+"?status=queued", nil, &q); err == nil {
			return q.status(providerCallID), nil
		}
	}
	return Status{}, fmt.Errorf("%s query %s: %w", c.d.provider, providerCallID, err)
}

// plivoNotFound reports whether err is the provider's 404.
func plivoNotFound(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.HTTPStatus == http.StatusNotFound
}

// plivoError is the error body of both APIs: {"api_id": "...", "error":
// "..."}; "error" may also be an object of field errors, and some answers
// carry "message" instead.
type plivoError struct {
	APIID   string          `json:"api_id"`
	Error   json.RawMessage `json:"error"`
	Message string          `json:"message"`
}

// text is the error's message: the "error" string, the "error" object as
// compact JSON, or "message".
func (e plivoError) text() string {
	var s string
	if json.Unmarshal(e.Error, &s) == nil && s != "" {
		return s
	}
	if len(e.Error) > 0 && string(e.Error) != "null" {
		return string(e.Error)
	}
	return e.Message
}

// do sends one request with the dialect's authentication (a JSON body when
// body is not nil) and decodes a 2xx JSON answer into out (when not nil).
// Non-2xx answers map through answerError (see Place).
func (c *plivoLike) do(ctx context.Context, method, u string, body, out any) error {
	_, err := c.api().do(ctx, method, u, body, out)
	return err
}

// api is the dialect's REST API as this carrier's credentials call it.
func (c *plivoLike) api() restAPI {
	return restAPI{client: c.client, now: c.now, auth: func(r *http.Request) error { c.authenticate(r); return nil },
		reason: func(data []byte) (string, string) {
			var pe plivoError
			_ = json.Unmarshal(data, &pe) // a non-JSON body leaves pe empty
			return "", pe.text()
		}}
}

// authenticate adds the dialect's credentials to req.
func (c *plivoLike) authenticate(req *http.Request) {
	if c.d.headerAuth {
		req.Header.Set("X-Auth-ID", c.authID)
		req.Header.Set("X-Auth-Token", c.authToken)
		return
	}
	req.SetBasicAuth(c.authID, c.authToken)
}
