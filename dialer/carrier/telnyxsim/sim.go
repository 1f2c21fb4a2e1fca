// Package telnyxsim simulates the part of Telnyx's Call Control API (Voice
// API v2) the dialer uses, speaking Telnyx's wire format, for tests and
// benchmarks that run over real HTTP:
//
//   - POST /v2/calls dials (Authorization: Bearer <api key>, JSON body;
//     200 {"data":{call_control_id, call_leg_id, call_session_id,
//     is_alive:false, record_type:"call"}}, Telnyx's JSON errors
//     {"errors":[{code,title,detail}]} otherwise). A repeated command_id
//     within 60 s dials nothing and answers the first call again.
//   - GET /v2/calls/{call_control_id} answers the call with is_alive.
//   - POST /v2/calls/{id}/actions/hangup, .../speak and .../streaming_start
//     are the commands; an ended call answers 422 with error 90018, and a
//     command repeating a command_id the call already got is ignored.
//   - POST /v2/call_control_applications creates a Call Control
//     application (its id is a connection_id the dial accepts).
//   - GET /v2/balance answers the account's balance (a read-only
//     credential check).
//
// Every dialled call then plays a Script chosen by the test (outcome, ring
// delay, talk time, machine-detection result): Telnyx has no answer URL, so
// the simulator only posts events, JSON {"data":{record_type:"event",
// event_type, id, occurred_at, payload}} to the call's webhook_url (else its
// application's webhook_event_url), each signed as Telnyx signs:
// telnyx-timestamp (Unix seconds) and telnyx-signature-ed25519, base64 of
// the Ed25519 signature of timestamp + "|" + body, made with the simulator's
// own private key (PublicKey gives the base64 public key for the
// configuration's webhook_public_key).
//
// The events of a call: call.initiated; then call.answered, or call.hangup
// with the script's cause (user_busy, timeout, call_rejected,
// originator_cancel, ...). An answered call sends
// call.machine.detection.ended (or the premium variant, and
// call.machine.greeting.ended for a machine when the mode detects the
// greeting's end) when the dial asked for answering_machine_detection, and
// streaming.started when it asked for a stream_url. A speak command is
// followed by call.speak.started and, SpeakDuration later, call.speak.ended;
// the simulator then waits for the hang-up command (or the callee hangs up
// after TalkDuration). The final call.hangup of an answered call has
// hangup_cause normal_clearing (hangup_source caller when hung up by
// command, callee otherwise) or time_limit, start_time the answer and
// end_time the hang-up; hanging up a call not answered yet ends it
// originator_cancel.
//
// Scripts can delay, duplicate, reorder or lose events; faults (HTTP 429
// with error 90103, 401, anything else) can be injected per request. The
// Server records calls in flight and their peak, dials in total and per
// number, every call with its dial request, the commands it got and (with
// Config.RecordEvents) the events sent, and the applications created. Tests
// wait for progress with Wait and WaitFinal, which block on a channel.
//
// Time is real (time.AfterFunc per scripted step) except the clock that
// stamps events (SetNow), so a test that moves the service's clock can move
// the simulator's with it.
package telnyxsim

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"time"

	"github.com/outdial/outdial/dialer/carrier/internal/simkit"
)

// DefaultAPIKey is the API key a simulated account accepts by default.
const DefaultAPIKey = "KEYtelnyxsim0123456789abcdef_0123456789"

// DefaultConnectionID is a Call Control application that exists in every
// simulated account, with no webhook_event_url.
const DefaultConnectionID = "1293384261075731499"

// Config configures a Server. Zero fields take the defaults.
type Config struct {
	// APIKey is the only key accepted; default DefaultAPIKey.
	APIKey string
	// Seed is the 32-byte seed of the webhook signing key; default random.
	Seed []byte
	// Script chooses each call's script; default DefaultScript. It is
	// called once per dialled call, without any simulator lock held.
	Script func(CallInfo) Script
	// Client sends the webhooks; default a client keeping up to 1,024 idle
	// connections per host and a 30 s timeout.
	Client *http.Client
	// RecordEvents keeps every event sent in CallRecord.Events; off by
	// default to keep memory flat in benchmarks.
	RecordEvents bool
}

// Stats are the simulator's counters. Every field only grows, except
// InFlight.
type Stats struct {
	// Requests counts API requests of any kind; DialRequests the dials,
	// whatever was answered; Dialled the calls dialled.
	Requests     int
	DialRequests int
	Dialled      int
	// RateLimited, Unauthorized and Rejected count error answers: 429s,
	// 401s, and any other 4xx/5xx.
	RateLimited  int
	Unauthorized int
	Rejected     int
	// InFlight is the number of calls from their dial until the simulator
	// starts sending their call.hangup (or the call ends, when none will be
	// sent): a lower bound of the service's own count, so a PeakInFlight
	// above the service's limit is always a real violation.
	InFlight     int
	PeakInFlight int
	// Final counts calls that are over: ended and every event sent.
	Final int
	// Events counts events sent (duplicates included); EventErrors those
	// that got a transport error or a non-2xx answer.
	Events      int
	EventErrors int
	// Gets, HangUps, Speaks and Streams count successful requests of each
	// kind; Applications the applications created.
	Gets         int
	HangUps      int
	Speaks       int
	Streams      int
	Applications int
}

