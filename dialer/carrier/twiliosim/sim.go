// Package twiliosim simulates the part of Twilio's Programmable Voice REST
// API (2010-04-01) the dialer uses, speaking Twilio's wire format, for tests
// and benchmarks that run over real HTTP:
//
//   - POST /2010-04-01/Accounts/{AccountSid}/Calls.json creates a call
//     (HTTP Basic AccountSid:AuthToken, form-encoded, 201 with the JSON Call
//     resource, Twilio's JSON errors otherwise);
//   - GET /2010-04-01/Accounts/{AccountSid}/Calls/{CallSid}.json fetches it;
//   - POST to the same URL with Status=completed or Status=canceled hangs it
//     up or cancels it;
//   - GET /2010-04-01/Accounts/{AccountSid}.json answers the Account
//     resource (a read-only credential check).
//
// Every created call then plays a Script chosen by the test (outcome, ring
// delay, talk time): when answered the simulator requests the call's Url
// (the answer webhook) and records the TwiML it gets; it posts the
// StatusCallback events the call asked for (initiated, ringing, answered as
// CallStatus in-progress, completed with the final status and CallDuration),
// form-encoded, numbered by SequenceNumber and signed with X-Twilio-Signature
// over the exact callback URL with the account's auth token, as Twilio does.
// Scripts can duplicate, reorder, delay or lose callbacks; faults (HTTP 429
// with error 20429, 401 with 20003, anything else) can be injected per
// request.
//
// The create's Timeout, TimeLimit and machine-detection tuning parameters are
// accepted but not enforced: the script alone decides when a call is
// answered and ends. Hanging up a call that was not answered yet (either
// Status) ends it "canceled"; Status=completed ends an answered call
// "completed"; Status=canceled leaves an answered call up, as Twilio
// documents.
//
// The Server records what it saw: calls in flight and their peak, creates in
// total and per To number, every call with its create form, status and
// TwiML. Tests wait for progress with Wait and WaitFinal, which block on a
// channel, never on sleeps.
//
// Time is real (time.AfterFunc per scripted step); every call's webhooks are
// delivered one at a time by at most one goroutine per call, through one
// shared http.Client, so 20,000 calls at 1,000 calls/s with hundreds in
// flight cost little.
package twiliosim

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/outdial/outdial/dialer/carrier/internal/simkit"
)

// Default credentials of a simulated account.
const (
	DefaultAccountSID = "AC0123456789abcdef0123456789abcdef"
	DefaultAuthToken  = "twiliosim-auth-token-0123456789ab"
)

// Outcome is how a simulated call ends.
type Outcome string

// Outcomes a Script can play. Human and Machine are answered (the call ends
// "completed" after the talk time); Machine reports AnsweredBy machine_start
// (machine_end_beep with MachineDetection=DetectMessageEnd) when the call
// asked for machine detection. The others end the call with that Twilio
// status after the ring delay without answering it.
const (
	Human    Outcome = "human"
	Machine  Outcome = "machine"
	Busy     Outcome = "busy"
	NoAnswer Outcome = "no-answer"
	Failed   Outcome = "failed"
	Canceled Outcome = "canceled"
)

// Never, as a Script's RingDelay or TalkDuration, means the step does not
// come by itself: the call rings (or talks) until it is hung up through the
// API.
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
	// AnsweredBy overrides the machine-detection verdict ("fax",
	// "unknown", ...); it is reported only when the call asked for
	// MachineDetection.
	AnsweredBy string
	// CallDuration is the talk time reported in seconds (final callback,
	// fetched resource); 0 means the measured talk time, rounded.
	CallDuration int
	// CallbackDelay delays every status callback: each is sent no earlier
	// than CallbackDelay after its event.
	CallbackDelay time.Duration
	// Duplicate sends every status callback twice in a row (same
	// SequenceNumber), as a retrying Twilio would.
	Duplicate bool
	// OutOfOrder holds the non-final status callbacks back and sends them
	// after the final one, latest first.
	OutOfOrder bool
	// LoseFinal never sends the final status callback (the call still ends
	// and a fetch shows its final status): the service must reconcile.
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
	// SID is the call's sid ("CA" + 32 hex digits).
	SID      string
	To, From string
	// Attempt counts the creates to this To number so far, this one
	// included (1 for the first call to a number).
	Attempt int
	// Form is the create request's form, as received.
	Form url.Values
	// Created is when the create request was accepted.
	Created time.Time
}

