package carrier

// Cloudonix over its REST API (api.cloudonix.io), with net/http only. This
// file holds the REST requests (outbound call from application, session
// fetch and delete, voice-application create) and the mapping of Cloudonix
// answers to *Error; cloudonix_webhook.go holds the status table, the CXML
// answer and the parsing of session updates and voice-application requests.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// cloudonixBaseURL is Cloudonix's REST API base URL, used unless
// Options.BaseURLs["cloudonix"] (OUTDIAL_CLOUDONIX_API_URL) overrides it.
const cloudonixBaseURL = "https://api.cloudonix.io"

// cloudonixProfileKey is the session profile property that carries our
// attempt id, so the session (and its CDR) can be matched to the attempt
// from Cloudonix's side too.
const cloudonixProfileKey = "outdial-attempt-id"

// cloudonixDefaultAppName names an auto-created voice application when the
// Target has no name.
const cloudonixDefaultAppName = "outdial"

// cloudonix is the Carrier of one Cloudonix domain. The bearer token is only
// ever sent in the Authorization header; it never appears in an error, a log
// line or a String method.
type cloudonix struct {
	bearerToken string
	domain      string // domain_id: the domain's name or numeric id
	application string // application_name, "" when none
	base        string // without trailing slash
	client      *http.Client
	now         func() time.Time
}

// newCloudonix binds a Cloudonix configuration's credentials (bearer_token,
// domain_id, application_name). Missing credentials are not checked here:
// Cloudonix refuses the requests (AuthFailed).
func newCloudonix(creds map[string]any, opts Options) (Carrier, error) {
	return &cloudonix{
		bearerToken: credString(creds, "bearer_token"),
		domain:      strings.TrimSpace(credString(creds, "domain_id")),
		application: credString(creds, "application_name"),
		base:        strings.TrimRight(opts.baseURL(Cloudonix, cloudonixBaseURL), "/"),
		client:      opts.client(),
		now:         opts.now,
	}, nil
}

// String, GoString and LogValue describe the carrier without its bearer
// token, so printing or logging it (even with %+v or %#v) cannot leak it.
func (c *cloudonix) String() string { return "cloudonix carrier (domain " + c.domain + ")" }

// GoString: see String.
func (c *cloudonix) GoString() string { return c.String() }

// LogValue: see String.
func (c *cloudonix) LogValue() slog.Value { return slog.StringValue(c.String()) }

// callsURL is /calls/{domain} followed by rest ("/application",
// "/sessions/{token}").
func (c *cloudonix) callsURL(rest string) string {
	return c.base + "/calls/" + url.PathEscape(c.domain) + rest
}

// cloudonixCallRequest is the JSON body of POST /calls/{domain}/application.
// Exactly one of Application and URL is set: URL (the attempt's answer URL)
// whenever the call has one, so the answered call fetches the per-attempt
// CXML; Application (the configuration's application_name) only otherwise.
type cloudonixCallRequest struct {
	Destination string `json:"destination"`
	CallerID    string `json:"caller-id"`
	Application string `json:"application,omitempty"`
	URL         string `json:"url,omitempty"`
	Callback    string `json:"callback,omitempty"`
	// TimeLimit bounds the whole call (seconds).
	TimeLimit int `json:"timeLimit,omitempty"`
	// Timeout is the ring timeout (seconds), as Cloudonix integrations send
	// it; Cloudonix's published field list does not name it.
	Timeout int               `json:"timeout,omitempty"`
	Profile map[string]string `json:"profile,omitempty"`
}

// placeRequest is the create-call body of call. Numbers go out in E.164 with
// "+" (Cloudonix accepts both forms and documents caller ids as
// "+16175551212"). Machine detection is not requested: Cloudonix has no
// documented answering-machine detection for outbound API calls.
func (c *cloudonix) placeRequest(call Call) cloudonixCallRequest {
	r := cloudonixCallRequest{
		Destination: call.To,
		CallerID:    call.From,
		URL:         call.AnswerURL,
		Callback:    call.StatusURL,
		Profile:     map[string]string{cloudonixProfileKey: strconv.FormatInt(call.AttemptID, 10)},
	}
	if r.URL == "" {
		r.Application = c.application
	}
	if call.TimeLimit > 0 {
		r.TimeLimit = ceilSeconds(call.TimeLimit)
	}
	if call.RingTimeout > 0 {
		r.Timeout = max(ceilSeconds(call.RingTimeout), 1)
	}
	return r
}

// cloudonixPlaced is the part of the create-call answer we read.
type cloudonixPlaced struct {
	Token string `json:"token"`
}

// Place creates the call (POST /calls/{domain}/application). A 2xx answer
// with a session token is Placed (the token is the ProviderCallID); HTTP 429
// is RateLimited (Cloudonix allows 10 requests per domain per 10 s) with the
// Retry-After hint when given, 401/403 AuthFailed, any other 4xx Rejected. A
// 5xx answer, an unreadable answer or a transport error is a plain error: the
// call may or may not have been created.
func (c *cloudonix) Place(ctx context.Context, call Call) (Placed, error) {
	var p cloudonixPlaced
	if err := c.do(ctx, http.MethodPost, c.callsURL("/application"), c.placeRequest(call), &p); err != nil {
		return Placed{}, fmt.Errorf("cloudonix create call: %w", err)
	}
	if p.Token == "" {
		return Placed{}, errors.New("cloudonix create call: answer has no session token")
	}
	return Placed{ProviderCallID: p.Token}, nil
}

