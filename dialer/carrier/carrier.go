package carrier

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// Outcomes of one call attempt (API.md 4.5). Unknown is set by the dialer,
// never by a carrier.
const (
	OutcomeAnswered  = "answered"
	OutcomeVoicemail = "voicemail"
	OutcomeBusy      = "busy"
	OutcomeNoAnswer  = "no_answer"
	OutcomeFailed    = "failed"
	OutcomeCanceled  = "canceled"
	OutcomeUnknown   = "unknown"
)

// Call is one outbound call the dialer asks a carrier to place.
type Call struct {
	// AttemptID identifies the attempt; carriers that let the caller choose
	// the call id (ARI) derive it from this, so a retry of the same attempt
	// can be detected.
	AttemptID int64
	// To is the callee in E.164 ("+14155550100"); each carrier formats it as
	// its API wants (some without "+").
	To string
	// From is the caller id: E.164, a SIP URI or an extension.
	From string
	// AnswerURL is asked what to do when the call is answered (API.md 6);
	// StatusURL receives the status events. Both carry the attempt id and
	// its token.
	AnswerURL string
	StatusURL string
	// MachineDetection asks the provider to tell a person from a machine.
	MachineDetection bool
	// RingTimeout is how long to let the callee's phone ring.
	RingTimeout time.Duration
	// TimeLimit bounds the whole call once answered.
	TimeLimit time.Duration
	// Answer is what to do once the call is answered, filled in only for
	// carriers that implement DialAnswerer (Telnyx passes stream_url when it
	// dials); nil otherwise.
	Answer *Answer
}

// Placed is the provider's answer to a successful Place.
type Placed struct {
	// ProviderCallID is the provider's id of the call (Twilio CallSid,
	// Telnyx call_control_id, ...), used for status queries and hang-up.
	ProviderCallID string
}

// Status is one status event of a call, from a webhook or a status query.
type Status struct {
	// ProviderCallID is the provider's id of the call, when the event has it.
	ProviderCallID string
	// Raw is the provider's own status value (e.g. Twilio "no-answer"),
	// kept beside the outcome.
	Raw string
	// Answered is true once the call is known to have been answered.
	Answered bool
	// AnsweredBy is the provider's machine-detection verdict when it ran
	// ("human", "machine_start", ...), else "".
	AnsweredBy string
	// Final is true for the call's last status; Outcome is then set.
	Final   bool
	Outcome string
	// DurationSeconds is the talk time reported with a final status.
	DurationSeconds int
	// Sequence orders events of one call when the provider numbers them; 0
	// when it does not.
	Sequence int
	// RequestID is the id Place returned when the event carries it beside a
	// different ProviderCallID: Plivo and Vobiz answer a call request with a
	// request_uuid and name the call by its CallUUID in callbacks. The dialer
	// accepts the event for the attempt placed as RequestID and from then on
	// knows the call as ProviderCallID.
	RequestID string
	// NeedsAnswer: the call was answered and the provider waits for
	// instructions over its REST API (Telnyx call.answered); the dialer builds
	// the Answer and calls the carrier's Answerer.Answered.
	NeedsAnswer bool
	// HangUp: the answer's instructions are done (Telnyx call.speak.ended)
	// and the dialer hangs the call up.
	HangUp bool
	// ReplayKeys name the signed request this status came in (Plivo and
	// Vobiz nonces, a Vonage JWT id, a Telnyx signature), when the provider
	// signs so. The carrier only verifies the signature; the store applies
	// a status with keys at most once within ReplayTTL, in the same
	// transaction as the status, so a repeat of an applied webhook is a
	// harmless no-op and a repeat of one whose storing failed is applied.
	ReplayKeys []string
}

// ReplayTTL is how long a webhook's replay keys are remembered: longer than
// every provider's timestamp tolerance (Telnyx ±300 s, our Vonage iat
// window).
const ReplayTTL = 10 * time.Minute

// IsMachine reports whether a Status.AnsweredBy verdict is not a person.
// Carriers normalise their provider's machine verdicts to values starting
// with "machine" (Twilio machine_start, Telnyx and Vonage "machine", Plivo
// Machine=true as "machine") or to "fax"; an answered call whose attempt
// carries such a verdict ends as voicemail, even when the verdict came in an
// earlier event than the final one.
func IsMachine(answeredBy string) bool {
	return strings.HasPrefix(answeredBy, "machine") || answeredBy == "fax"
}

