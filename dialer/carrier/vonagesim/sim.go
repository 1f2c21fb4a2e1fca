// Package vonagesim simulates the part of Vonage's Voice API (v1) the dialer
// uses, speaking Vonage's wire format, for tests and benchmarks over real
// HTTP:
//
//   - POST /v1/calls creates a call (Authorization: Bearer <application
//     JWT>, RS256 verified with the application's public key and its claims
//     checked; JSON body validated; 201 with uuid, status "started",
//     direction and conversation_uuid; RFC 7807 problem documents
//     otherwise);
//   - GET /v1/calls/{uuid} fetches it; GET /v1/calls?page_size=N lists the
//     newest calls (a read-only credential check);
//   - PUT /v1/calls/{uuid} {"action":"hangup"} hangs it up or cancels it
//     (204; 404 once the call is over).
//
// Every created call then plays a Script chosen by the test (outcome, ring
// delay, talk time): when answered the simulator requests the call's
// answer_url (POST JSON or GET query, as answer_method says) and records the
// NCCO it gets; it posts the call's events to event_url as JSON (started,
// ringing, answered, human or machine when machine_detection was asked,
// and the final completed, busy, timeout, unanswered, rejected, failed or
// cancelled), each signed as Vonage signs webhooks: "Authorization: Bearer
// <JWT>" HS256 with the account's signature secret, claims iat, jti, iss,
// payload_hash (hex SHA-256 of the JSON body; for a GET, of the JSON
// object of the query parameters), api_key and application_id.
// Scripts can duplicate, reorder, delay or lose events; faults (HTTP 429,
// 401, anything else) can be injected per request; Replay and Send post a
// replayed or forged webhook.
//
// ringing_timer and length_timer are honoured: a call still ringing after
// ringing_timer seconds ends "timeout", one talking for length_timer seconds
// ends "completed".
//
// The Server records what it saw: calls in flight and their peak, creates in
// total and per number, every call with its create request, status, NCCO
// and events. Tests wait with Wait and WaitFinal, which block on a channel.
//
// Time is real (time.AfterFunc per scripted step); each call's webhooks are
// delivered in order by at most one goroutine at a time, through one shared
// http.Client.
package vonagesim

import (
	"context"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"time"

	"github.com/outdial/outdial/dialer/carrier/internal/simkit"
)

// Default identity of a simulated account and application.
const (
	DefaultAPIKey          = "a1b2c3d4"
	DefaultAPISecret       = "vonagesim-api-secret"
	DefaultApplicationID   = "aaaaaaaa-bbbb-cccc-dddd-0123456789ab"
	DefaultSignatureSecret = "vonagesim-signature-secret-0123456789abcdef"
)

// Outcome is how a simulated call ends.
type Outcome string

// Outcomes a Script can play. Human and Machine are answered (the call ends
// "completed" after the talk time); with machine_detection the call also
// reports an event with status "human" or "machine" (and with
// machine_detection "hangup" a machine is hung up at once). The others end
// the call with that Vonage status after the ring delay, unanswered.
const (
	Human      Outcome = "human"
	Machine    Outcome = "machine"
	Busy       Outcome = "busy"
	Timeout    Outcome = "timeout"
	Unanswered Outcome = "unanswered"
	Rejected   Outcome = "rejected"
	Failed     Outcome = "failed"
	Cancelled  Outcome = "cancelled"
)

// Never, as a Script's RingDelay or TalkDuration, means the step does not
// come by itself: the call rings (or talks) until it is hung up through the
// API or its ringing_timer (length_timer) runs out.
const Never time.Duration = -1

// Script is what one call does after it was created. The zero Script is a
// person answering at once and hanging up at once.
type Script struct {
	// Outcome is how the call ends; "" is Human.
	Outcome Outcome
	// RingDelay is the time from the create request to the answer (Human,
	// Machine) or to the final status (the other outcomes).
	RingDelay time.Duration
	// TalkDuration is the time from the answer to the final "completed".
	TalkDuration time.Duration
	// Verdict overrides the machine-detection event's status ("human" or
	// "machine"); it is sent only when the call asked for machine_detection.
	Verdict string
	// Duration is the talk time reported in seconds (completed event,
	// fetched call); 0 means the measured talk time, rounded.
	Duration int
	// CallbackDelay delays every webhook: each is sent no earlier than
	// CallbackDelay after its event.
	CallbackDelay time.Duration
	// Duplicate sends every event twice in a row, each signed afresh (a
	// new jti), as a retrying Vonage would.
	Duplicate bool
	// OutOfOrder holds the non-final events back and sends them after the
	// final one, latest first.
	OutOfOrder bool
	// LoseFinal never sends the final event (the call still ends and a
	// fetch shows its final status): the service must reconcile.
	LoseFinal bool
}

// DefaultScript answers every call at once (a person) and ends it
// "completed" 50 ms later.
func DefaultScript(CallInfo) Script {
	return Script{Outcome: Human, TalkDuration: 50 * time.Millisecond}
}

