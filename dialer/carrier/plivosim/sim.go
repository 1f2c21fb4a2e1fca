// Package plivosim simulates the part of the Plivo Voice API the dialer
// uses, in either of its two dialects, over real HTTP (httptest):
//
//   - Plivo: /v1/Account/{auth_id}/..., HTTP Basic auth_id:auth_token,
//     webhooks signed with X-Plivo-Signature-V3 (HMAC-SHA256 over the
//     callback URL with its sorted query, "." and the sorted POST
//     parameters, then "." and the nonce);
//   - Vobiz: /api/v1/Account/{auth_id}/..., headers X-Auth-ID and
//     X-Auth-Token, webhooks signed with X-Vobiz-Signature-V3 (HMAC-SHA256
//     over the callback URL without its query + "." + nonce) and
//     X-Vobiz-Signature-V2 (the same without the "."), each with its own
//     nonce.
//
// Endpoints (JSON bodies, answers and errors {"api_id", "error"}):
//
//   - GET .../Account/{auth_id}/ answers the account's details (a read-only
//     credential check);
//   - POST .../Call/ makes a call: from, to (digits, no "+"), answer_url,
//     optional ring_url, hangup_url, machine_detection ("true" or "hangup")
//     with machine_detection_url, ring_timeout, time_limit and their
//     methods; 201 {"api_id", "message": "call fired", "request_uuid"};
//   - GET .../Call/{call_uuid}/?status=live: a live call (ringing or in
//     progress); GET .../Call/{call_uuid}/: the call detail record of an
//     ended call; GET .../Call/{request_uuid}/?status=queued: a call
//     request not dialled yet; 404 otherwise;
//   - DELETE .../Call/{call_uuid}/ hangs up a live call; DELETE
//     .../Request/{request_uuid}/ cancels a call not answered yet (204;
//     404 for an unknown or ended call);
//   - POST .../Application/ creates an application (app_name, answer_url
//     required): 201 {"api_id", "app_id", "message": "created"}.
//
// Every created call plays a Script chosen by the test: queued, then
// ringing (the ring_url callback, CallStatus ringing), then answered (the
// answer_url is requested with CallStatus in-progress and the XML it
// answers recorded; with machine detection the machine_detection_url gets
// Machine=true or false) or ended unanswered, and finally the hangup_url
// callback with the final CallStatus (completed, busy, no-answer, timeout,
// cancel, failed), Duration and BillDuration. Plivo names the call with a
// request_uuid at create time and a separate CallUUID in callbacks; Vobiz
// uses one id for both, as its documentation shows. Callbacks are
// form-encoded POSTs signed as the dialect signs them with a fresh 20-digit
// nonce each. Scripts can delay, duplicate, reorder or lose callbacks;
// faults (429, 401, any other) can be injected per request, including the
// application create.
//
// The Server records what it saw (calls, create bodies, answer XML,
// callbacks with their headers, applications, peak calls in flight,
// creates per number) and offers helpers to sign, forge and replay
// webhooks. Tests wait with Wait, which blocks on a channel.
package plivosim

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"time"

	"github.com/outdial/outdial/dialer/carrier/internal/simkit"
)

// Dialect selects the API the simulator speaks.
type Dialect string

// Dialects.
const (
	Plivo Dialect = "plivo"
	Vobiz Dialect = "vobiz"
)

// Default credentials of a simulated account.
const (
	DefaultPlivoAuthID = "MAPLIVOSIM0123456789"
	DefaultVobizAuthID = "MA_VOBIZSIM01"
	DefaultAuthToken   = "plivosim-auth-token-0123456789abcdef"
)

// Outcome is how a simulated call ends.
type Outcome string

// Outcomes a Script can play. Human and Machine are answered (the call ends
// "completed" after the talk time); a Machine reports Machine=true to the
// machine_detection_url when the call asked for detection (a Human
// Machine=false). The others end the call unanswered with that CallStatus
// after the ring delay.
const (
	Human    Outcome = "human"
	Machine  Outcome = "machine"
	Busy     Outcome = "busy"
	NoAnswer Outcome = "no-answer"
	Timeout  Outcome = "timeout"
	Failed   Outcome = "failed"
	Canceled Outcome = "cancel"
)

// Never, as a Script's QueueDelay, RingDelay or TalkDuration, means the
// step does not come by itself: the call waits until hung up or cancelled
// through the API.
const Never time.Duration = -1

