package vonagesim

// The REST side: routing, authentication, fault injection, validation and
// the JSON call object.

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/outdial/outdial/dialer/carrier/internal/simkit"
)

const callsPath = "/v1/calls"

// e164Digits is the number format of a phone endpoint (no "+").
var e164Digits = regexp.MustCompile(`^\d{7,15}$`)

// ServeHTTP serves the Calls API (see the package comment). Anything else is
// 404.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch rest, ok := strings.CutPrefix(r.URL.Path, callsPath); {
	case ok && (rest == "" || rest == "/"):
		switch r.Method {
		case http.MethodPost:
			s.create(w, r)
		case http.MethodGet:
			s.list(w, r)
		default:
			writeProblem(w, http.StatusMethodNotAllowed, "method-not-allowed", "Method Not Allowed", "", nil)
		}
	case ok && strings.HasPrefix(rest, "/") && !strings.Contains(rest[1:], "/"):
		uuid := rest[1:]
		switch r.Method {
		case http.MethodGet:
			s.fetch(w, r, uuid)
		case http.MethodPut:
			s.updateCall(w, r, uuid)
		default:
			writeProblem(w, http.StatusMethodNotAllowed, "method-not-allowed", "Method Not Allowed", "", nil)
		}
	default:
		writeProblem(w, http.StatusNotFound, "not-found", "Not Found", "The requested resource does not exist", nil)
	}
}

// list is GET /v1/calls: the application's calls as a HAL page
// ({"count","page_size","record_index","_links","_embedded":{"calls":[...]}}),
// newest first, page_size 1..100 (default 10); the read-only request that
// tells whether the application's JWT is accepted.
func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	if f := s.admit(r, Request{Op: OpList}); f != nil {
		s.answerFault(w, f)
		return
	}
	size := 10
	if v := r.URL.Query().Get("page_size"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			writeProblem(w, http.StatusBadRequest, "validation", "Bad Request", "page_size must be 1..100", nil)
			return
		}
		size = n
	}
	// A call's lock is never taken under the server's: copy, then read.
	s.mu.Lock()
	all := append([]*call(nil), s.calls...)
	s.mu.Unlock()
	calls := make([]any, 0, size)
	for i := len(all) - 1; i >= 0 && len(calls) < size; i-- {
		calls = append(calls, all[i].resource())
	}
	count := len(all)
	writeJSON(w, http.StatusOK, map[string]any{
		"count": count, "page_size": size, "record_index": 0,
		"_links":    map[string]any{"self": map[string]any{"href": callsPath + "?page_size=" + strconv.Itoa(size)}},
		"_embedded": map[string]any{"calls": calls},
	})
}

// admit counts the request and applies, in order, the 401 mode, the JWT
// check, the 429 budget (creates only) and the fault function. It returns
// the fault to answer, or nil to serve the request.
func (s *Server) admit(r *http.Request, req Request) *Fault {
	authErr := s.verifyAPIToken(r.Header.Get("Authorization"), time.Now())
	s.counters.Update(func(st *Stats) {
		st.Requests++
		if req.Op == OpCreate {
			st.CreateRequests++
		}
	})
	return s.gate.Check(req, authErr == nil, req.Op == OpCreate, func() *Fault {
		return &Fault{Status: http.StatusUnauthorized, Type: "unauthorized", Title: "Unauthorized",
			Detail: "You did not provide correct credentials."}
	}, TooManyRequests)
}

// answerFault writes f and counts it.
func (s *Server) answerFault(w http.ResponseWriter, f *Fault) {
	s.counters.Update(func(st *Stats) {
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
	writeProblem(w, f.Status, f.Type, f.Title, f.Detail, nil)
}

// invalid is one entry of a validation problem's invalid_parameters.
type invalid struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// reject answers a validation error and counts it.
func (s *Server) reject(w http.ResponseWriter, params []invalid) {
	s.counters.Update(func(st *Stats) { st.Rejected++ })
	writeProblem(w, http.StatusBadRequest, "validation", "Bad Request", "The request failed due to validation errors", params)
}

// create is POST /v1/calls.
func (s *Server) create(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		s.admit(r, Request{Op: OpCreate})
		s.reject(w, []invalid{{Name: "body", Reason: "unreadable"}})
		return
	}
	f := s.admit(r, Request{Op: OpCreate, Body: body})
	if f != nil && !f.Create {
		s.answerFault(w, f)
		return
	}
	var cr CreateRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&cr); err != nil {
		s.reject(w, []invalid{{Name: "body", Reason: "is not a JSON object: " + err.Error()}})
		return
	}
	if params := validateCreate(cr); len(params) > 0 {
		s.reject(w, params)
		return
	}
	c := s.newCall(cr)
	if f != nil {
		s.answerFault(w, f)
	} else {
		writeJSON(w, http.StatusCreated, map[string]string{"uuid": c.info.UUID, "status": "started",
			"direction": "outbound", "conversation_uuid": c.info.ConversationUUID})
	}
	if fl, ok := w.(http.Flusher); ok {
		fl.Flush() // the answer goes out before the first webhook
	}
	c.start()
}

