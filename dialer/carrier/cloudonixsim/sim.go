// Package cloudonixsim simulates the part of Cloudonix's REST API
// (api.cloudonix.io) the dialer uses, speaking Cloudonix's wire format, for
// tests that run over real HTTP:
//
//   - POST /calls/{domain}/application places an outbound call from a voice
//     application (Authorization: Bearer <API key>, JSON body with
//     destination, caller-id, one of application / url / cxml, callback,
//     timeLimit, profile; 200 with the session's token);
//   - GET /calls/{domain}/sessions/{token} fetches the session;
//   - DELETE /calls/{domain}/sessions/{token} ends it (a ringing call is
//     canceled, an answered one completed; an ended one is 404);
//   - POST /customers/self/domains/{domain}/applications (and its alias
//     /domains/{domain}/applications) creates a voice application;
//   - GET /customers/self/domains/{domain} answers the domain (a read-only
//     credential check; 404 for another domain).
//
// Every placed call then plays a Script chosen by the test (outcome, ring
// delay, talk time, final status): when answered the simulator requests the
// call's url (the voice application; POST with a JSON body as Cloudonix
// documents, or GET with query parameters) and records the CXML it gets; it
// posts the Session model as JSON to the call's callback on every status
// change (ringing, connected, and the final one). Cloudonix does not sign
// these requests, so neither does the simulator. Scripts can duplicate,
// reorder, delay or lose callbacks; faults (429, 401, anything else) can be
// injected per request. The domain is known by name and by numeric id; a
// wrong bearer token is 401, another domain 404.
//
// The Server records what it saw: calls in flight and their peak, creates in
// total and per destination, every call with its request, status, CXML and
// callbacks, and the applications created. Tests wait for progress with
// Wait and WaitFinal, which block on a channel, never on sleeps. Each call's
// script runs in its own goroutine, waiting on timers and channels.
package cloudonixsim

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"time"

	"github.com/outdial/outdial/dialer/carrier/internal/simkit"
)

// Defaults of a simulated domain.
const (
	DefaultDomain      = "outdial-sim.cloudonix.net"
	DefaultDomainID    = 4242
	DefaultBearerToken = "XIcloudonixsim0123456789abcdefABCD"
)

// Outcome is how a simulated call ends.
type Outcome string

// Outcomes a Script can play. Human is answered (session status connected,
// then completed after the talk time); Cloudonix has no answering-machine
// detection, so an answering machine is a Human to it. The others end the
// call unanswered after the ring delay with session status busy, noanswer,
// failed or cancel (Script.FinalStatus overrides the status sent).
const (
	Human    Outcome = "human"
	Busy     Outcome = "busy"
	NoAnswer Outcome = "noanswer"
	Failed   Outcome = "failed"
	Canceled Outcome = "cancel"
)

// Never, as a Script's RingDelay or TalkDuration, means the step does not
// come by itself: the call rings (or talks) until it is ended through the
// API.
const Never time.Duration = -1

// Script is what one call does after it was placed. The zero Script is a
// person answering at once and hanging up at once.
type Script struct {
	// Outcome is how the call ends; "" is Human.
	Outcome Outcome
	// RingDelay is the time from the create request to the answer (Human)
	// or to the final status (the other outcomes).
	RingDelay time.Duration
	// TalkDuration is the time from the answer (and the voice-application
	// request) to the final "completed".
	TalkDuration time.Duration
	// FinalStatus, when set, is the session status of an unanswered end
	// instead of the outcome's ("nocredit", "congestion", ...).
	FinalStatus string
	// CallbackDelay delays every session update by this much.
	CallbackDelay time.Duration
	// Duplicate sends every session update twice in a row.
	Duplicate bool
	// OutOfOrder holds the non-final session updates back and sends them
	// after the final one, latest first.
	OutOfOrder bool
	// LoseFinal never sends the final session update (the session still
	// ends and a fetch shows it): the service must reconcile.
	LoseFinal bool
}

// DefaultScript answers every call at once (a person) and ends it
// "completed" 50 ms later.
func DefaultScript(CallInfo) Script {
	return Script{Outcome: Human, TalkDuration: 50 * time.Millisecond}
}