// Answer is what the answer markup needs (API.md 6).
type Answer struct {
	AttemptID int64
	// AgentURL, when set, is a websocket URL the call's audio is connected
	// to as a media stream, passing AttemptID, OptOutToken (twice: as
	// opt_out_token and as token), OptOutURL, AgentEventsURL and Context as
	// parameters named attempt_id, opt_out_token, token, opt_out_url,
	// agent_events_url and after them the Context keys (a Context key named
	// like one of the first five is left out; the token and URLs are left
	// out when empty), or as ARI channel variables (see ariMediaVariables).
	AgentURL string
	// Greeting is the rendered text spoken when there is no agent URL,
	// before hanging up.
	Greeting string
	// Context is the contact's initial_context.
	Context map[string]string
	// OptOutToken is the attempt's webhook token, with which the voice
	// agent may ask for the callee's number to be suppressed (API.md 12.4).
	OptOutToken string
	// OptOutURL is the full URL the voice agent POSTs to for that:
	// <public URL>/api/v1/telephony/opt-out/<attempt id>?t=<token>.
	OptOutURL string
	// AgentEventsURL is the full URL the voice agent POSTs its events to
	// (connected, first_audio, failed; API.md 19):
	// <public URL>/api/v1/telephony/agent/<attempt id>?t=<token>.
	AgentEventsURL string
}

// Webhook is a provider request received at one of our callback URLs.
type Webhook struct {
	// Request is the HTTP request; its body has been read into Body.
	Request *http.Request
	Body    []byte
	// PublicURL is the full URL the provider was given and requested
	// (scheme, host, path and query as we handed it out), which signature
	// schemes sign.
	PublicURL string
}

// Carrier is one provider bound to one telephony configuration's
// credentials. Implementations are safe for concurrent use.
type Carrier interface {
	// Place asks the provider to place call. Errors: an *Error with Kind
	// RateLimited or Unavailable (retry later; not the contact's failure),
	// AuthFailed (the credentials are refused) or Rejected (the provider
	// refused this call; the attempt failed); any other error means the
	// request may or may not have reached the provider.
	Place(ctx context.Context, call Call) (Placed, error)
	// HangUp ends or cancels a call.
	HangUp(ctx context.Context, providerCallID string) error
	// Query asks the provider for a call's current status.
	Query(ctx context.Context, providerCallID string) (Status, error)
	// AnswerMarkup returns the content type and body answering the
	// provider's answer-URL request.
	AnswerMarkup(a Answer) (contentType string, body []byte)
	// ParseStatus verifies a status webhook's authenticity (the provider's
	// signature scheme) and returns the status it carries. A forged or
	// unsigned webhook is ErrForged.
	ParseStatus(w Webhook) (Status, error)
	// VerifyAnswer verifies an answer webhook's authenticity and returns
	// the machine-detection verdict it carries, if any.
	VerifyAnswer(w Webhook) (answeredBy string, err error)
}

// DialAnswerer is implemented by carriers that need the Answer when they
// place the call (Call.Answer): Telnyx gives the agent's stream_url in the
// dial request itself.
type DialAnswerer interface {
	AnswerAtDial() bool
}

// Answerer is implemented by carriers whose provider takes the answer's
// instructions as REST commands rather than as markup (Telnyx): the dialer
// calls Answered when a status with NeedsAnswer arrives.
type Answerer interface {
	Answered(ctx context.Context, providerCallID string, a Answer) error
}

// EventSink receives what an EventSource reads from its provider's event
// stream. The engine implements it.
type EventSink interface {
	// Status applies a status of the call of attempt attemptID.
	Status(ctx context.Context, attemptID int64, st Status)
	// Answer returns what to do with the answered call of attempt
	// attemptID.
	Answer(ctx context.Context, attemptID int64) (Answer, error)
	// InFlight returns the attempts placed through the source's
	// configuration whose outcome is still to be recorded. The
	// source follows each of them after every (re)connect, also those an
	// earlier carrier of the configuration (before an update) or an
	// earlier process placed, so that no call is dropped by a swap.
	InFlight(ctx context.Context) ([]FollowedCall, error)
}

// FollowedCall is an attempt in flight an EventSource follows, and whether
// it was answered (its ending then reports an answered call's outcome).
type FollowedCall struct {
	AttemptID int64
	Answered  bool
	// Placing: its placement is under way, by another process (see
	// SharedEventSource): its channel may not exist yet, so the source
	// does not conclude from a lookup that it ended; its events follow it.
	Placing bool
}

// EventSource is implemented by carriers whose status events come over a
// connection the service keeps open (ARI's events websocket) instead of
// webhooks. The engine runs Events once per carrier (one per telephony
// configuration) until ctx ends; Events reconnects by itself.
type EventSource interface {
	Events(ctx context.Context, sink EventSink)
}

