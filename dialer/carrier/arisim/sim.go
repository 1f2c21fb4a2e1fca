// Package arisim simulates the part of Asterisk's REST Interface (ARI) the
// dialer uses, speaking ARI's wire format over real HTTP and a real
// websocket (github.com/coder/websocket), for tests:
//
//   - POST /ari/channels/{channelId} originates a call (query endpoint, app,
//     appArgs, callerId, timeout, otherChannelId; JSON body {"variables":
//     {...}}), answering 200 with the Channel snapshot (state Down), 409
//     while a live channel has that id, and accepting the same id again once
//     that channel is destroyed, as Asterisk 22 does (providers.md §1g);
//   - GET and DELETE /ari/channels/{channelId} look a channel up and hang it
//     up (404 for a channel that is gone);
//   - GET /ari/asterisk/info answers the AsteriskInfo (a read-only
//     credential check);
//   - POST /ari/channels/externalMedia creates a media channel (recorded);
//     POST /ari/bridges, POST /ari/bridges/{id}/addChannel and
//     DELETE /ari/bridges/{id} manage bridges (recorded);
//   - GET /ari/events?app=...&subscribeAll=... is the events websocket; every
//     channel originated with app=X (and the far half of a Local/ channel)
//     reports its events to the websockets of application X.
//
// Requests need HTTP Basic auth with the configured user and password (or
// ?api_key=user:password); a refused request is 401 with
// {"message":"Authentication required"}.
//
// An endpoint starting with Local/ makes two channels, the one originated
// (the id asked for) and its far half (otherChannelId, else a generated
// id); any other technology makes one. Every call plays a Script chosen by
// the test, with the event sequences observed on a real Asterisk 22 (§1g):
//
//	Answer:      [Ringing: ChannelStateChange Ringing, Dial RINGING]
//	             far Up, ChannelStateChange Up, Dial ANSWER, StasisStart;
//	             after the talk time ChannelHangupRequest(16), StasisEnd,
//	             ChannelDestroyed 16 on both halves
//	Busy:        Dial BUSY; ours destroyed with cause 0, the far half 17
//	NoAnswer:    ChannelStateChange Ringing, Dial RINGING; at the ring
//	             timeout both halves destroyed with cause 19
//	Congestion:  Dial CONGESTION; causes 0 and 34
//	Unavailable: Dial CHANUNAVAIL; causes 0 and 20
//	Rejected:    no final Dial; causes 0 and 21
//
// (a single channel ends with the far half's cause itself). The far half's
// ChannelDestroyed comes before ours unless the script says FarHalfLast. A
// DELETE of a ringing call sends ChannelHangupRequest, Dial CANCEL and
// destroys both halves with cause 16. A call answered while no websocket of
// its application is connected cannot enter Stasis and is hung up at once,
// as Asterisk does with an inactive application.
//
// Tests can end a ring now (Answer) or make the far end hang up (HangUp),
// drop every events websocket (DropEvents) and refuse new ones for a while
// (RefuseEvents, RefuseEventsFor), inject faults per request (SetFault,
// SetUnauthorized), and read records: originates per channel id and number,
// calls in flight and their peak, externalMedia channels, bridges,
// hang-ups, events sent. Wait blocks on a channel until the counters
// satisfy a condition, never sleep-polling.
package arisim

import (
	"context"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/outdial/outdial/dialer/carrier/internal/simkit"
)

// Defaults of a simulated Asterisk.
const (
	DefaultApp          = "outdial"
	DefaultPassword     = "arisim-secret-0123456789"
	DefaultWSClient     = "agent_media"
	DefaultDialTemplate = "Local/{number}@outdial"
)

// Outcome is what the far end of a simulated call does.
type Outcome string

// Outcomes a Script can play (see the package comment for their events).
const (
	Answer      Outcome = "answer"
	Busy        Outcome = "busy"
	NoAnswer    Outcome = "no-answer"
	Congestion  Outcome = "congestion"
	Unavailable Outcome = "unavailable"
	Rejected    Outcome = "rejected"
)

// Never, as a Script's RingDelay or TalkDuration, means the step does not
// come by itself: the call rings (or talks) until it is hung up.
const Never time.Duration = -1

// Script is what one call does after it was originated. The zero Script
// answers at once and hangs up at once.
type Script struct {
	// Outcome is what the far end does; "" is Answer.
	Outcome Outcome
	// RingDelay is the time from the originate to the answer (Answer) or
	// to the end (the others). For NoAnswer, 0 means the originate's
	// timeout (30 s when not given; -1: Never).
	RingDelay time.Duration
	// TalkDuration is the time from the answer until the far end hangs up.
	TalkDuration time.Duration
	// FarHalfLast destroys our channel before the far half of a Local/
	// channel, FarHalfDelay apart (else the far half goes first).
	FarHalfLast  bool
	FarHalfDelay time.Duration
}