// CallInfo describes a created call to the script function.
type CallInfo struct {
	// N numbers created calls from 1 in creation order.
	N int
	// UUID is the call leg's uuid, ConversationUUID its conversation's.
	UUID             string
	ConversationUUID string
	// To and From are the numbers as sent (digits, no "+").
	To, From string
	// Attempt counts the creates to this To number so far, this one
	// included.
	Attempt int
	// Request is the create request's body, decoded.
	Request CreateRequest
	// Created is when the create request was accepted.
	Created time.Time
}

// Endpoint is a phone endpoint of a create request.
type Endpoint struct {
	Type   string `json:"type"`
	Number string `json:"number"`
}

// CreateRequest is the body of POST /v1/calls as the simulator reads it.
type CreateRequest struct {
	To               []Endpoint      `json:"to"`
	From             *Endpoint       `json:"from"`
	NCCO             json.RawMessage `json:"ncco"`
	AnswerURL        []string        `json:"answer_url"`
	AnswerMethod     string          `json:"answer_method"`
	EventURL         []string        `json:"event_url"`
	EventMethod      string          `json:"event_method"`
	MachineDetection string          `json:"machine_detection"`
	RingingTimer     *int            `json:"ringing_timer"`
	LengthTimer      *int            `json:"length_timer"`
}

// Request is an API request, as a fault function sees it.
type Request struct {
	// Op is OpCreate, OpFetch or OpUpdate.
	Op string
	// UUID is the call of a fetch or update ("" for a create).
	UUID string
	// Body is the request's raw body (nil for a fetch).
	Body []byte
}

// Operations of a Request.
const (
	OpCreate = "create"
	OpFetch  = "fetch"
	OpUpdate = "update"
	OpList   = "list" // GET /v1/calls
)

// Fault is an error answer the simulator gives instead of serving a
// request: an RFC 7807 problem document {type, title, detail, instance}.
type Fault struct {
	Status int
	// Type is the problem's type fragment ("throttled", "unauthorized",
	// ...); Title and Detail its texts.
	Type   string
	Title  string
	Detail string
	// RetryAfter, when set, is sent as the Retry-After header.
	RetryAfter string
	// Create, for a create request, creates the call (its script plays)
	// although the error is answered.
	Create bool
}

// TooManyRequests is the fault Vonage answers above 3 call creations per
// second: HTTP 429 (the request is not queued).
func TooManyRequests() *Fault {
	return &Fault{Status: http.StatusTooManyRequests, Type: "throttled", Title: "Too Many Requests",
		Detail: "You have exceeded the rate limit for this API"}
}

// Config configures a Server. Zero fields take the defaults.
type Config struct {
	// APIKey, APISecret and ApplicationID identify the account and its
	// Voice application; SignatureSecret signs the webhooks. Defaults:
	// the Default* constants.
	APIKey, APISecret, ApplicationID, SignatureSecret string
	// Unsigned sends webhooks without an Authorization header (signed
	// webhooks off), and Credentials then carry no signature_secret.
	Unsigned bool
	// PrivateKey is the application's key pair: API JWTs must verify with
	// its public key, and Credentials hand out its private key. Default: a
	// 2048-bit key generated once per process.
	PrivateKey *rsa.PrivateKey
	// Script chooses each call's script; default DefaultScript. It is
	// called once per created call, without any simulator lock held.
	Script func(CallInfo) Script
	// Client sends the webhooks; default a client keeping up to 1,024
	// idle connections per host and a 30 s timeout.
	Client *http.Client
	// RecordCallbacks keeps every event sent in CallRecord.Callbacks; off by
	// default to keep memory flat in benchmarks.
	RecordCallbacks bool
}

// Stats are the simulator's counters. Every field only grows, except
// InFlight.
type Stats struct {
	// Requests counts API requests of any kind; CreateRequests the
	// creates among them, whatever was answered.
	Requests       int
	CreateRequests int
	// Created counts calls created (201, and faults with Create).
	Created int
	// RateLimited, Unauthorized and Rejected count error answers: 429s,
	// 401s, and any other 4xx/5xx.
	RateLimited  int
	Unauthorized int
	Rejected     int
	// InFlight is the number of calls from their create until the
	// simulator starts sending their final event (or the call ends, when no
	// final event will be sent): a lower bound of the service's own count,
	// so a PeakInFlight above its limit is a real violation.
	InFlight     int
	PeakInFlight int
	// Final counts calls that are over: final status reached and every
	// webhook of the call sent.
	Final int
	// Callbacks counts events sent (duplicates included); CallbackErrors
	// those that got a transport error or a non-2xx answer.
	Callbacks      int
	CallbackErrors int
	// AnswerRequests counts answer webhooks; AnswerErrors those that got a
	// transport error or a non-2xx answer.
	AnswerRequests int
	AnswerErrors   int
	// Fetches and HangUps count successful fetch and hang-up requests.
	Fetches int
	HangUps int
}

