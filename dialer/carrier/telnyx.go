package carrier

// Telnyx Call Control (Voice API v2) over its REST API, with net/http only.
// This file holds the configuration binding and the REST commands (dial,
// hang up, speak, get call); telnyx_webhook.go holds the event mapping and
// the Ed25519 webhook signatures; telnyx_provision.go creates the Call
// Control application.
//
// Telnyx has no answer URL: the call's instructions are REST commands sent
// while it is up. A media stream to an agent is asked for in the dial
// request itself (stream_url), so the carrier is a DialAnswerer; the
// greeting is a speak command sent when call.answered arrives (Answerer),
// and call.speak.ended asks the dialer to hang up.

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
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

// telnyxBaseURL is Telnyx's API base URL, used unless
// Options.BaseURLs["telnyx"] (OUTDIAL_TELNYX_API_URL) overrides it.
const telnyxBaseURL = "https://api.telnyx.com"

// Telnyx's limits and the values this carrier sends.
const (
	// telnyxMinTimeout and telnyxMaxTimeout bound timeout_secs (ring time).
	telnyxMinTimeout = 5
	telnyxMaxTimeout = 600
	// telnyxMaxTimeLimit is the largest time_limit_secs (4 hours).
	telnyxMaxTimeLimit = 14400
	// telnyxMaxSpeak is the speak command's payload limit in characters.
	telnyxMaxSpeak = 3000
	// telnyxServiceLevel, telnyxVoice and telnyxLanguage are the speak
	// command's voice: Telnyx's basic female voice in en-US. The service
	// level must be sent: it defaults to premium, whose voices are named
	// <Provider>.<Model>.<VoiceId>, and "female" is a voice of basic only
	// (which allows the en-US language and text payloads alone).
	telnyxServiceLevel = "basic"
	telnyxVoice        = "female"
	telnyxLanguage     = "en-US"
	// telnyxAMD is the answering_machine_detection asked for: standard
	// detection, one call.machine.detection.ended with human, machine or
	// not_sure.
	telnyxAMD = "detect"
)

// Telnyx error codes this carrier acts on.
const (
	// telnyxCodeDialRate: too many dials per second (HTTP 429).
	telnyxCodeDialRate = "90103"
	// telnyxCodeAPIRate: too many API requests (HTTP 429).
	telnyxCodeAPIRate = "10011"
	// telnyxCodeCallEnded: the call has already ended and takes no more
	// commands (HTTP 422).
	telnyxCodeCallEnded = "90018"
)

// telnyxCommandSpeak is the command_id of the greeting's speak command:
// Telnyx ignores a repeated command with the same command_id for the same
// call, so a duplicated call.answered webhook never speaks twice.
const telnyxCommandSpeak = "outdial-greeting"

// telnyx is the Carrier of one Telnyx configuration. The API key is only
// ever sent as the Bearer token; it never appears in an error, a log line or
// a String method.
type telnyx struct {
	apiKey           string
	connectionID     string
	publicKey        ed25519.PublicKey // nil: webhooks are not signed-checked
	machineDetection bool
	base             string // without trailing slash
	client           *http.Client
	now              func() time.Time
}

// newTelnyx binds a Telnyx configuration's credentials (api_key,
// connection_id, webhook_public_key, machine_detection).
//
// A configuration without connection_id cannot dial (the Call Control
// application is created when the configuration is saved, API.md 2.3), and
// a webhook_public_key that is not base64 of 32 bytes cannot verify anything:
// both are errors, so the dialer fails the campaign with the reason instead
// of failing every contact. A missing api_key is not checked here: Telnyx
// refuses the requests (AuthFailed) and the campaign pauses.
func newTelnyx(creds map[string]any, opts Options) (Carrier, error) {
	t := &telnyx{
		apiKey:           credString(creds, "api_key"),
		connectionID:     credString(creds, "connection_id"),
		machineDetection: credBool(creds, "machine_detection"),
		base:             strings.TrimRight(opts.baseURL(Telnyx, telnyxBaseURL), "/"),
		client:           opts.client(),
		now:              opts.now,
	}
	if t.connectionID == "" {
		return nil, errors.New("telnyx: the configuration has no connection_id (Call Control application)")
	}
	if k := strings.TrimSpace(credString(creds, "webhook_public_key")); k != "" {
		pub, err := telnyxPublicKey(k)
		if err != nil {
			return nil, fmt.Errorf("telnyx: webhook_public_key: %w", err)
		}
		t.publicKey = pub
	}
	return t, nil
}