// DefaultScript answers every call at once and hangs up 20 ms later.
func DefaultScript(CallInfo) Script {
	return Script{Outcome: Answer, TalkDuration: 20 * time.Millisecond}
}

// CallInfo describes an originated call to the script function.
type CallInfo struct {
	// N numbers calls from 1 in origination order.
	N int
	// ChannelID is the originated channel's id, FarChannelID its far half's
	// ("" for a single channel).
	ChannelID, FarChannelID string
	// Endpoint is the dial string, Number the number dialled in it.
	Endpoint, Number string
	// Attempt counts the calls to this number so far, this one included.
	Attempt int
	// Query is the originate request's query.
	Query url.Values
}

// Operations of a Request.
const (
	OpOriginate     = "originate"
	OpGet           = "get"
	OpHangup        = "hangup"
	OpExternalMedia = "external_media"
	OpCreateBridge  = "create_bridge"
	OpAddChannel    = "add_channel"
	OpDeleteBridge  = "delete_bridge"
	OpEvents        = "events"
	OpAsteriskInfo  = "asterisk_info"
)

// Request is an API request, as a fault function sees it.
type Request struct {
	Op string
	// ID is the channel or bridge id in the path ("" when none).
	ID    string
	Query url.Values
}

// Fault is an error answer given instead of serving a request:
// {"message": Message} with HTTP Status.
type Fault struct {
	Status  int
	Message string
	// Originate, for an originate, places the call all the same: a request
	// that "may or may not have gone out" that in fact did.
	Originate bool
}

// Config configures a Server. Zero fields take the defaults.
type Config struct {
	// App is the ARI user and Stasis application; Password its password.
	App      string
	Password string
	// WSClient is the ws_client_name of Credentials; DialTemplate its
	// dial_template.
	WSClient     string
	DialTemplate string
	// Script chooses each call's script; default DefaultScript. It is
	// called once per call without any simulator lock held.
	Script func(CallInfo) Script
}

// Stats are the simulator's counters. Every field only grows, except
// InFlight and Listeners (and the peaks, which tests may reset).
type Stats struct {
	// Requests counts REST requests of any kind (not websocket upgrades).
	Requests int
	// Originates counts originate requests, whatever was answered;
	// Originated the calls placed; Conflicts the 409s.
	Originates int
	Originated int
	Conflicts  int
	// Unauthorized counts 401s; Faults the injected fault answers; Errors
	// other 4xx answers (bad requests, unknown channels).
	Unauthorized int
	Faults       int
	Errors       int
	// InFlight is the number of calls from the originate until our
	// channel's ChannelDestroyed; PeakInFlight its highest value.
	InFlight     int
	PeakInFlight int
	// Answered counts calls answered; Ended calls whose channels are all
	// destroyed.
	Answered int
	Ended    int
	// Gets, HangUps count successful lookups and hang-ups;
	// ExternalMedia, Bridges, AddChannels the media channels, bridges and
	// addChannel requests served.
	Gets          int
	HangUps       int
	ExternalMedia int
	Bridges       int
	AddChannels   int
	// Connects counts events websockets accepted, Refused those refused,
	// Listeners those open now; Events counts events delivered to a
	// websocket, Dropped events nobody was connected to receive.
	Connects  int
	Refused   int
	Listeners int
	Events    int
	Dropped   int
	// PeakListeners is the highest Listeners (listeners.go): more than one
	// means two clients held the application's events at once.
	PeakListeners int
}

// Server is a simulated Asterisk. It is an http.Handler; Start also serves
// it on a loopback port. All methods are safe for concurrent use.
type Server struct {
	app, password, wsClient, dialTemplate string
	ts                                    *httptest.Server

	ctx    context.Context // canceled by Close: stops scripts and websockets
	cancel context.CancelFunc
	closed atomic.Bool
	wg     sync.WaitGroup // scripts and websocket writers

	counters simkit.Counters[Stats]      // own lock; updated with mu held where both change
	gate     simkit.Gate[Request, Fault] // 401 mode and injected faults

	// mu guards everything below.
	mu          sync.Mutex
	script      func(CallInfo) Script
	refuseUntil time.Time
	refuse      bool
	channels    map[string]*channel // live channels by id
	calls       []*call
	originates  map[string]int // calls placed per channel id
	byNumber    map[string]int // calls placed per number
	requests    []OriginateRecord
	media       []MediaRecord
	bridges     map[string]*bridge
	bridgeOrder []*bridge
	hangups     []string
	conns       map[*eventConn]struct{}
	seq         int // generated ids
}