// Server is a simulated Vonage account with one Voice application. It is an
// http.Handler; Start also serves it on a loopback port. All methods are
// safe for concurrent use.
type Server struct {
	apiKey, apiSecret, appID, secret string
	unsigned                         bool
	key                              *rsa.PrivateKey
	client                           *http.Client
	ownClient                        bool
	record                           bool
	ts                               *httptest.Server

	ctx    context.Context // canceled by Close: aborts webhook deliveries
	cancel context.CancelFunc
	closed atomic.Bool
	pumps  sync.WaitGroup // goroutines delivering webhooks

	counters simkit.Counters[Stats]
	gate     simkit.Gate[Request, Fault]

	// mu guards everything below. Lock order: a call's mu, then mu, then
	// the counters' lock.
	mu     sync.Mutex
	script func(CallInfo) Script
	calls  []*call
	byUUID map[string]*call
	byTo   map[string]int
}

// New returns a simulator handler (not listening; see Start).
func New(cfg Config) *Server {
	s := &Server{
		apiKey: cfg.APIKey, apiSecret: cfg.APISecret, appID: cfg.ApplicationID, secret: cfg.SignatureSecret,
		unsigned: cfg.Unsigned, key: cfg.PrivateKey, client: cfg.Client, record: cfg.RecordCallbacks,
		script: cfg.Script, byUUID: map[string]*call{}, byTo: map[string]int{},
	}
	if s.apiKey == "" {
		s.apiKey = DefaultAPIKey
	}
	if s.apiSecret == "" {
		s.apiSecret = DefaultAPISecret
	}
	if s.appID == "" {
		s.appID = DefaultApplicationID
	}
	if s.secret == "" {
		s.secret = DefaultSignatureSecret
	}
	if s.key == nil {
		s.key = processKey()
	}
	if s.client == nil {
		s.client = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
			Proxy: nil, MaxIdleConns: 4096, MaxIdleConnsPerHost: 1024,
			IdleConnTimeout: 90 * time.Second, DisableCompression: true,
		}}
		s.ownClient = true
	}
	if s.script == nil {
		s.script = DefaultScript
	}
	s.counters.Settle = func(st *Stats) {
		if st.InFlight > st.PeakInFlight {
			st.PeakInFlight = st.InFlight
		}
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s
}

// Start returns a simulator serving on a loopback port (httptest); its URL
// is the base URL to give the carrier (OUTDIAL_VONAGE_API_URL).
func Start(cfg Config) *Server {
	s := New(cfg)
	s.ts = httptest.NewServer(s)
	return s
}

// URL is the base URL of a started simulator ("" for New).
func (s *Server) URL() string {
	if s.ts == nil {
		return ""
	}
	return s.ts.URL
}

// Close stops every call's script, aborts webhook deliveries, waits for them
// and, for a started simulator, stops serving. Counters and records stay
// readable.
func (s *Server) Close() {
	if s.closed.Swap(true) {
		return
	}
	s.cancel()
	if s.ts != nil {
		s.ts.Close()
	}
	s.mu.Lock()
	calls := append([]*call(nil), s.calls...)
	s.mu.Unlock()
	for _, c := range calls {
		c.stop()
	}
	s.pumps.Wait()
	if s.ownClient {
		s.client.CloseIdleConnections()
	}
}

// APIKey is the account's API key.
func (s *Server) APIKey() string { return s.apiKey }

// ApplicationID is the Voice application's id.
func (s *Server) ApplicationID() string { return s.appID }

// SignatureSecret is the secret that signs the webhooks ("" when Unsigned).
func (s *Server) SignatureSecret() string {
	if s.unsigned {
		return ""
	}
	return s.secret
}

// PublicKey is the application's public key, which verifies API JWTs.
func (s *Server) PublicKey() *rsa.PublicKey { return &s.key.PublicKey }

// Credentials are the application's credentials as a Vonage telephony
// configuration stores them: api_key, api_secret, application_id,
// private_key (PEM, PKCS#8), signature_secret (left out when Unsigned) and
// machine_detection.
func (s *Server) Credentials(machineDetection bool) map[string]any {
	c := map[string]any{"api_key": s.apiKey, "api_secret": s.apiSecret, "application_id": s.appID,
		"private_key": PrivateKeyPEM(s.key), "machine_detection": machineDetection}
	if !s.unsigned {
		c["signature_secret"] = s.secret
	}
	return c
}

// SetScript replaces the script function (nil: DefaultScript) for calls
// created from now on.
func (s *Server) SetScript(f func(CallInfo) Script) {
	if f == nil {
		f = DefaultScript
	}
	s.mu.Lock()
	s.script = f
	s.mu.Unlock()
}

// SetFault sets a function asked about every API request (after the
// authentication check and the TooManyRequestsNext budget); a non-nil Fault
// is answered instead of serving the request. nil removes it. f may be
// called concurrently and may call the Server.
func (s *Server) SetFault(f func(Request) *Fault) { s.gate.SetFault(f) }

// TooManyRequestsNext answers the next n create requests with HTTP 429
// (added to any budget left).
func (s *Server) TooManyRequestsNext(n int) { s.gate.LimitNext(n) }

// SetUnauthorized turns the 401 mode on or off: while on, every API request
// is answered 401, as for a revoked application key.
func (s *Server) SetUnauthorized(on bool) { s.gate.SetUnauthorized(on) }