// CallInfo describes a placed call to the script function.
type CallInfo struct {
	// N numbers placed calls from 1 in creation order.
	N int
	// Token is the session token (32 hex digits).
	Token    string
	To, From string
	// Attempt counts the creates to this destination so far, this one
	// included.
	Attempt int
	// Request is the create request's body, as decoded.
	Request CreateRequest
	// Created is when the create request was accepted.
	Created time.Time
}

// Request is an API request, as a fault function sees it.
type Request struct {
	// Op is OpCreate, OpGet, OpDelete or OpCreateApp.
	Op string
	// Token is the session of a get or delete ("" otherwise).
	Token string
	// Body is the request body (nil for get and delete).
	Body []byte
}

// Operations of a Request.
const (
	OpCreate    = "create"
	OpGet       = "get"
	OpDelete    = "delete"
	OpCreateApp = "create_application"
	OpDomain    = "domain" // GET of the domain resource
)

// Fault is an error answer the simulator gives instead of serving a
// request, with the JSON body {"code": Status, "message": Message}.
type Fault struct {
	Status  int
	Message string
	// RetryAfter, when set, is sent as the Retry-After header.
	RetryAfter string
	// Create, for a create request, places the call (its script plays)
	// although the error is answered: a request that "may or may not have
	// gone out" that in fact did.
	Create bool
}

// TooManyRequests is Cloudonix's answer past 10 requests per domain per 10
// seconds: HTTP 429.
func TooManyRequests() *Fault {
	return &Fault{Status: http.StatusTooManyRequests, Message: "Too Many Requests", RetryAfter: "1"}
}

// Config configures a Server. Zero fields take the defaults.
type Config struct {
	// Domain and DomainID name the simulated domain (defaults
	// DefaultDomain, DefaultDomainID); either is accepted in URLs.
	Domain   string
	DomainID int64
	// BearerToken is the only API key accepted (default
	// DefaultBearerToken).
	BearerToken string
	// Applications are voice applications that exist from the start (by
	// name); created ones are added.
	Applications []string
	// Script chooses each call's script; default DefaultScript. It is
	// called once per placed call, without any simulator lock held.
	Script func(CallInfo) Script
	// AnswerMethod is how the voice application (the call's url) is
	// requested: POST (default) with a JSON body, or GET with query
	// parameters.
	AnswerMethod string
	// Client sends the webhooks; default a client with a 30 s timeout.
	Client *http.Client
}

// Stats are the simulator's counters. Every field only grows, except
// InFlight.
type Stats struct {
	// Requests counts API requests of any kind; CreateRequests the call
	// creates among them, whatever was answered.
	Requests       int
	CreateRequests int
	// Created counts calls placed (200, and faults with Create).
	Created int
	// RateLimited, Unauthorized and Rejected count error answers: 429s,
	// 401s, and any other 4xx/5xx.
	RateLimited  int
	Unauthorized int
	Rejected     int
	// InFlight is the number of calls from their create until the
	// simulator starts sending their final session update (or the call
	// ends, when none will be sent): a lower bound of the service's own
	// count, so a PeakInFlight above the service's limit is a violation.
	InFlight     int
	PeakInFlight int
	// Final counts calls that are over: final status reached and every
	// webhook of the call sent.
	Final int
	// Callbacks counts session updates sent (duplicates included);
	// CallbackErrors those that got a transport error or a non-2xx answer.
	Callbacks      int
	CallbackErrors int
	// AnswerRequests counts voice-application requests (to a call's url).
	AnswerRequests int
	// Fetches and HangUps count successful session gets and deletes;
	// ApplicationsCreated successful application creates.
	Fetches             int
	HangUps             int
	ApplicationsCreated int
}

// Server is a simulated Cloudonix domain. It is an http.Handler; Start also
// serves it on a loopback port. All methods are safe for concurrent use.
type Server struct {
	domain    string
	domainID  int64
	token     string
	method    string
	client    *http.Client
	ownClient bool
	ts        *httptest.Server
	ctx       context.Context // canceled by Close: stops scripts and deliveries
	cancel    context.CancelFunc
	closed    atomic.Bool
	scripts   sync.WaitGroup // running call scripts
	counters  simkit.Counters[Stats]
	gate      simkit.Gate[admission, Fault]

	// mu guards everything below. Lock order: a call's mu, then mu.
	mu      sync.Mutex
	script  func(CallInfo) Script
	calls   []*call
	byToken map[string]*call
	byTo    map[string]int
	apps    map[string]Application
}