// New returns a simulator handler (not listening; see Start).
func New(cfg Config) *Server {
	s := &Server{
		app: cfg.App, password: cfg.Password, wsClient: cfg.WSClient, dialTemplate: cfg.DialTemplate,
		script:     cfg.Script,
		channels:   map[string]*channel{},
		originates: map[string]int{},
		byNumber:   map[string]int{},
		bridges:    map[string]*bridge{},
		conns:      map[*eventConn]struct{}{},
	}
	if s.app == "" {
		s.app = DefaultApp
	}
	if s.password == "" {
		s.password = DefaultPassword
	}
	if s.wsClient == "" {
		s.wsClient = DefaultWSClient
	}
	if s.dialTemplate == "" {
		s.dialTemplate = DefaultDialTemplate
	}
	if s.script == nil {
		s.script = DefaultScript
	}
	s.counters.Settle = func(st *Stats) {
		if st.InFlight > st.PeakInFlight {
			st.PeakInFlight = st.InFlight
		}
		settleListeners(st)
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s
}

// Start returns a simulator serving on a loopback port; URL() is its
// ari_endpoint.
func Start(cfg Config) *Server {
	s := New(cfg)
	s.ts = httptest.NewServer(s)
	return s
}

// URL is the base URL of a started simulator ("" for New), the
// configuration's ari_endpoint.
func (s *Server) URL() string {
	if s.ts == nil {
		return ""
	}
	return s.ts.URL
}

// Close stops every call's script and websocket and, for a started
// simulator, stops serving. Counters and records stay readable.
func (s *Server) Close() {
	if s.closed.Swap(true) {
		return
	}
	s.cancel()
	s.DropEvents()
	if s.ts != nil {
		s.ts.CloseClientConnections()
		s.ts.Close()
	}
	s.wg.Wait()
}

// App is the ARI user and application name; Password its password.
func (s *Server) App() string { return s.app }

// Password is the ARI user's password.
func (s *Server) Password() string { return s.password }

// Credentials are an ARI telephony configuration's credentials for this
// simulator (ari_endpoint, app_name, app_password, ws_client_name,
// dial_template).
func (s *Server) Credentials() map[string]any {
	return map[string]any{"ari_endpoint": s.URL(), "app_name": s.app, "app_password": s.password,
		"ws_client_name": s.wsClient, "dial_template": s.dialTemplate}
}

// SetScript replaces the script function (nil: DefaultScript) for calls
// originated from now on.
func (s *Server) SetScript(f func(CallInfo) Script) {
	if f == nil {
		f = DefaultScript
	}
	s.mu.Lock()
	s.script = f
	s.mu.Unlock()
}

// SetFault sets a function asked about every request (after the
// authentication check); a non-nil Fault is answered instead of serving it.
// nil removes it. f may be called concurrently and may call the Server.
func (s *Server) SetFault(f func(Request) *Fault) { s.gate.SetFault(f) }

// SetUnauthorized turns the 401 mode on or off: while on, every request
// (websocket upgrades included) is refused as for a wrong password.
func (s *Server) SetUnauthorized(on bool) { s.gate.SetUnauthorized(on) }

// RefuseEvents makes the events websocket refuse new connections (HTTP 503)
// while on is true; see also RefuseEventsFor.
func (s *Server) RefuseEvents(on bool) {
	s.mu.Lock()
	s.refuse = on
	s.mu.Unlock()
}

// RefuseEventsFor refuses new events websockets for d from now.
func (s *Server) RefuseEventsFor(d time.Duration) {
	s.mu.Lock()
	s.refuseUntil = time.Now().Add(d)
	s.mu.Unlock()
}

// Stats returns a snapshot of the counters.
func (s *Server) Stats() Stats { return s.counters.Get() }

// ResetPeak sets the peak to the number of calls in flight now.
func (s *Server) ResetPeak() {
	s.counters.Update(func(st *Stats) { st.PeakInFlight = st.InFlight })
}

// Wait blocks until cond holds for the counters (checked at once and after
// every change) or ctx ends, returning ctx's error then. cond runs with the
// counters' lock held: it must not call the Server.
func (s *Server) Wait(ctx context.Context, cond func(Stats) bool) error {
	return s.counters.Wait(ctx, cond)
}