// SharedEventSource is an EventSource whose stream only one process at a
// time may hold: Asterisk hands an ARI application's events to one
// websocket only, so two processes opening it would take it from each
// other. When several processes share the database the engine runs Events
// only on the one holding the configuration's stream lease; on the others
// it calls EventsElsewhere(true) instead (never while Events runs), and
// EventsElsewhere(false) before this carrier runs Events itself.
//
// While elsewhere, Place does not wait for a stream of the carrier's own
// and the carrier follows none of the calls it places or looks up: the
// holder's stream follows every call of the configuration whichever
// process placed it (it learns of them from their events and, after every
// connect, from EventSink.InFlight), and applies each outcome once.
type SharedEventSource interface {
	EventSource
	EventsElsewhere(elsewhere bool)
}

// CallIDDeriver is implemented by carriers whose call id is chosen by us
// from the attempt id (ARI's channelId). After a crash an attempt left
// dialing is looked up by CallID instead of ending unknown blindly: a call
// the provider still has is followed, one it does not have ends unknown and
// is never placed again.
type CallIDDeriver interface {
	CallID(attemptID int64) string
}

// ErrStatusEvent is returned by VerifyAnswer, before any verification, for
// a request to the answer URL that is a status event rather than a question
// (Vobiz may post its Ring and Hangup events to the answer URL): the dialer
// handles it as a status webhook instead, verifying it with ParseStatus.
var ErrStatusEvent = errors.New("the answer URL received a status event")

// ErrForged is returned (wrapped) for a webhook whose signature does not
// verify.
var ErrForged = errors.New("webhook signature does not verify")

// Kinds of *Error.
const (
	RateLimited = "rate_limited"
	AuthFailed  = "auth_failed"
	Rejected    = "rejected"
	// Unavailable: the provider cannot take a call now for a reason of its
	// side that is not its rate limit (ARI: the events websocket the call
	// would be followed on cannot be made); Message says what. Like
	// RateLimited it is retried later and is not the contact's failure.
	Unavailable = "unavailable"
)

// Error is a provider's refusal of a request.
type Error struct {
	Kind       string
	HTTPStatus int
	// Code is the provider's error code, when it gives one.
	Code string
	// Message is the provider's reason; it never contains credentials.
	Message string
	// RetryAfter is the provider's hint for RateLimited (and the wait of
	// an Unavailable), 0 when none.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	return fmt.Sprintf("provider %s (http %d, code %s): %s", e.Kind, e.HTTPStatus, e.Code, e.Message)
}

// KindOf returns the Kind of the *Error in err's chain, or "".
func KindOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return ""
}

// Options are the process-wide settings carriers are built with.
type Options struct {
	// BaseURLs overrides providers' API base URLs by provider name
	// (OUTDIAL_TWILIO_API_URL, ...), for regional endpoints and tests.
	BaseURLs map[string]string
	// HTTPClient sends provider requests; nil means a client with a 15 s
	// timeout.
	HTTPClient *http.Client
	// Now is the clock (webhook timestamp tolerance, JWT claims, the ARI
	// events websocket's reconnects).
	Now func() time.Time
	// Logger receives what carriers report outside any request: the ARI
	// events websocket's failed connections (rate-limited) and its
	// reconnections. nil means slog.Default().
	Logger *slog.Logger
}

func (o Options) baseURL(provider, def string) string {
	if u := o.BaseURLs[provider]; u != "" {
		return u
	}
	return def
}

func (o Options) client() *http.Client {
	if o.HTTPClient != nil {
		return o.HTTPClient
	}
	return defaultClient
}

func (o Options) logger() *slog.Logger {
	if o.Logger != nil {
		return o.Logger
	}
	return slog.Default()
}

func (o Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

// defaultClient keeps enough idle connections per provider host for a
// campaign's max_concurrency (up to 1000), so calls reuse connections instead
// of opening one (and a TLS handshake) per call.
var defaultClient = &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{
	Proxy:               http.ProxyFromEnvironment,
	MaxIdleConns:        2048,
	MaxIdleConnsPerHost: 1024,
	IdleConnTimeout:     90 * time.Second,
	TLSHandshakeTimeout: 10 * time.Second,
	ForceAttemptHTTP2:   true,
}}

// New returns the carrier of provider bound to creds (a configuration's
// stored credentials).
func New(provider string, creds map[string]any, opts Options) (Carrier, error) {
	switch provider {
	case Twilio:
		return newTwilio(creds, opts), nil
	case ARI:
		return newARI(creds, opts)
	case Cloudonix:
		return newCloudonix(creds, opts)
	case Plivo:
		return newPlivo(creds, opts)
	case Telnyx:
		return newTelnyx(creds, opts)
	case Vobiz:
		return newVobiz(creds, opts)
	case Vonage:
		return newVonage(creds, opts)
	}
	return nil, fmt.Errorf("provider %q is not supported", provider)
}

func credString(creds map[string]any, name string) string {
	s, _ := creds[name].(string)
	return s
}

func credBool(creds map[string]any, name string) bool {
	b, _ := creds[name].(bool)
	return b
}