// validateCreate returns the invalid parameters of a create request, as
// Vonage's voice validation names them.
func validateCreate(cr CreateRequest) []invalid {
	var out []invalid
	bad := func(name, reason string) { out = append(out, invalid{Name: name, Reason: reason}) }
	if len(cr.To) == 0 {
		bad("to", "must contain at least one endpoint")
	}
	for i, e := range cr.To {
		if e.Type != "phone" {
			bad("to["+strconv.Itoa(i)+"].type", "the simulator only dials phone endpoints")
		} else if !e164Digits.MatchString(e.Number) {
			bad("to["+strconv.Itoa(i)+"].number", `must match \d{7,15} (E.164 without "+")`)
		}
	}
	switch {
	case cr.From == nil:
		bad("from", "is required")
	case cr.From.Type != "phone":
		bad("from.type", "must be phone")
	case !e164Digits.MatchString(cr.From.Number):
		bad("from.number", `must match \d{7,15} (E.164 without "+")`)
	}
	switch {
	case len(cr.NCCO) == 0 && len(cr.AnswerURL) == 0:
		bad("answer_url", "answer_url or ncco is required")
	case len(cr.NCCO) > 0 && len(cr.AnswerURL) > 0:
		bad("ncco", "give answer_url or ncco, not both")
	}
	for i, u := range cr.AnswerURL {
		if !absoluteHTTP(u) {
			bad("answer_url["+strconv.Itoa(i)+"]", "must be an absolute http(s) URL")
		}
	}
	for i, u := range cr.EventURL {
		if !absoluteHTTP(u) {
			bad("event_url["+strconv.Itoa(i)+"]", "must be an absolute http(s) URL")
		}
	}
	for name, m := range map[string]string{"answer_method": cr.AnswerMethod, "event_method": cr.EventMethod} {
		if m != "" && m != http.MethodGet && m != http.MethodPost {
			bad(name, "must be GET or POST")
		}
	}
	if md := cr.MachineDetection; md != "" && md != "continue" && md != "hangup" {
		bad("machine_detection", "must be continue or hangup")
	}
	if t := cr.RingingTimer; t != nil && (*t < 1 || *t > 120) {
		bad("ringing_timer", "must be between 1 and 120")
	}
	if t := cr.LengthTimer; t != nil && (*t < 1 || *t > 7200) {
		bad("length_timer", "must be between 1 and 7200")
	}
	return out
}

func absoluteHTTP(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// fetch is GET /v1/calls/{uuid}.
func (s *Server) fetch(w http.ResponseWriter, r *http.Request, uuid string) {
	if f := s.admit(r, Request{Op: OpFetch, UUID: uuid}); f != nil {
		s.answerFault(w, f)
		return
	}
	c := s.lookup(uuid)
	if c == nil {
		s.answerFault(w, &Fault{Status: http.StatusNotFound, Type: "not-found", Title: "Not Found",
			Detail: "Call " + uuid + " does not exist"})
		return
	}
	s.counters.Update(func(st *Stats) { st.Fetches++ })
	writeJSON(w, http.StatusOK, c.resource())
}

// updateCall is PUT /v1/calls/{uuid} with {"action":"hangup"}: a ringing
// call ends "cancelled", an answered one "completed"; 204. A call that is
// over is 404, as its leg no longer exists.
func (s *Server) updateCall(w http.ResponseWriter, r *http.Request, uuid string) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if f := s.admit(r, Request{Op: OpUpdate, UUID: uuid, Body: body}); f != nil {
		s.answerFault(w, f)
		return
	}
	var u struct {
		Action string `json:"action"`
	}
	if err := json.Unmarshal(body, &u); err != nil || u.Action != "hangup" {
		s.reject(w, []invalid{{Name: "action", Reason: "the simulator supports hangup only"}})
		return
	}
	c := s.lookup(uuid)
	if c == nil || !c.hangUp() {
		s.answerFault(w, &Fault{Status: http.StatusNotFound, Type: "not-found", Title: "Not Found",
			Detail: "Call " + uuid + " is not in progress"})
		return
	}
	s.counters.Update(func(st *Stats) { st.HangUps++ })
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) lookup(uuid string) *call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byUUID[uuid]
}

// newCall registers a call created from cr and chooses its script.
func (s *Server) newCall(cr CreateRequest) *call {
	c := &call{s: s}
	c.q = simkit.Queue[delivery]{Lock: &c.mu, Pumps: &s.pumps, Closed: s.closed.Load,
		Take: func(d delivery) {
			if d.final {
				c.leave()
			}
		},
		Idle: c.maybeFinish, Deliver: c.deliver}
	now := time.Now()
	s.mu.Lock()
	to := cr.To[0].Number
	s.byTo[to]++
	c.info = CallInfo{N: len(s.calls) + 1, UUID: newUUID(), ConversationUUID: "CON-" + newUUID(), To: to,
		From: cr.From.Number, Attempt: s.byTo[to], Request: cr, Created: now}
	c.inFlight = true
	s.calls = append(s.calls, c)
	s.byUUID[c.info.UUID] = c
	script := s.script
	// Counted before the call can be looked up (and hung up): mu held.
	s.counters.Update(func(st *Stats) {
		st.Created++
		st.InFlight++
	})
	s.mu.Unlock()
	c.configure(script(c.info))
	return c
}

// problem is Vonage's RFC 7807 error body.
type problem struct {
	Type              string    `json:"type"`
	Title             string    `json:"title"`
	Detail            string    `json:"detail,omitempty"`
	Instance          string    `json:"instance"`
	InvalidParameters []invalid `json:"invalid_parameters,omitempty"`
}

func writeProblem(w http.ResponseWriter, status int, typ, title, detail string, params []invalid) {
	if title == "" {
		title = http.StatusText(status)
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(problem{Type: "https://developer.nexmo.com/api-errors#" + typ, Title: title,
		Detail: detail, Instance: newUUID(), InvalidParameters: params})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