// Request is an API request, as a fault function sees it.
type Request struct {
	// Op is OpCreate, OpFetch, OpUpdate or OpAccount.
	Op string
	// CallSID is the call of a fetch or update ("" for a create).
	CallSID string
	// Form is the request's form (empty for a fetch).
	Form url.Values
}

// Operations of a Request.
const (
	OpCreate  = "create"
	OpFetch   = "fetch"
	OpUpdate  = "update"
	OpAccount = "account" // GET of the Account resource

)

// Fault is an error answer the simulator gives instead of serving a request:
// Twilio's JSON error body {code, message, more_info, status}.
type Fault struct {
	Status  int
	Code    int
	Message string
	// RetryAfter, when set, is sent as the Retry-After header.
	RetryAfter string
	// Create, for a create request, creates the call (its script plays)
	// although the error is answered: a request that "may or may not have
	// gone out" that in fact did.
	Create bool
}

// TooManyRequests is the fault Twilio answers when an account sends too many
// concurrent requests: HTTP 429, error 20429.
func TooManyRequests() *Fault {
	return &Fault{Status: http.StatusTooManyRequests, Code: 20429, Message: "Too Many Requests"}
}

// Config configures a Server. Zero fields take the defaults.
type Config struct {
	// AccountSID and AuthToken are the only credentials accepted; they
	// also sign the webhooks. Defaults: DefaultAccountSID, DefaultAuthToken.
	AccountSID string
	AuthToken  string
	// Script chooses each call's script; default DefaultScript. It is
	// called once per created call, without any simulator lock held.
	Script func(CallInfo) Script
	// Client sends the webhooks; default a client keeping up to 1,024
	// idle connections per host and a 30 s timeout.
	Client *http.Client
	// RecordCallbacks keeps every status callback sent (params and answer)
	// in CallRecord.Callbacks; off by default to keep memory flat in
	// benchmarks.
	RecordCallbacks bool
}

// Stats are the simulator's counters. Every field only grows, except
// InFlight.
type Stats struct {
	// Requests counts API requests of any kind.
	Requests int
	// CreateRequests counts create requests, whatever was answered.
	CreateRequests int
	// Created counts calls created (201, and faults with Create).
	Created int
	// RateLimited, Unauthorized and Rejected count error answers: 429s,
	// 401s, and any other 4xx/5xx (validation errors, injected faults,
	// unknown calls).
	RateLimited  int
	Unauthorized int
	Rejected     int
	// InFlight is the number of calls from their create until the
	// simulator starts sending their final status callback (or the call
	// ends, when no final callback will be sent). Starting, not finishing,
	// the delivery makes this a lower bound of the service's own count: the
	// service cannot free a call's slot before that callback reaches it, so
	// a PeakInFlight above the service's limit is always a real violation.
	InFlight     int
	PeakInFlight int
	// Final counts calls that are over: final status reached and every
	// webhook of the call sent (answered, failed or timed out).
	Final int
	// Callbacks counts status callbacks sent (duplicates included);
	// CallbackErrors those that got a transport error or a non-2xx answer.
	Callbacks      int
	CallbackErrors int
	// AnswerRequests counts answer webhooks (requests to a call's Url).
	AnswerRequests int
	// Fetches and HangUps count successful fetch and update requests.
	Fetches int
	HangUps int
}