// telnyxPublicKey decodes a base64 (standard alphabet) Ed25519 public key.
func telnyxPublicKey(b64 string) (ed25519.PublicKey, error) {
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, errors.New("not base64")
	}
	if len(raw) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("%d bytes, want %d", len(raw), ed25519.PublicKeySize)
	}
	return ed25519.PublicKey(raw), nil
}

// String, GoString and LogValue describe the carrier without its API key,
// so printing or logging it (even with %+v or %#v) cannot leak it.
func (t *telnyx) String() string { return "telnyx carrier (connection " + t.connectionID + ")" }

// GoString: see String.
func (t *telnyx) GoString() string { return t.String() }

// LogValue: see String.
func (t *telnyx) LogValue() slog.Value { return slog.StringValue(t.String()) }

// AnswerAtDial is true: an agent's media stream (stream_url) is part of the
// dial request, so the dialer fills Call.Answer before Place.
func (t *telnyx) AnswerAtDial() bool { return true }

// callURL is the Call Control resource of a call, with an action when not
// "".
func (t *telnyx) callURL(callControlID, action string) string {
	u := t.base + "/v2/calls/" + url.PathEscape(callControlID)
	if action != "" {
		u += "/actions/" + action
	}
	return u
}

// telnyxDial is the body of POST /v2/calls, the fields this carrier sends.
type telnyxDial struct {
	ConnectionID              string `json:"connection_id"`
	To                        string `json:"to"`
	From                      string `json:"from"`
	TimeoutSecs               int    `json:"timeout_secs,omitempty"`
	TimeLimitSecs             int    `json:"time_limit_secs,omitempty"`
	WebhookURL                string `json:"webhook_url,omitempty"`
	WebhookURLMethod          string `json:"webhook_url_method,omitempty"`
	ClientState               string `json:"client_state"`
	CommandID                 string `json:"command_id"`
	AnsweringMachineDetection string `json:"answering_machine_detection,omitempty"`
	StreamURL                 string `json:"stream_url,omitempty"`
	StreamTrack               string `json:"stream_track,omitempty"`
	StreamBidirectionalMode   string `json:"stream_bidirectional_mode,omitempty"`
	StreamBidirectionalCodec  string `json:"stream_bidirectional_codec,omitempty"`
}

// dialBody is the dial request of call:
//
//   - to: E.164 with "+" (added to a bare digit string; a sip: URI is kept);
//   - timeout_secs: the ring timeout rounded up to whole seconds, clamped to
//     Telnyx's 5..600 (left out, Telnyx's default 30 s, when 0);
//     time_limit_secs: TimeLimit, at most 14400 (left out when 0);
//   - webhook_url: Call.StatusURL with webhook_url_method POST, so every
//     event of the call comes to the attempt's own URL;
//   - client_state: base64 of {"attempt_id":N}, echoed in every event and
//     in the media stream's start frame; command_id: "outdial-attempt-N",
//     so Telnyx ignores a repeated dial of the same attempt;
//   - answering_machine_detection "detect" when the configuration's
//     machine_detection or Call.MachineDetection is set;
//   - with Call.Answer.AgentURL: stream_url (see telnyxStreamURL), the
//     callee's audio (stream_track inbound_track) and bidirectional RTP
//     (PCMU) so the agent can speak back.
func (t *telnyx) dialBody(call Call) (telnyxDial, error) {
	d := telnyxDial{
		ConnectionID: t.connectionID,
		To:           telnyxNumber(call.To),
		From:         telnyxNumber(call.From),
		ClientState:  telnyxClientState(call.AttemptID),
		CommandID:    "outdial-attempt-" + strconv.FormatInt(call.AttemptID, 10),
	}
	if call.StatusURL != "" {
		d.WebhookURL, d.WebhookURLMethod = call.StatusURL, http.MethodPost
	}
	if call.RingTimeout > 0 {
		d.TimeoutSecs = min(max(ceilSeconds(call.RingTimeout), telnyxMinTimeout), telnyxMaxTimeout)
	}
	if call.TimeLimit > 0 {
		d.TimeLimitSecs = min(max(ceilSeconds(call.TimeLimit), 1), telnyxMaxTimeLimit)
	}
	if t.machineDetection || call.MachineDetection {
		d.AnsweringMachineDetection = telnyxAMD
	}
	if call.Answer != nil && call.Answer.AgentURL != "" {
		u, err := telnyxStreamURL(*call.Answer)
		if err != nil {
			return telnyxDial{}, err
		}
		d.StreamURL, d.StreamTrack = u, "inbound_track"
		d.StreamBidirectionalMode, d.StreamBidirectionalCodec = "rtp", "PCMU"
	}
	return d, nil
}