// admission is an API request as the gate sees it: the domain check comes
// between the 401 checks and the 429 budget, so an unknown domain skips the
// budget and is answered 404 by the gate's fault function (see SetFault).
type admission struct {
	Request
	knownDomain bool
}

// New returns a simulator handler (not listening; see Start).
func New(cfg Config) *Server {
	s := &Server{domain: cfg.Domain, domainID: cfg.DomainID, token: cfg.BearerToken, method: http.MethodPost,
		client: cfg.Client, script: cfg.Script, byToken: map[string]*call{}, byTo: map[string]int{},
		apps: map[string]Application{}}
	if s.domain == "" {
		s.domain = DefaultDomain
	}
	if s.domainID == 0 {
		s.domainID = DefaultDomainID
	}
	if s.token == "" {
		s.token = DefaultBearerToken
	}
	if cfg.AnswerMethod == http.MethodGet {
		s.method = http.MethodGet
	}
	if s.client == nil {
		s.client = &http.Client{Timeout: 30 * time.Second,
			Transport: &http.Transport{MaxIdleConnsPerHost: 256, IdleConnTimeout: 90 * time.Second}}
		s.ownClient = true
	}
	if s.script == nil {
		s.script = DefaultScript
	}
	for _, name := range cfg.Applications {
		s.apps[name] = Application{Name: name, Type: "cxml", Method: http.MethodGet, Active: true}
	}
	s.counters.Settle = func(st *Stats) {
		if st.InFlight > st.PeakInFlight {
			st.PeakInFlight = st.InFlight
		}
	}
	s.SetFault(nil)
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s
}

// Start returns a simulator serving on a loopback port (httptest); its URL()
// is the base URL to give the carrier (OUTDIAL_CLOUDONIX_API_URL).
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

// Close stops every call's script and webhook deliveries, waits for them
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
	s.scripts.Wait()
	if s.ownClient {
		s.client.CloseIdleConnections()
	}
}

// Domain is the domain's name; DomainID its numeric id.
func (s *Server) Domain() string { return s.domain }

// DomainID is the domain's numeric id (see Domain).
func (s *Server) DomainID() int64 { return s.domainID }

// BearerToken is the API key the simulator accepts.
func (s *Server) BearerToken() string { return s.token }

// Credentials are the domain's credentials as a Cloudonix telephony
// configuration stores them (bearer_token, domain_id, application_name).
func (s *Server) Credentials(applicationName string) map[string]any {
	return map[string]any{"bearer_token": s.token, "domain_id": s.domain, "application_name": applicationName}
}

// SetScript replaces the script function (nil: DefaultScript) for calls
// placed from now on.
func (s *Server) SetScript(f func(CallInfo) Script) {
	if f == nil {
		f = DefaultScript
	}
	s.mu.Lock()
	s.script = f
	s.mu.Unlock()
}

// SetFault sets a function asked about every API request (after the 401
// mode, the bearer check, the domain check and the TooManyRequestsNext
// budget); a non-nil Fault is answered instead of serving the request. nil
// removes it. f may be called concurrently and may call the Server.
func (s *Server) SetFault(f func(Request) *Fault) {
	s.gate.SetFault(func(a admission) *Fault {
		switch {
		case !a.knownDomain:
			return &Fault{Status: http.StatusNotFound, Message: "Domain not found"}
		case f == nil:
			return nil
		}
		return f(a.Request)
	})
}

// TooManyRequestsNext answers the next n create requests with HTTP 429
// (added to what is left of an earlier budget).
func (s *Server) TooManyRequestsNext(n int) { s.gate.LimitNext(n) }

// SetUnauthorized turns the 401 mode on or off: while on, every API request
// is answered 401, as for a revoked API key.
func (s *Server) SetUnauthorized(on bool) { s.gate.SetUnauthorized(on) }

// Stats returns a snapshot of the counters.
func (s *Server) Stats() Stats { return s.counters.Get() }

// PeakInFlight is Stats().PeakInFlight.
func (s *Server) PeakInFlight() int { return s.Stats().PeakInFlight }

// ResetPeak sets the peak to the current number of calls in flight.
func (s *Server) ResetPeak() {
	s.counters.Update(func(st *Stats) { st.PeakInFlight = st.InFlight })
}

// CreatesTo is the number of calls placed to destination to.
func (s *Server) CreatesTo(to string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byTo[to]
}

// CreatesByTo returns the number of calls placed per destination.
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