// Server is a simulated Twilio account. It is an http.Handler; Start also
// serves it on a loopback port. All methods are safe for concurrent use.
type Server struct {
	accountSID, authToken string
	client                *http.Client
	ownClient             bool
	record                bool
	ts                    *httptest.Server

	ctx    context.Context // canceled by Close: aborts webhook deliveries
	cancel context.CancelFunc
	closed atomic.Bool
	pumps  sync.WaitGroup // goroutines delivering webhooks

	counters simkit.Counters[Stats]
	gate     simkit.Gate[Request, Fault]

	// mu guards everything below. Lock order: a call's mu, then mu; never
	// the other way round. The counters' and the gate's own locks are taken
	// last.
	mu     sync.Mutex
	script func(CallInfo) Script
	calls  []*call
	bySID  map[string]*call
	byTo   map[string]int
}

// New returns a simulator handler (not listening; see Start).
func New(cfg Config) *Server {
	s := &Server{
		accountSID: cfg.AccountSID,
		authToken:  cfg.AuthToken,
		client:     cfg.Client,
		record:     cfg.RecordCallbacks,
		script:     cfg.Script,
		bySID:      map[string]*call{},
		byTo:       map[string]int{},
	}
	if s.accountSID == "" {
		s.accountSID = DefaultAccountSID
	}
	if s.authToken == "" {
		s.authToken = DefaultAuthToken
	}
	if s.client == nil {
		s.client = &http.Client{
			Timeout: 30 * time.Second,
			Transport: &http.Transport{
				Proxy:               nil,
				MaxIdleConns:        4096,
				MaxIdleConnsPerHost: 1024,
				IdleConnTimeout:     90 * time.Second,
				DisableCompression:  true,
			},
		}
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

// Start returns a simulator serving on a loopback port (httptest); its
// URL() is the base URL to give the carrier (OUTDIAL_TWILIO_API_URL).
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
		s.ts.Close() // no request is being served after this
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

// AccountSID and AuthToken are the account's credentials.
func (s *Server) AccountSID() string { return s.accountSID }

// AuthToken is the account's auth token (see AccountSID).
func (s *Server) AuthToken() string { return s.authToken }

// Credentials are the account's credentials as a Twilio telephony
// configuration stores them (account_sid, auth_token, machine_detection).
func (s *Server) Credentials(machineDetection bool) map[string]any {
	return map[string]any{"account_sid": s.accountSID, "auth_token": s.authToken, "machine_detection": machineDetection}
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

// TooManyRequestsNext answers the next n create requests with HTTP 429 and
// error 20429 (added to any budget left).
func (s *Server) TooManyRequestsNext(n int) { s.gate.LimitNext(n) }

// SetUnauthorized turns the 401 mode on or off: while on, every API request
// is answered 401 with error 20003, as for a wrong auth token.
func (s *Server) SetUnauthorized(on bool) { s.gate.SetUnauthorized(on) }

// Stats returns a snapshot of the counters.
func (s *Server) Stats() Stats { return s.counters.Get() }

// InFlight is Stats().InFlight.
func (s *Server) InFlight() int { return s.Stats().InFlight }

// PeakInFlight is Stats().PeakInFlight.
func (s *Server) PeakInFlight() int { return s.Stats().PeakInFlight }

// ResetPeak sets the peak to the current number of calls in flight, to
// measure one phase of a test.
func (s *Server) ResetPeak() {
	s.counters.Update(func(st *Stats) { st.PeakInFlight = st.InFlight })
}

// CreatesTo is the number of calls created to number to.
func (s *Server) CreatesTo(to string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byTo[to]
}

// CreatesByTo returns the number of calls created per To number.
func (s *Server) CreatesByTo() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.byTo))
	for k, v := range s.byTo {
		out[k] = v
	}
	return out
}

// Wait blocks until cond holds for the counters (checked at once and after
// every change) or ctx ends, returning ctx's error then. cond runs with the
// counters' lock held: it must not call the Server.
func (s *Server) Wait(ctx context.Context, cond func(Stats) bool) error {
	return s.counters.Wait(ctx, cond)
}

// WaitFinal blocks until at least n calls are over (Stats.Final) or ctx
// ends.
func (s *Server) WaitFinal(ctx context.Context, n int) error {
	return s.Wait(ctx, func(st Stats) bool { return st.Final >= n })
}