// HangUp ends the session (DELETE /calls/{domain}/sessions/{token}), which
// cancels a ringing call and hangs up an answered one. A session Cloudonix
// no longer has (404: the call has ended) is not an error. Errors map as for
// Place.
func (c *cloudonix) HangUp(ctx context.Context, providerCallID string) error {
	if providerCallID == "" {
		return errors.New("cloudonix hang up: empty session token")
	}
	err := c.do(ctx, http.MethodDelete, c.callsURL("/sessions/"+url.PathEscape(providerCallID)), nil, nil)
	var e *Error
	if errors.As(err, &e) && (e.HTTPStatus == http.StatusNotFound || e.HTTPStatus == http.StatusGone) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cloudonix hang up %s: %w", providerCallID, err)
	}
	return nil
}

// Query fetches the session (GET /calls/{domain}/sessions/{token}) and maps
// it like a session update (see cloudonixStates). An unknown token is a
// Rejected *Error (HTTP 404).
func (c *cloudonix) Query(ctx context.Context, providerCallID string) (Status, error) {
	if providerCallID == "" {
		return Status{}, errors.New("cloudonix query: empty session token")
	}
	var raw json.RawMessage
	if err := c.do(ctx, http.MethodGet, c.callsURL("/sessions/"+url.PathEscape(providerCallID)), nil, &raw); err != nil {
		return Status{}, fmt.Errorf("cloudonix query %s: %w", providerCallID, err)
	}
	ev, err := cloudonixDecode(raw, nil)
	if err != nil {
		return Status{}, fmt.Errorf("cloudonix query %s: %w", providerCallID, err)
	}
	if ev.status == "" {
		return Status{}, fmt.Errorf("cloudonix query %s: session has no status", providerCallID)
	}
	s := ev.toStatus()
	if s.ProviderCallID == "" {
		s.ProviderCallID = providerCallID
	}
	return s, nil
}

// do sends one request with the bearer token (JSON body when body is not
// nil) and decodes a 2xx JSON answer into out (when not nil). Non-2xx
// answers become errors as Place documents.
func (c *cloudonix) do(ctx context.Context, method, u string, body, out any) error {
	_, err := c.api().do(ctx, method, u, body, out)
	return err
}

// api is the Cloudonix REST API as this carrier's bearer token calls it.
func (c *cloudonix) api() restAPI {
	return restAPI{client: c.client, now: c.now, auth: bearer(c.bearerToken), reason: cloudonixErrorBody}
}

// cloudonixErrorBody reads the reason out of a Cloudonix error answer. The
// body shape is not documented; integrations read "error" or "message",
// either at the top level or inside an "error" object, with an optional
// "code". A body that is not JSON gives its first line (bounded).
func cloudonixErrorBody(data []byte) (code, msg string) {
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		s := strings.TrimSpace(string(data))
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			s = s[:i]
		}
		if len(s) > 200 {
			s = s[:200]
		}
		return "", s
	}
	if inner, ok := m["error"].(map[string]any); ok {
		return cloudonixScalar(inner["code"]), cloudonixFirst(cloudonixScalar(inner["message"]), cloudonixScalar(m["message"]))
	}
	return cloudonixScalar(m["code"]), cloudonixFirst(cloudonixScalar(m["message"]), cloudonixScalar(m["error"]))
}

// cloudonixFirst returns the first non-empty value, "" when all are empty.
func cloudonixFirst(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// cloudonixApplication is the voice-application resource: the create body
// and the part of the answer we read.
type cloudonixApplication struct {
	Name   string `json:"name"`
	Type   string `json:"type,omitempty"`
	URL    string `json:"url,omitempty"`
	Method string `json:"method,omitempty"`
}

// provisionCloudonix creates a CXML voice application in the configuration's
// domain (POST /customers/self/domains/{domain}/applications) whose start URL
// is t.AnswerURL, fetched with POST, and returns its name (the
// application_name to store; Cloudonix addresses applications by name).
// Failures map with provisionFailed: 401/403 at bearer_token, 404 (domain not
// found) as 404, another 4xx (a name already taken) at application_name.
func provisionCloudonix(ctx context.Context, creds map[string]any, t Target, opts Options) (string, error) {
	c := &cloudonix{
		bearerToken: credString(creds, "bearer_token"),
		domain:      strings.TrimSpace(credString(creds, "domain_id")),
		base:        strings.TrimRight(opts.baseURL(Cloudonix, cloudonixBaseURL), "/"),
		client:      opts.client(),
		now:         opts.now,
	}
	name := t.Name
	if name == "" {
		name = cloudonixDefaultAppName
	}
	body := cloudonixApplication{Name: name, Type: "cxml", URL: t.AnswerURL, Method: http.MethodPost}
	var app cloudonixApplication
	if err := c.api().provision(ctx, c.base+"/customers/self/domains/"+url.PathEscape(c.domain)+"/applications", body, &app,
		"bearer_token", "application_name"); err != nil {
		return "", err
	}
	if app.Name == "" {
		app.Name = name
	}
	return app.Name, nil
}