// Script is what one call does after it was created. The zero Script is a
// person answering at once and hanging up at once.
type Script struct {
	// Outcome is how the call ends; "" is Human.
	Outcome Outcome
	// QueueDelay is how long the call request stays queued (known only by
	// its request_uuid) before it is dialled and rings.
	QueueDelay time.Duration
	// RingDelay is the time from the first ring to the answer (Human,
	// Machine) or to the final status (the other outcomes).
	RingDelay time.Duration
	// TalkDuration is the time from the answer to the hangup.
	TalkDuration time.Duration
	// Duration is the talk time reported in seconds (hangup callback,
	// CDR); 0 means the measured talk time, rounded.
	Duration int
	// CallbackDelay delays every callback: each is sent no earlier than
	// CallbackDelay after its event.
	CallbackDelay time.Duration
	// Duplicate sends every status callback twice in a row, each signed
	// with its own nonce, as a provider retrying delivery would.
	Duplicate bool
	// OutOfOrder holds the non-final status callbacks (ring, machine
	// detection) back and sends them after the hangup, latest first.
	OutOfOrder bool
	// LoseFinal never sends the hangup callback (the call still ends and
	// its CDR shows the final status): the service must reconcile.
	LoseFinal bool
}

// DefaultScript answers every call at once (a person) and hangs up 50 ms
// later.
func DefaultScript(CallInfo) Script {
	return Script{Outcome: Human, TalkDuration: 50 * time.Millisecond}
}

// CallInfo describes a created call to the script function.
type CallInfo struct {
	// N numbers created calls from 1 in creation order.
	N int
	// RequestUUID is the id the create answered; CallUUID the id callbacks
	// name the call by (the same for Vobiz).
	RequestUUID, CallUUID string
	// To and From are as received (no "+").
	To, From string
	// Attempt counts the creates to this To number so far, this one
	// included.
	Attempt int
	// Body is the create request's parameters, as received.
	Body map[string]string
	// Created is when the create request was accepted.
	Created time.Time
}

// Request is an API request, as a fault function sees it.
type Request struct {
	// Op is one of the Op constants.
	Op string
	// ID is the call_uuid or request_uuid of a query or hang up ("" for
	// creates).
	ID string
	// Body is the parameters of a create.
	Body map[string]string
}

// Operations of a Request.
const (
	OpCreate    = "create"
	OpLive      = "live"
	OpCDR       = "cdr"
	OpQueued    = "queued"
	OpHangUp    = "hangup"
	OpCancel    = "cancel"
	OpCreateApp = "create_app"
	OpAccount   = "account" // GET of the account's details
)

// Fault is an error answer the simulator gives instead of serving a
// request: {"api_id", "error": Message} with Status.
type Fault struct {
	Status  int
	Message string
	// RetryAfter, when set, is sent as the Retry-After header.
	RetryAfter string
	// Create, for a call create, creates the call (its script plays)
	// although the error is answered: a request that "may or may not have
	// gone out" that in fact did.
	Create bool
}

// TooManyRequests is the fault for an account over its API rate limit.
func TooManyRequests() *Fault {
	return &Fault{Status: http.StatusTooManyRequests, Message: "too many requests"}
}

// Config configures a Server. Zero fields take the defaults.
type Config struct {
	// Dialect is Plivo (default) or Vobiz.
	Dialect Dialect
	// AuthID and AuthToken are the only credentials accepted; the token
	// also signs the webhooks. Defaults: DefaultPlivoAuthID or
	// DefaultVobizAuthID, DefaultAuthToken.
	AuthID    string
	AuthToken string
	// Script chooses each call's script; default DefaultScript. It is
	// called once per created call, without any simulator lock held.
	Script func(CallInfo) Script
	// Client sends the webhooks; default a client keeping up to 1,024 idle
	// connections per host and a 30 s timeout.
	Client *http.Client
	// RecordCallbacks keeps every callback sent (URL, headers, params,
	// answer) in CallRecord.Callbacks.
	RecordCallbacks bool
}

// Stats are the simulator's counters. Every field only grows, except
// InFlight.
type Stats struct {
	// Requests counts API requests of any kind; CreateRequests the call
	// creates among them, whatever was answered.
	Requests       int
	CreateRequests int
	// Created counts calls created (201, and faults with Create).
	Created int
	// RateLimited, Unauthorized and Rejected count error answers: 429s,
	// 401s, and any other error (validation, injected faults, unknown
	// calls).
	RateLimited  int
	Unauthorized int
	Rejected     int
	// InFlight is the number of calls from their create until the
	// simulator starts sending their hangup callback (or the call ends,
	// when none will be sent): a lower bound of the service's own count.
	InFlight     int
	PeakInFlight int
	// Final counts calls that are over: ended and every callback sent.
	Final int
	// Callbacks counts status callbacks sent (ring, machine detection,
	// hangup; duplicates included); CallbackErrors those that got a
	// transport error or a non-2xx answer.
	Callbacks      int
	CallbackErrors int
	// AnswerRequests counts requests to answer URLs.
	AnswerRequests int
	// Queries, HangUps and Cancels count successful GETs of a call,
	// DELETEs of a call and DELETEs of a request.
	Queries int
	HangUps int
	Cancels int
	// AppsCreated counts applications created.
	AppsCreated int
}