// telnyxNumber formats a number as Telnyx wants it: E.164 with "+". A bare
// digit string gets the "+"; anything else (already E.164, a sip: URI) is
// sent as given.
func telnyxNumber(n string) string {
	if n == "" || strings.HasPrefix(n, "+") {
		return n
	}
	for _, r := range n {
		if r < '0' || r > '9' {
			return n
		}
	}
	return "+" + n
}

// telnyxClientState is the client_state of attempt id: base64 (standard
// alphabet) of the JSON {"attempt_id":id}.
func telnyxClientState(attemptID int64) string {
	return base64.StdEncoding.EncodeToString([]byte(`{"attempt_id":` + strconv.FormatInt(attemptID, 10) + `}`))
}

// telnyxAttemptOf reads the attempt id back from a client_state made by
// telnyxClientState (for events that reach an application-level URL); ok is
// false for anything else.
func telnyxAttemptOf(clientState string) (id int64, ok bool) {
	raw, err := base64.StdEncoding.DecodeString(clientState)
	if err != nil {
		return 0, false
	}
	var v struct {
		AttemptID *int64 `json:"attempt_id"`
	}
	if json.Unmarshal(raw, &v) != nil || v.AttemptID == nil {
		return 0, false
	}
	return *v.AttemptID, true
}

