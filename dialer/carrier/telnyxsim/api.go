package telnyxsim

// The REST side: routing, authentication, fault injection, validation, the
// call resource and Telnyx's JSON errors.

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/outdial/outdial/dialer/carrier/internal/simkit"
)

// commandWindow is how long Telnyx remembers a dial's command_id.
const commandWindow = 60 * time.Second

// maxBody bounds a request body.
const maxBody = 1 << 20

// Telnyx error codes the simulator answers.
const (
	codeNotFound     = "10005"
	codeInvalid      = "10015"
	codeCallEnded    = "90018"
	codeInvalidState = "90015"
)

// ServeHTTP serves the API (see the package comment). Anything else is 404
// with error 10005.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimSuffix(r.URL.Path, "/")
	switch {
	case path == "/v2/calls" && r.Method == http.MethodPost:
		s.dial(w, r)
	case path == "/v2/balance" && r.Method == http.MethodGet:
		s.balance(w, r)
	case path == "/v2/call_control_applications" && r.Method == http.MethodPost:
		s.createApplication(w, r)
	case strings.HasPrefix(path, "/v2/calls/"):
		rest := strings.TrimPrefix(path, "/v2/calls/")
		id, action, hasAction := strings.Cut(rest, "/actions/")
		id, _ = url.PathUnescape(id)
		switch {
		case !hasAction && !strings.Contains(rest, "/") && r.Method == http.MethodGet:
			s.get(w, r, id)
		case hasAction && r.Method == http.MethodPost && (action == OpHangUp || action == OpSpeak || action == OpStreamingStart):
			s.command(w, r, id, action)
		default:
			writeError(w, http.StatusNotFound, codeNotFound, "Resource not found", "The requested resource or URL could not be found.", "")
		}
	default:
		writeError(w, http.StatusNotFound, codeNotFound, "Resource not found", "The requested resource or URL could not be found.", "")
	}
}

// balance is GET /v2/balance: the account's balance ({"data":{balance,
// credit_limit, available_credit, currency, record_type:"balance"}}), the
// read-only request that tells whether the API key is accepted.
func (s *Server) balance(w http.ResponseWriter, r *http.Request) {
	if f := s.admit(r, Request{Op: OpBalance}); f != nil {
		s.answerFault(w, f)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{
		"balance": "100.00", "credit_limit": "0.00", "available_credit": "100.00", "pending": "0.00",
		"currency": "USD", "record_type": "balance",
	}})
}

// admit counts the request and applies, in order, the 401 mode, the Bearer
// key check, the 429 budget (dials only) and the fault function. It returns
// the fault to answer, or nil to serve the request.
func (s *Server) admit(r *http.Request, req Request) *Fault {
	s.update(func(st *Stats) {
		st.Requests++
		if req.Op == OpDial {
			st.DialRequests++
		}
	})
	authorized := r.Header.Get("Authorization") == "Bearer "+s.apiKey
	return s.gate.Check(req, authorized, req.Op == OpDial, Unauthorized, TooManyDials)
}

// answerFault writes f and counts it.
func (s *Server) answerFault(w http.ResponseWriter, f *Fault) {
	s.update(func(st *Stats) {
		switch f.Status {
		case http.StatusTooManyRequests:
			st.RateLimited++
		case http.StatusUnauthorized:
			st.Unauthorized++
		default:
			st.Rejected++
		}
	})
	if f.RetryAfter != "" {
		w.Header().Set("Retry-After", f.RetryAfter)
	}
	writeError(w, f.Status, f.Code, f.Title, f.Detail, "")
}

// reject answers a validation error (422 unless status says otherwise) and
// counts it.
func (s *Server) reject(w http.ResponseWriter, status int, code, title, detail, pointer string) {
	s.update(func(st *Stats) { st.Rejected++ })
	writeError(w, status, code, title, detail, pointer)
}

// readBody reads a request body (at most maxBody).
func readBody(r *http.Request) []byte {
	b, _ := io.ReadAll(io.LimitReader(r.Body, maxBody))
	return b
}