// Server is a simulated Plivo or Vobiz account. It is an http.Handler;
// Start also serves it on a loopback port. All methods are safe for
// concurrent use.
type Server struct {
	dialect           Dialect
	prefix            string // "/v1" or "/api/v1"
	authID, authToken string
	client            *http.Client
	ownClient         bool
	record            bool
	ts                *httptest.Server

	ctx    context.Context // canceled by Close: aborts webhook deliveries
	cancel context.CancelFunc
	closed atomic.Bool
	pumps  sync.WaitGroup // goroutines delivering webhooks

	stats simkit.Counters[Stats]      // own lock, taken last
	gate  simkit.Gate[Request, Fault] // own lock, taken last

	// mu guards everything below. Lock order: a call's mu, then mu, then
	// the counters' and the gate's own locks.
	mu        sync.Mutex
	script    func(CallInfo) Script
	calls     []*call
	byRequest map[string]*call
	byCall    map[string]*call
	byTo      map[string]int
	apps      []AppRecord
}

// New returns a simulator handler (not listening; see Start).
func New(cfg Config) *Server {
	s := &Server{
		dialect:   cfg.Dialect,
		authID:    cfg.AuthID,
		authToken: cfg.AuthToken,
		client:    cfg.Client,
		record:    cfg.RecordCallbacks,
		script:    cfg.Script,
		byRequest: map[string]*call{},
		byCall:    map[string]*call{},
		byTo:      map[string]int{},
	}
	if s.dialect != Vobiz {
		s.dialect = Plivo
	}
	s.prefix = "/v1"
	if s.dialect == Vobiz {
		s.prefix = "/api/v1"
	}
	if s.authID == "" {
		s.authID = DefaultPlivoAuthID
		if s.dialect == Vobiz {
			s.authID = DefaultVobizAuthID
		}
	}
	if s.authToken == "" {
		s.authToken = DefaultAuthToken
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
	s.stats.Settle = func(st *Stats) {
		if st.InFlight > st.PeakInFlight {
			st.PeakInFlight = st.InFlight
		}
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s
}

// Start returns a simulator serving on a loopback port; its URL() is the
// base URL to give the carrier (OUTDIAL_PLIVO_API_URL or
// OUTDIAL_VOBIZ_API_URL).
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

// Close stops every call's script, aborts webhook deliveries, waits for
// them and, for a started simulator, stops serving. Counters and records
// stay readable. A closed simulator is also how a test makes the provider
// unreachable.
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

// Dialect is the API the simulator speaks.
func (s *Server) Dialect() Dialect { return s.dialect }

// AuthID is the account's auth id.
func (s *Server) AuthID() string { return s.authID }

// AuthToken is the account's auth token.
func (s *Server) AuthToken() string { return s.authToken }

// Credentials are the account's credentials as a telephony configuration
// stores them: auth_id, auth_token, and for Plivo machine_detection.
func (s *Server) Credentials(machineDetection bool) map[string]any {
	c := map[string]any{"auth_id": s.authID, "auth_token": s.authToken}
	if s.dialect == Plivo {
		c["machine_detection"] = machineDetection
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
// authentication check and the TooManyRequestsNext budget); a non-nil
// Fault is answered instead of serving the request. nil removes it. f may
// be called concurrently and may call the Server.
func (s *Server) SetFault(f func(Request) *Fault) { s.gate.SetFault(f) }

// TooManyRequestsNext answers the next n call creates with HTTP 429 (n
// is added to what is left of an earlier budget).
func (s *Server) TooManyRequestsNext(n int) { s.gate.LimitNext(n) }

// SetUnauthorized turns the 401 mode on or off: while on, every API
// request is answered 401, as for a wrong auth token.
func (s *Server) SetUnauthorized(on bool) { s.gate.SetUnauthorized(on) }

// Stats returns a snapshot of the counters.
func (s *Server) Stats() Stats { return s.stats.Get() }

// PeakInFlight is Stats().PeakInFlight.
func (s *Server) PeakInFlight() int { return s.Stats().PeakInFlight }

// CreatesTo is the number of calls created to number to (as sent, without
// "+").
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
	return s.stats.Wait(ctx, cond)
}

// WaitFinal blocks until at least n calls are over or ctx ends.
func (s *Server) WaitFinal(ctx context.Context, n int) error {
	return s.Wait(ctx, func(st Stats) bool { return st.Final >= n })
}

// update changes the counters and wakes the waiters.
func (s *Server) update(f func(st *Stats)) { s.stats.Update(f) }