// telnyxStreamURL is the agent's URL with the stream parameters added to
// its query: attempt_id=N, opt_out_token, token, opt_out_url and
// agent_events_url, then every Context key (see streamParams: a key named
// like one of the first five is
// left out, the answer's own value wins), each replacing a parameter of
// that name the URL already had; the query is then encoded sorted by key.
// Telnyx's dial command has no custom-parameter field for the stream (only
// streaming_start has custom_parameters), so the query string carries them;
// the stream's start frame also carries the call's client_state.
func telnyxStreamURL(a Answer) (string, error) {
	u, err := url.Parse(a.AgentURL)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("agent url %q is not an absolute URL", a.AgentURL)
	}
	q := u.Query()
	for _, p := range streamParams(a) {
		q.Set(p.name, p.value)
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// telnyxCallData is the part of Telnyx's call object (dial answer, get
// call) this carrier reads.
type telnyxCallData struct {
	Data struct {
		CallControlID string   `json:"call_control_id"`
		CallLegID     string   `json:"call_leg_id"`
		CallSessionID string   `json:"call_session_id"`
		IsAlive       bool     `json:"is_alive"`
		CallDuration  looseInt `json:"call_duration"`
	} `json:"data"`
}

// Place dials the call (POST /v2/calls) and returns its call_control_id.
// HTTP 429, or error 90103 (dials per second) / 10011 (API rate) in any
// answer, is RateLimited with the Retry-After hint; 401/403 AuthFailed;
// another 4xx (422 validation errors, a number Telnyx refuses) Rejected with
// Telnyx's code and detail. A 5xx, an unreadable answer or a transport error
// is a plain error: the call may or may not have been dialled (a repeat of
// the same attempt carries the same command_id).
func (t *telnyx) Place(ctx context.Context, call Call) (Placed, error) {
	body, err := t.dialBody(call)
	if err != nil {
		return Placed{}, fmt.Errorf("telnyx dial: %w", err)
	}
	var c telnyxCallData
	if err := t.do(ctx, http.MethodPost, t.base+"/v2/calls", body, &c); err != nil {
		return Placed{}, fmt.Errorf("telnyx dial: %w", err)
	}
	if c.Data.CallControlID == "" {
		return Placed{}, errors.New("telnyx dial: answer has no call_control_id")
	}
	return Placed{ProviderCallID: c.Data.CallControlID}, nil
}

// HangUp ends the call (POST /v2/calls/{id}/actions/hangup), ringing or
// answered. A call that has already ended is not an error: Telnyx answers
// 422 with error 90018 and HangUp returns nil. Errors map as for Place.
func (t *telnyx) HangUp(ctx context.Context, providerCallID string) error {
	if providerCallID == "" {
		return errors.New("telnyx hang up: empty call_control_id")
	}
	err := t.do(ctx, http.MethodPost, t.callURL(providerCallID, "hangup"), struct{}{}, nil)
	if telnyxEnded(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("telnyx hang up %s: %w", providerCallID, err)
	}
	return nil
}

// telnyxEnded reports whether err is Telnyx's "call has already ended".
func telnyxEnded(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == telnyxCodeCallEnded
}

// Query asks Telnyx for the call (GET /v2/calls/{id}). Telnyx tells only
// whether the call is alive (is_alive), not how it ended, so Query never
// returns a final status: a live call is Raw "alive" (the attempt stays in
// flight), an ended one Raw "ended"; reconciliation then ends the attempt
// unknown, unless the call's call.hangup event comes after all. An unknown
// call (Telnyx keeps ended calls for about 10 minutes) is a Rejected *Error
// (HTTP 404).
func (t *telnyx) Query(ctx context.Context, providerCallID string) (Status, error) {
	if providerCallID == "" {
		return Status{}, errors.New("telnyx query: empty call_control_id")
	}
	var c telnyxCallData
	if err := t.do(ctx, http.MethodGet, t.callURL(providerCallID, ""), nil, &c); err != nil {
		return Status{}, fmt.Errorf("telnyx query %s: %w", providerCallID, err)
	}
	s := Status{ProviderCallID: providerCallID, Raw: "ended"}
	if c.Data.CallControlID != "" {
		s.ProviderCallID = c.Data.CallControlID
	}
	if c.Data.IsAlive {
		s.Raw = "alive"
	}
	return s, nil
}

// telnyxSpeak is the body of the speak command.
type telnyxSpeak struct {
	Payload      string `json:"payload"`
	PayloadType  string `json:"payload_type"`
	ServiceLevel string `json:"service_level"`
	Voice        string `json:"voice"`
	Language     string `json:"language"`
	ClientState  string `json:"client_state"`
	CommandID    string `json:"command_id"`
}

// Answered tells Telnyx what to do with the answered call (API.md 6), when
// the dialer has applied its call.answered:
//
//   - with an AgentURL nothing: the dial request already asked for the
//     media stream (AnswerAtDial), which Telnyx starts on answer;
//   - with a greeting, the speak command (POST .../actions/speak: payload
//     the greeting as text, at most 3,000 characters, service_level
//     "basic" with voice "female" and language en-US, the attempt's client_state, command_id
//     "outdial-greeting"); call.speak.ended then asks the dialer to hang up;
//   - with an empty greeting, the call is hung up at once.
//
// A call that ended meanwhile (error 90018) is not an error.
func (t *telnyx) Answered(ctx context.Context, providerCallID string, a Answer) error {
	switch {
	case a.AgentURL != "":
		return nil
	case a.Greeting == "":
		return t.HangUp(ctx, providerCallID)
	}
	if providerCallID == "" {
		return errors.New("telnyx speak: empty call_control_id")
	}
	body := telnyxSpeak{Payload: truncateRunes(a.Greeting, telnyxMaxSpeak), PayloadType: "text",
		ServiceLevel: telnyxServiceLevel, Voice: telnyxVoice, Language: telnyxLanguage, ClientState: telnyxClientState(a.AttemptID), CommandID: telnyxCommandSpeak}
	err := t.do(ctx, http.MethodPost, t.callURL(providerCallID, "speak"), body, nil)
	if err != nil && !telnyxEnded(err) {
		return fmt.Errorf("telnyx speak %s: %w", providerCallID, err)
	}
	return nil
}

// truncateRunes returns s cut to at most n characters.
func truncateRunes(s string, n int) string {
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}

// telnyxErrors is Telnyx's JSON error body.
type telnyxErrors struct {
	Errors []struct {
		Code   json.RawMessage `json:"code"` // "90103" or 90103
		Title  string          `json:"title"`
		Detail string          `json:"detail"`
	} `json:"errors"`
}

// do sends one request with the Bearer API key (a JSON body unless body is
// nil) and decodes a 2xx JSON answer into out (when not nil). Non-2xx
// answers become errors as Place documents.
func (t *telnyx) do(ctx context.Context, method, u string, body, out any) error {
	_, err := telnyxAPI(t.client, t.now, t.apiKey).do(ctx, method, u, body, out)
	return err
}

// telnyxAPI is the Telnyx REST API as apiKey calls it: errors are
// {"errors":[{code,title,detail}]}, and codes 90103 (dials per second) and
// 10011 (API rate) are its rate limits.
func telnyxAPI(client *http.Client, now func() time.Time, apiKey string) restAPI {
	return restAPI{client: client, now: now, auth: bearer(apiKey), reason: telnyxError,
		rateLimited: func(code string) bool { return code == telnyxCodeDialRate || code == telnyxCodeAPIRate }}
}

// telnyxError returns the first error's code and its detail (else title)
// from a Telnyx error body; "" for a body that is not one.
func telnyxError(data []byte) (code, msg string) {
	var te telnyxErrors
	if json.Unmarshal(data, &te) != nil || len(te.Errors) == 0 {
		return "", ""
	}
	e := te.Errors[0]
	code = strings.Trim(string(e.Code), `"`)
	if code == "null" {
		code = ""
	}
	msg = e.Detail
	if msg == "" {
		msg = e.Title
	}
	return code, msg
}