// dial is POST /v2/calls.
func (s *Server) dial(w http.ResponseWriter, r *http.Request) {
	body := readBody(r)
	f := s.admit(r, Request{Op: OpDial, Body: body})
	if f != nil && !f.Dial {
		s.answerFault(w, f)
		return
	}
	var d DialRequest
	if err := json.Unmarshal(body, &d); err != nil {
		s.reject(w, http.StatusBadRequest, codeInvalid, "Invalid request", "The request body is not valid JSON.", "")
		return
	}
	d.Raw = body
	if pointer, detail := s.validateDial(d); pointer != "" {
		s.reject(w, http.StatusUnprocessableEntity, codeInvalid, "Invalid value", detail, pointer)
		return
	}
	c, repeat := s.newCall(d)
	switch {
	case f != nil:
		s.answerFault(w, f)
	default:
		writeJSON(w, http.StatusOK, map[string]any{"data": c.dialAnswer()})
	}
	if repeat {
		return
	}
	if fl, ok := w.(http.Flusher); ok {
		fl.Flush() // the answer goes out before the first event
	}
	c.start()
}

// Values the dial validation accepts.
var (
	e164   = regexp.MustCompile(`^\+[1-9][0-9]{6,14}$`)
	amdSet = map[string]bool{"": true, "premium": true, "detect": true, "detect_beep": true, "detect_words": true,
		"greeting_end": true, "disabled": true}
	trackSet  = map[string]bool{"": true, "inbound_track": true, "outbound_track": true, "both_tracks": true}
	bidiModes = map[string]bool{"": true, "rtp": true, "mp3": true}
	bidiCodec = map[string]bool{"": true, "PCMU": true, "PCMA": true, "G722": true, "OPUS": true, "AMR-WB": true, "L16": true}
)

// validateDial returns the JSON pointer and reason of the first invalid
// field of a dial, or "" when it is valid.
func (s *Server) validateDial(d DialRequest) (pointer, detail string) {
	s.mu.Lock()
	_, known := s.appsByID[d.ConnectionID]
	s.mu.Unlock()
	switch {
	case d.ConnectionID == "":
		return "/connection_id", "connection_id is required."
	case !known:
		return "/connection_id", "The connection_id does not name a Call Control application of this account."
	case d.To == "":
		return "/to", "to is required."
	case !e164.MatchString(d.To) && !strings.HasPrefix(d.To, "sip:"):
		return "/to", "to must be a number in +E.164 format or a SIP URI."
	case !e164.MatchString(d.From):
		return "/from", "from must be a number in +E.164 format."
	case d.TimeoutSecs != 0 && (d.TimeoutSecs < 5 || d.TimeoutSecs > 600):
		return "/timeout_secs", "timeout_secs must be between 5 and 600."
	case d.TimeLimitSecs != 0 && (d.TimeLimitSecs < 1 || d.TimeLimitSecs > 14400):
		return "/time_limit_secs", "time_limit_secs must be between 1 and 14400."
	case d.WebhookURL != "" && !absolute(d.WebhookURL, "http", "https"):
		return "/webhook_url", "webhook_url must be an absolute http(s) URL."
	case d.WebhookURLMethod != "" && d.WebhookURLMethod != http.MethodPost && d.WebhookURLMethod != http.MethodGet:
		return "/webhook_url_method", "webhook_url_method must be POST or GET."
	case d.ClientState != "" && !validBase64(d.ClientState):
		return "/client_state", "client_state must be a valid Base-64 encoded string."
	case !amdSet[d.AnsweringMachineDetection]:
		return "/answering_machine_detection", "Unknown answering_machine_detection value."
	case d.StreamURL != "" && !absolute(d.StreamURL, "ws", "wss"):
		return "/stream_url", "stream_url must be an absolute ws(s) URL."
	case !trackSet[d.StreamTrack]:
		return "/stream_track", "stream_track must be inbound_track, outbound_track or both_tracks."
	case !bidiModes[d.StreamBidirectionalMode]:
		return "/stream_bidirectional_mode", "stream_bidirectional_mode must be rtp or mp3."
	case !bidiCodec[d.StreamBidirectionalCodec]:
		return "/stream_bidirectional_codec", "Unknown stream_bidirectional_codec."
	}
	return "", ""
}

// absolute reports whether raw is an absolute URL with one of schemes.
func absolute(raw string, schemes ...string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return false
	}
	for _, s := range schemes {
		if u.Scheme == s {
			return true
		}
	}
	return false
}

// validBase64 reports whether s is standard base64.
func validBase64(s string) bool {
	_, err := base64.StdEncoding.DecodeString(s)
	return err == nil
}

