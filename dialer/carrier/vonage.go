package carrier

// Vonage Voice API (v1) over net/http only. This file holds the REST requests
// (create, update, fetch a call) and the mapping of Vonage's RFC 7807 error
// answers; vonage_jwt.go mints the RS256 application JWTs and checks the
// HS256 signed-webhook JWTs; vonage_webhook.go holds the status mapping, the
// NCCO answer and the webhook verification.
//
// Vonage has nothing to provision: a configuration names its Voice
// application (application_id) and the application's private key, and every
// call carries its own answer_url and event_url.

import (
	"context"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// vonageBaseURL is Vonage's REST API base URL, used unless
// Options.BaseURLs["vonage"] (OUTDIAL_VONAGE_API_URL) overrides it.
const vonageBaseURL = "https://api.nexmo.com"

// Vonage's limits on a new call's timers (OpenAPI definitions/voice.yml of
// Nexmo/api-specification): ringing_timer 1..120 s (default 60),
// length_timer 1..7200 s (default 7200).
const (
	vonageMaxRingingTimer = 120
	vonageMaxLengthTimer  = 7200
)

// vonage is the Carrier of one Vonage Voice application. The private key
// only ever signs API JWTs and the signature secret only verifies webhook
// JWTs; neither (nor the API secret, which the Voice API does not use)
// appears in an error, a log line or a String method.
type vonage struct {
	apiKey           string
	applicationID    string
	key              *rsa.PrivateKey
	signatureSecret  string
	machineDetection bool
	base             string // without trailing slash
	client           *http.Client
	now              func() time.Time
}

// newVonage binds a Vonage configuration's credentials (api_key,
// application_id, private_key, signature_secret, machine_detection;
// api_secret is stored but the Voice API authenticates with the JWT alone).
// A configuration without application_id or whose private_key is not a PEM
// RSA private key (PKCS#1 or PKCS#8) cannot place calls: that is an error.
func newVonage(creds map[string]any, opts Options) (Carrier, error) {
	appID := strings.TrimSpace(credString(creds, "application_id"))
	if appID == "" {
		return nil, errors.New("vonage: the configuration has no application_id")
	}
	key, err := vonageParseKey(credString(creds, "private_key"))
	if err != nil {
		return nil, fmt.Errorf("vonage: private_key: %w", err)
	}
	return &vonage{
		apiKey:           strings.TrimSpace(credString(creds, "api_key")),
		applicationID:    appID,
		key:              key,
		signatureSecret:  credString(creds, "signature_secret"),
		machineDetection: credBool(creds, "machine_detection"),
		base:             strings.TrimRight(opts.baseURL(Vonage, vonageBaseURL), "/"),
		client:           opts.client(),
		now:              opts.now,
	}, nil
}

// String, GoString and LogValue describe the carrier without its secrets, so
// printing or logging it (even with %+v or %#v) cannot leak them.
func (v *vonage) String() string { return "vonage carrier (application " + v.applicationID + ")" }

// GoString: see String.
func (v *vonage) GoString() string { return v.String() }

// LogValue: see String.
func (v *vonage) LogValue() slog.Value { return slog.StringValue(v.String()) }

// callsURL is the Calls resource; with a uuid, that call's resource.
func (v *vonage) callsURL(uuid string) string {
	u := v.base + "/v1/calls"
	if uuid != "" {
		u += "/" + url.PathEscape(uuid)
	}
	return u
}

// vonageEndpoint is a phone endpoint of a create-call request (to, from).
type vonageEndpoint struct {
	Type   string `json:"type"`
	Number string `json:"number"`
}

// vonageCreate is the JSON body of POST /v1/calls.
type vonageCreate struct {
	To               []vonageEndpoint `json:"to"`
	From             vonageEndpoint   `json:"from"`
	AnswerURL        []string         `json:"answer_url"`
	AnswerMethod     string           `json:"answer_method"`
	EventURL         []string         `json:"event_url,omitempty"`
	EventMethod      string           `json:"event_method,omitempty"`
	RingingTimer     int              `json:"ringing_timer,omitempty"`
	LengthTimer      int              `json:"length_timer,omitempty"`
	MachineDetection string           `json:"machine_detection,omitempty"`
}

// vonageNumber is an E.164 number as Vonage wants it: digits only, without
// the leading "+".
func vonageNumber(e164 string) string { return strings.TrimPrefix(strings.TrimSpace(e164), "+") }

// placeBody is the create-call body of call:
//
//   - to and from are phone endpoints, numbers without "+";
//   - answer_url (method POST: the answer request's JSON body, uuid included,
//     is then covered by the signed webhook's payload_hash, where GET
//     parameters in the query string would not be) and event_url (POST);
//   - ringing_timer is the ring timeout rounded up to whole seconds and
//     clamped to 1..120, left out (Vonage's default, 60 s) when 0;
//     length_timer likewise from TimeLimit, clamped to 1..7200;
//   - machine_detection "continue" when the configuration's
//     machine_detection or the call's MachineDetection is set: Vonage then
//     posts an event with status "machine" or "human" and leaves the call
//     up, so the answer still plays and the final "completed" ends it.
//     Basic detection is chosen over advanced_machine_detection because it
//     is part of the v1 create-call contract, costs nothing extra and
//     reports exactly the verdict we need (machine or human).
func (v *vonage) placeBody(call Call) vonageCreate {
	b := vonageCreate{
		To:           []vonageEndpoint{{Type: "phone", Number: vonageNumber(call.To)}},
		From:         vonageEndpoint{Type: "phone", Number: vonageNumber(call.From)},
		AnswerURL:    []string{call.AnswerURL},
		AnswerMethod: http.MethodPost,
	}
	if call.StatusURL != "" {
		b.EventURL = []string{call.StatusURL}
		b.EventMethod = http.MethodPost
	}
	if call.RingTimeout > 0 {
		b.RingingTimer = min(max(ceilSeconds(call.RingTimeout), 1), vonageMaxRingingTimer)
	}
	if call.TimeLimit > 0 {
		b.LengthTimer = min(max(ceilSeconds(call.TimeLimit), 1), vonageMaxLengthTimer)
	}
	if v.machineDetection || call.MachineDetection {
		b.MachineDetection = "continue"
	}
	return b
}

// vonageCall is the part of Vonage's call object (create answer, fetched
// call) we read.
type vonageCall struct {
	UUID             string   `json:"uuid"`
	ConversationUUID string   `json:"conversation_uuid"`
	Status           string   `json:"status"`
	Direction        string   `json:"direction"`
	Duration         looseInt `json:"duration"`
}

// Place creates the call (POST /v1/calls). A 2xx answer with a uuid is
// Placed (ProviderCallID = uuid); HTTP 429 is RateLimited (Vonage does not
// queue call requests beyond 3 per second; Retry-After honoured when sent),
// 401/403 AuthFailed, any other 4xx Rejected with Vonage's error type and
// title. A 5xx answer, an unreadable answer or a transport error is a plain
// error: the call may or may not have been created.
func (v *vonage) Place(ctx context.Context, call Call) (Placed, error) {
	var c vonageCall
	if err := v.do(ctx, http.MethodPost, v.callsURL(""), v.placeBody(call), &c); err != nil {
		return Placed{}, fmt.Errorf("vonage create call: %w", err)
	}
	if c.UUID == "" {
		return Placed{}, errors.New("vonage create call: answer has no call uuid")
	}
	return Placed{ProviderCallID: c.UUID}, nil
}

// HangUp ends the call (PUT /v1/calls/{uuid} {"action":"hangup"}), whether
// it rings or is answered. Vonage answers 204. A call that is no longer up
// is answered 404 (the call leg is gone), which is not an error here. Other
// errors map as for Place.
func (v *vonage) HangUp(ctx context.Context, providerCallID string) error {
	if providerCallID == "" {
		return errors.New("vonage hang up: empty call uuid")
	}
	err := v.do(ctx, http.MethodPut, v.callsURL(providerCallID), map[string]string{"action": "hangup"}, nil)
	var e *Error
	if errors.As(err, &e) && e.HTTPStatus == http.StatusNotFound {
		return nil
	}
	if err != nil {
		return fmt.Errorf("vonage hang up %s: %w", providerCallID, err)
	}
	return nil
}

// Query fetches the call (GET /v1/calls/{uuid}) and maps its status and
// duration like an event (see vonageStates). The call resource carries no
// machine verdict. An unknown uuid is a Rejected *Error (HTTP 404).
func (v *vonage) Query(ctx context.Context, providerCallID string) (Status, error) {
	if providerCallID == "" {
		return Status{}, errors.New("vonage query: empty call uuid")
	}
	var c vonageCall
	if err := v.do(ctx, http.MethodGet, v.callsURL(providerCallID), nil, &c); err != nil {
		return Status{}, fmt.Errorf("vonage query %s: %w", providerCallID, err)
	}
	if c.Status == "" {
		return Status{}, fmt.Errorf("vonage query %s: answer has no status", providerCallID)
	}
	s := vonageStatus(c.Status)
	s.ProviderCallID = c.UUID
	if s.ProviderCallID == "" {
		s.ProviderCallID = providerCallID
	}
	s.DurationSeconds = max(int(c.Duration), 0)
	return s, nil
}

// vonageProblem is Vonage's RFC 7807 error body; validation errors list the
// fields in invalid_parameters.
type vonageProblem struct {
	Type              string `json:"type"`
	Title             string `json:"title"`
	Detail            string `json:"detail"`
	Instance          string `json:"instance"`
	InvalidParameters []struct {
		Name   string `json:"name"`
		Reason string `json:"reason"`
	} `json:"invalid_parameters"`
}

// do sends one JSON request (no body when body is nil) authenticated with a
// freshly minted application JWT and decodes a 2xx JSON answer into out
// (when not nil; a 204 has nothing to decode). Non-2xx answers become errors
// as Place documents.
func (v *vonage) do(ctx context.Context, method, u string, body, out any) error {
	api := restAPI{client: v.client, now: v.now, reason: vonageErrorText, auth: func(r *http.Request) error {
		tok, err := v.apiToken()
		if err != nil {
			return err
		}
		r.Header.Set("Authorization", "Bearer "+tok)
		return nil
	}}
	_, err := api.do(ctx, method, u, body, out)
	return err
}

// vonageErrorText returns the error code (the fragment of the problem's
// type URL, e.g. "unauthorized" or "validation") and a message made of the
// title, the detail and the invalid parameters. A body that is not a
// problem document gives "" and "".
func vonageErrorText(data []byte) (code, msg string) {
	var p vonageProblem
	if json.Unmarshal(data, &p) != nil {
		return "", ""
	}
	if i := strings.LastIndexAny(p.Type, "#/"); i >= 0 {
		code = p.Type[i+1:]
	}
	parts := make([]string, 0, 2+len(p.InvalidParameters))
	if p.Title != "" {
		parts = append(parts, p.Title)
	}
	if p.Detail != "" {
		parts = append(parts, p.Detail)
	}
	for _, ip := range p.InvalidParameters {
		parts = append(parts, ip.Name+": "+ip.Reason)
	}
	return code, strings.Join(parts, "; ")
}