// Server is a simulated Telnyx account. It is an http.Handler; Start also
// serves it on a loopback port. All methods are safe for concurrent use.
type Server struct {
	apiKey    string
	priv      ed25519.PrivateKey
	client    *http.Client
	ownClient bool
	record    bool
	ts        *httptest.Server

	ctx    context.Context // canceled by Close: aborts deliveries
	cancel context.CancelFunc
	closed atomic.Bool
	pumps  sync.WaitGroup
	nowFn  atomic.Pointer[func() time.Time]

	// counters has its own lock, taken last: after a call's mu and mu.
	counters simkit.Counters[Stats]
	gate     simkit.Gate[Request, Fault]

	// mu guards everything below. Lock order: a call's mu, then mu.
	mu       sync.Mutex
	script   func(CallInfo) Script
	calls    []*call
	byID     map[string]*call
	byTo     map[string]int
	commands map[string]dialCommand // command_id → first dial
	apps     []Application
	appsByID map[string]int
}

// dialCommand remembers a dial's command_id for Telnyx's 60 s dedupe.
type dialCommand struct {
	c  *call
	at time.Time
}

// New returns a simulator handler (not listening; see Start).
func New(cfg Config) *Server {
	s := &Server{apiKey: cfg.APIKey, client: cfg.Client, record: cfg.RecordEvents, script: cfg.Script,
		byID: map[string]*call{}, byTo: map[string]int{}, commands: map[string]dialCommand{}, appsByID: map[string]int{}}
	if s.apiKey == "" {
		s.apiKey = DefaultAPIKey
	}
	seed := cfg.Seed
	if len(seed) != ed25519.SeedSize {
		seed = make([]byte, ed25519.SeedSize)
		_, _ = rand.Read(seed) // never fails
	}
	s.priv = ed25519.NewKeyFromSeed(seed)
	if s.client == nil {
		s.client = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
			Proxy: nil, MaxIdleConns: 4096, MaxIdleConnsPerHost: 1024, IdleConnTimeout: 90 * time.Second,
			DisableCompression: true,
		}}
		s.ownClient = true
	}
	if s.script == nil {
		s.script = DefaultScript
	}
	s.apps = []Application{{ID: DefaultConnectionID, ApplicationName: "default"}}
	s.appsByID[DefaultConnectionID] = 0
	s.counters.Settle = func(st *Stats) {
		if st.InFlight > st.PeakInFlight {
			st.PeakInFlight = st.InFlight
		}
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s
}

// Start returns a simulator serving on a loopback port (httptest); its URL()
// is the base URL to give the carrier (OUTDIAL_TELNYX_API_URL).
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

// Close stops every call's script, aborts deliveries, waits for them and,
// for a started simulator, stops serving. Counters and records stay
// readable. Closing is also how a test makes the API unreachable.
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

// PublicKey is the base64 Ed25519 public key that verifies the simulator's
// webhooks (a configuration's webhook_public_key).
func (s *Server) PublicKey() string {
	return base64.StdEncoding.EncodeToString(s.priv.Public().(ed25519.PublicKey))
}

// Credentials are a Telnyx configuration's stored credentials for this
// account: api_key, connection_id (DefaultConnectionID unless given),
// webhook_public_key (PublicKey; left out when signed is false) and
// machine_detection.
func (s *Server) Credentials(connectionID string, signed, machineDetection bool) map[string]any {
	if connectionID == "" {
		connectionID = DefaultConnectionID
	}
	c := map[string]any{"api_key": s.apiKey, "connection_id": connectionID, "machine_detection": machineDetection}
	if signed {
		c["webhook_public_key"] = s.PublicKey()
	}
	return c
}

// SetNow sets the clock that stamps events (telnyx-timestamp, occurred_at,
// start and end times); nil means time.Now.
func (s *Server) SetNow(now func() time.Time) {
	if now == nil {
		s.nowFn.Store(nil)
		return
	}
	s.nowFn.Store(&now)
}

// now is the events' clock.
func (s *Server) now() time.Time {
	if f := s.nowFn.Load(); f != nil {
		return (*f)()
	}
	return time.Now()
}

// SetScript replaces the script function (nil: DefaultScript) for calls
// dialled from now on.
func (s *Server) SetScript(f func(CallInfo) Script) {
	if f == nil {
		f = DefaultScript
	}
	s.mu.Lock()
	s.script = f
	s.mu.Unlock()
}

// SetFault sets a function asked about every API request (after the
// authentication check and the TooManyDialsNext budget); a non-nil Fault is
// answered instead. nil removes it. f may be called concurrently and may
// call the Server.
func (s *Server) SetFault(f func(Request) *Fault) { s.gate.SetFault(f) }

// TooManyDialsNext answers the next n dials with HTTP 429 and error 90103.
func (s *Server) TooManyDialsNext(n int) { s.gate.LimitNext(n) }

// SetUnauthorized turns the 401 mode on or off: while on, every API request
// is answered 401, as for a revoked API key.
func (s *Server) SetUnauthorized(on bool) { s.gate.SetUnauthorized(on) }

// Stats returns a snapshot of the counters.
func (s *Server) Stats() Stats { return s.counters.Get() }

// PeakInFlight is Stats().PeakInFlight.
func (s *Server) PeakInFlight() int { return s.Stats().PeakInFlight }

// ResetPeak sets the peak to the current number of calls in flight.
func (s *Server) ResetPeak() { s.update(func(st *Stats) { st.PeakInFlight = st.InFlight }) }

// DialsTo is the number of calls dialled to number to.
func (s *Server) DialsTo(to string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byTo[to]
}

// Wait blocks until cond holds for the counters (checked at once and after
// every change) or ctx ends, returning ctx's error then. cond runs with the
// counters' lock held: it must not call the Server.
func (s *Server) Wait(ctx context.Context, cond func(Stats) bool) error {
	return s.counters.Wait(ctx, cond)
}

// WaitFinal blocks until at least n calls are over or ctx ends.
func (s *Server) WaitFinal(ctx context.Context, n int) error {
	return s.Wait(ctx, func(st Stats) bool { return st.Final >= n })
}

// update changes the counters and wakes the waiters.
func (s *Server) update(f func(st *Stats)) { s.counters.Update(f) }