// get is GET /v2/calls/{id}.
func (s *Server) get(w http.ResponseWriter, r *http.Request, id string) {
	if f := s.admit(r, Request{Op: OpGet, CallControlID: id}); f != nil {
		s.answerFault(w, f)
		return
	}
	c := s.lookup(id)
	if c == nil {
		s.reject(w, http.StatusNotFound, codeNotFound, "Resource not found", "Call "+id+" was not found.", "")
		return
	}
	s.update(func(st *Stats) { st.Gets++ })
	writeJSON(w, http.StatusOK, map[string]any{"data": c.resource()})
}

// command is POST /v2/calls/{id}/actions/{hangup|speak|streaming_start}. A
// command repeating a command_id the call already got is answered ok and
// ignored, as Telnyx does.
func (s *Server) command(w http.ResponseWriter, r *http.Request, id, action string) {
	body := readBody(r)
	if f := s.admit(r, Request{Op: action, CallControlID: id, Body: body}); f != nil {
		s.answerFault(w, f)
		return
	}
	var args struct {
		speakArgs
		Payload     string `json:"payload"`
		StreamURL   string `json:"stream_url"`
		ClientState string `json:"client_state"`
		CommandID   string `json:"command_id"`
	}
	if len(body) > 0 && json.Unmarshal(body, &args) != nil {
		s.reject(w, http.StatusBadRequest, codeInvalid, "Invalid request", "The request body is not valid JSON.", "")
		return
	}
	c := s.lookup(id)
	if c == nil {
		s.reject(w, http.StatusNotFound, codeNotFound, "Resource not found", "Call "+id+" was not found.", "")
		return
	}
	c.mu.Lock()
	code, title, detail, pointer := "", "", "", ""
	switch {
	case c.ended:
		code, title, detail = codeCallEnded, "Call has already ended", "This call is no longer active and can't receive commands."
	case args.ClientState != "" && !validBase64(args.ClientState):
		code, title, detail, pointer = codeInvalid, "Invalid value", "client_state must be a valid Base-64 encoded string.", "/client_state"
	case action == OpSpeak && (args.Payload == "" || utf8.RuneCountInString(args.Payload) > 3000):
		code, title, detail, pointer = codeInvalid, "Invalid value", "payload is required (at most 3,000 characters).", "/payload"
	case action == OpSpeak && speakInvalid(args.speakArgs, &detail, &pointer):
		code, title = codeInvalid, "Invalid value"
	case action == OpStreamingStart && !absolute(args.StreamURL, "ws", "wss"):
		code, title, detail, pointer = codeInvalid, "Invalid value", "stream_url must be an absolute ws(s) URL.", "/stream_url"
	case action != OpHangUp && c.state != "answered":
		code, title, detail = codeInvalidState, "Invalid call state", "The call must be answered before this command."
	}
	if code != "" {
		c.mu.Unlock()
		s.reject(w, http.StatusUnprocessableEntity, code, title, detail, pointer)
		return
	}
	if args.CommandID != "" && c.commandIDs[args.CommandID] {
		// Telnyx ignores a command whose command_id the call already got.
		c.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{"result": "ok"}})
		return
	}
	if args.CommandID != "" {
		if c.commandIDs == nil {
			c.commandIDs = map[string]bool{}
		}
		c.commandIDs[args.CommandID] = true
	}
	c.command(action, body)
	switch action {
	case OpHangUp:
		c.hangUp()
	case OpSpeak:
		c.speak()
	case OpStreamingStart:
		c.streamURL = args.StreamURL
		c.event("streaming.started", map[string]any{"stream_url": args.StreamURL})
	}
	c.mu.Unlock()
	s.update(func(st *Stats) {
		switch action {
		case OpHangUp:
			st.HangUps++
		case OpSpeak:
			st.Speaks++
		case OpStreamingStart:
			st.Streams++
		}
	})
	writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{"result": "ok"}})
}

// createApplication is POST /v2/call_control_applications.
func (s *Server) createApplication(w http.ResponseWriter, r *http.Request) {
	body := readBody(r)
	if f := s.admit(r, Request{Op: OpCreateApplication, Body: body}); f != nil {
		s.answerFault(w, f)
		return
	}
	var a Application
	if err := json.Unmarshal(body, &a); err != nil {
		s.reject(w, http.StatusBadRequest, codeInvalid, "Invalid request", "The request body is not valid JSON.", "")
		return
	}
	switch {
	case strings.TrimSpace(a.ApplicationName) == "":
		s.reject(w, http.StatusUnprocessableEntity, codeInvalid, "Invalid value", "application_name is required.", "/application_name")
		return
	case !absolute(a.WebhookEventURL, "http", "https"):
		s.reject(w, http.StatusUnprocessableEntity, codeInvalid, "Invalid value", "webhook_event_url must be an absolute http(s) URL.", "/webhook_event_url")
		return
	case a.WebhookAPIVersion != "" && a.WebhookAPIVersion != "1" && a.WebhookAPIVersion != "2":
		s.reject(w, http.StatusUnprocessableEntity, codeInvalid, "Invalid value", "webhook_api_version must be 1 or 2.", "/webhook_api_version")
		return
	}
	if a.WebhookAPIVersion == "" {
		a.WebhookAPIVersion = "1"
	}
	a.Body = body
	now := time.Now().UTC().Format(telnyxTime)
	s.mu.Lock()
	a.ID = strconv.FormatInt(1293384261075731500+int64(len(s.apps)), 10)
	s.appsByID[a.ID] = len(s.apps)
	s.apps = append(s.apps, a)
	s.mu.Unlock()
	s.update(func(st *Stats) { st.Applications++ })
	writeJSON(w, http.StatusCreated, map[string]any{"data": map[string]any{
		"id": a.ID, "record_type": "call_control_application", "application_name": a.ApplicationName,
		"webhook_event_url": a.WebhookEventURL, "webhook_api_version": a.WebhookAPIVersion, "active": a.Active,
		"anchorsite_override": "Latency", "dtmf_type": "RFC 2833", "first_command_timeout": false,
		"first_command_timeout_secs": 30, "webhook_timeout_secs": nil, "created_at": now, "updated_at": now,
		"inbound":  map[string]any{"channel_limit": nil, "shaken_stir_enabled": false, "sip_subdomain": nil},
		"outbound": map[string]any{"channel_limit": nil, "outbound_voice_profile_id": nil},
	}})
}

// lookup returns the call callControlID, nil when there is none.
func (s *Server) lookup(id string) *call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byID[id]
}

// newCall registers a call dialled with d and chooses its script. A dial
// repeating a command_id seen within the last 60 s returns that call with
// repeat true (nothing is dialled).
func (s *Server) newCall(d DialRequest) (c *call, repeat bool) {
	now := time.Now()
	s.mu.Lock()
	if d.CommandID != "" {
		if prev, ok := s.commands[d.CommandID]; ok && now.Sub(prev.at) < commandWindow {
			s.mu.Unlock()
			return prev.c, true
		}
	}
	s.byTo[d.To]++
	c = &call{s: s, inFlight: true}
	c.q = simkit.Queue[delivery]{Lock: &c.mu, Pumps: &s.pumps, Closed: s.closed.Load,
		Take: c.take, Idle: c.maybeFinish, Deliver: c.deliver}
	c.info = CallInfo{N: len(s.calls) + 1, CallControlID: "v3:" + randomToken(30), CallLegID: newUUID(),
		CallSessionID: newUUID(), To: d.To, From: d.From, Attempt: s.byTo[d.To], Dial: d, Created: s.now()}
	c.url = d.WebhookURL
	if c.url == "" {
		c.url = s.apps[s.appsByID[d.ConnectionID]].WebhookEventURL
	}
	s.calls = append(s.calls, c)
	s.byID[c.info.CallControlID] = c
	if d.CommandID != "" {
		s.commands[d.CommandID] = dialCommand{c: c, at: now}
	}
	script := s.script
	// Counted under mu, after the call is recorded: N and the count agree,
	// and a waiter for Dialled finds the call in Calls.
	s.update(func(st *Stats) {
		st.Dialled++
		st.InFlight++
	})
	s.mu.Unlock()
	c.configure(script(c.info))
	return c, false
}

// randomToken is n random bytes, base64url without padding.
func randomToken(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// newUUID is a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// errorJSON is one error of Telnyx's error body.
type errorJSON struct {
	Code   string            `json:"code"`
	Title  string            `json:"title"`
	Detail string            `json:"detail"`
	Source map[string]string `json:"source,omitempty"`
	Meta   map[string]string `json:"meta,omitempty"`
}

// writeError writes Telnyx's error body with one error (its JSON pointer
// in source when not "").
func writeError(w http.ResponseWriter, status int, code, title, detail, pointer string) {
	e := errorJSON{Code: code, Title: title, Detail: detail,
		Meta: map[string]string{"url": "https://developers.telnyx.com/docs/overview/errors/" + code}}
	if pointer != "" {
		e.Source = map[string]string{"pointer": pointer}
	}
	writeJSON(w, status, map[string]any{"errors": []errorJSON{e}})
}

// writeJSON writes v as a JSON answer with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
