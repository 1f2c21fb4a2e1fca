package cloudonixsim

// The REST side: routing, authentication, fault injection, validation, the
// session resource and voice applications.

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// ServeHTTP serves the API (see the package comment). Anything else is 404.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case len(parts) == 3 && parts[0] == "calls" && parts[2] == "application" && r.Method == http.MethodPost:
		s.create(w, r, parts[1])
	case len(parts) == 4 && parts[0] == "calls" && parts[2] == "sessions":
		switch r.Method {
		case http.MethodGet:
			s.session(w, r, parts[1], parts[3], OpGet)
		case http.MethodDelete:
			s.session(w, r, parts[1], parts[3], OpDelete)
		default:
			writeError(w, http.StatusMethodNotAllowed, "Method not allowed")
		}
	case len(parts) == 5 && parts[0] == "customers" && parts[1] == "self" && parts[2] == "domains" &&
		parts[4] == "applications" && r.Method == http.MethodPost:
		s.createApp(w, r, parts[3])
	case len(parts) == 4 && parts[0] == "customers" && parts[1] == "self" && parts[2] == "domains" && r.Method == http.MethodGet:
		s.getDomain(w, r, parts[3])
	case len(parts) == 3 && parts[0] == "domains" && parts[2] == "applications" && r.Method == http.MethodPost:
		s.createApp(w, r, parts[1])
	default:
		writeError(w, http.StatusNotFound, "Not found: "+r.URL.Path)
	}
}

// getDomain is GET /customers/self/domains/{domain}: the domain resource
// (id, domain, active), read-only; a refused token is 401, a domain of
// another name 404.
func (s *Server) getDomain(w http.ResponseWriter, r *http.Request, domain string) {
	if f := s.admit(r, domain, Request{Op: OpDomain}); f != nil {
		s.answerFault(w, f)
		return
	}
	if !s.knownDomain(domain) {
		writeError(w, http.StatusNotFound, "Domain not found")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": s.domainID, "domain": s.domain, "active": true})
}

// knownDomain reports whether a URL's domain segment names the domain: its
// name (case-insensitive, with or without ".cloudonix.net") or its id.
func (s *Server) knownDomain(seg string) bool {
	seg, _ = url.PathUnescape(seg)
	key := func(v string) string { return strings.TrimSuffix(strings.ToLower(v), ".cloudonix.net") }
	return key(seg) == key(s.domain) || seg == strconv.FormatInt(s.domainID, 10)
}

// admit counts the request and applies, in order, the 401 mode, the bearer
// check, the domain check, the 429 budget (creates only) and the fault
// function. It returns the fault to answer, or nil to serve the request.
func (s *Server) admit(r *http.Request, domain string, req Request) *Fault {
	s.counters.Update(func(st *Stats) {
		st.Requests++
		if req.Op == OpCreate {
			st.CreateRequests++
		}
	})
	scheme, key, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	authorized := strings.EqualFold(scheme, "Bearer") && key == s.token
	known := s.knownDomain(domain)
	return s.gate.Check(admission{Request: req, knownDomain: known}, authorized, req.Op == OpCreate && known,
		func() *Fault { return &Fault{Status: http.StatusUnauthorized, Message: "Unauthorized"} }, TooManyRequests)
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
	writeError(w, f.Status, f.Message)
}

// reject answers a validation error (400 unless status says otherwise).
func (s *Server) reject(w http.ResponseWriter, status int, msg string) {
	s.answerFault(w, &Fault{Status: status, Message: msg})
}

// CreateRequest is the JSON body of an outbound call from application.
type CreateRequest struct {
	Destination string `json:"destination"`
	CallerID    string `json:"caller-id"`
	// CallerIDAlt is the older spelling (callerId) Cloudonix also takes.
	CallerIDAlt string `json:"callerId"`
	// Application is an application's name or numeric id.
	Application json.RawMessage `json:"application"`
	URL         string          `json:"url"`
	CXML        string          `json:"cxml"`
	Callback    string          `json:"callback"`
	TimeLimit   *float64        `json:"timeLimit"`
	Timeout     *float64        `json:"timeout"`
	SendDigits  string          `json:"send-digits"`
	Profile     map[string]any  `json:"profile"`
	Routes      json.RawMessage `json:"routes"`
}

// Caller is the request's caller id, whichever spelling carried it.
func (c CreateRequest) Caller() string {
	if c.CallerID != "" {
		return c.CallerID
	}
	return c.CallerIDAlt
}

// ApplicationName is the application named by the request ("" for none).
func (c CreateRequest) ApplicationName() string {
	var s string
	if json.Unmarshal(c.Application, &s) == nil {
		return s
	}
	return strings.TrimSpace(string(c.Application))
}

var (
	numberRE = regexp.MustCompile(`^\+?[0-9]{6,15}$`)
	callerRE = regexp.MustCompile(`^[^\s]{1,128}$`)
)

// create is POST /calls/{domain}/application.
func (s *Server) create(w http.ResponseWriter, r *http.Request, domain string) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	f := s.admit(r, domain, Request{Op: OpCreate, Body: body})
	if f != nil && !f.Create {
		s.answerFault(w, f)
		return
	}
	var req CreateRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		s.reject(w, http.StatusUnsupportedMediaType, "Content-Type must be application/json")
		return
	}
	if err := dec.Decode(&req); err != nil {
		s.reject(w, http.StatusBadRequest, "Invalid request body: "+err.Error())
		return
	}
	if msg := s.validateCreate(req); msg != "" {
		s.reject(w, http.StatusBadRequest, msg)
		return
	}
	c := s.newCall(req)
	if f != nil {
		s.answerFault(w, f)
	} else {
		writeJSON(w, http.StatusOK, map[string]any{"domainId": s.domainID, "subscriberId": 0,
			"destination": req.Destination, "direction": "outbound-api", "token": c.info.Token})
	}
	if fl, ok := w.(http.Flusher); ok {
		fl.Flush() // the answer goes out before the first webhook
	}
	c.start()
}

// validateCreate returns why a create request is invalid, or "".
func (s *Server) validateCreate(req CreateRequest) string {
	hasApp := len(req.Application) > 0 && string(req.Application) != "null"
	switch {
	case req.Destination == "":
		return "destination is required"
	case !numberRE.MatchString(req.Destination):
		return "destination is not a valid number: " + req.Destination
	case req.Caller() == "":
		return "caller-id is required"
	case !callerRE.MatchString(req.Caller()):
		return "caller-id is not valid: " + req.Caller()
	case !hasApp && req.URL == "" && req.CXML == "":
		return "one of application, url or cxml is required"
	case req.URL != "" && req.CXML != "":
		return "url and cxml are mutually exclusive"
	case req.URL != "" && !absoluteHTTP(req.URL):
		return "url is not a valid URL: " + req.URL
	case req.Callback != "" && !absoluteHTTP(req.Callback):
		return "callback is not a valid URL: " + req.Callback
	case req.TimeLimit != nil && *req.TimeLimit < 0:
		return "timeLimit must not be negative"
	case req.Timeout != nil && *req.Timeout < 0:
		return "timeout must not be negative"
	}
	if hasApp && req.URL == "" && req.CXML == "" {
		s.mu.Lock()
		_, ok := s.apps[req.ApplicationName()]
		s.mu.Unlock()
		if !ok {
			return "application not found: " + req.ApplicationName()
		}
	}
	return ""
}

// absoluteHTTP reports whether raw is an absolute http(s) URL.
func absoluteHTTP(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// session is GET or DELETE /calls/{domain}/sessions/{token}.
func (s *Server) session(w http.ResponseWriter, r *http.Request, domain, token, op string) {
	if f := s.admit(r, domain, Request{Op: op, Token: token}); f != nil {
		s.answerFault(w, f)
		return
	}
	c := s.lookup(token)
	if c == nil {
		s.reject(w, http.StatusNotFound, "Session not found")
		return
	}
	if op == OpGet {
		s.counters.Update(func(st *Stats) { st.Fetches++ })
		writeJSON(w, http.StatusOK, c.session())
		return
	}
	if !c.hangUp() {
		s.reject(w, http.StatusNotFound, "Session not found")
		return
	}
	s.counters.Update(func(st *Stats) { st.HangUps++ })
	writeJSON(w, http.StatusOK, c.session())
}

// Application is a voice application of the domain.
type Application struct {
	Name    string         `json:"name"`
	Type    string         `json:"type"`
	URL     string         `json:"url"`
	Method  string         `json:"method"`
	Active  bool           `json:"active"`
	Profile map[string]any `json:"profile,omitempty"`
}

// createApp is POST .../domains/{domain}/applications: name and url
// required, type cxml or twiml (default cxml), method GET or POST (default
// GET); a name already taken is 409.
func (s *Server) createApp(w http.ResponseWriter, r *http.Request, domain string) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if f := s.admit(r, domain, Request{Op: OpCreateApp, Body: body}); f != nil {
		s.answerFault(w, f)
		return
	}
	var app Application
	app.Active = true
	if err := json.Unmarshal(body, &app); err != nil {
		s.reject(w, http.StatusBadRequest, "Invalid request body: "+err.Error())
		return
	}
	if app.Type == "" {
		app.Type = "cxml"
	}
	if app.Method == "" {
		app.Method = http.MethodGet
	}
	switch {
	case app.Name == "":
		s.reject(w, http.StatusBadRequest, "name is required")
		return
	case app.Type != "cxml" && app.Type != "twiml":
		s.reject(w, http.StatusBadRequest, "type must be cxml or twiml")
		return
	case !absoluteHTTP(app.URL):
		s.reject(w, http.StatusBadRequest, "url is not a valid URL: "+app.URL)
		return
	case app.Method != http.MethodGet && app.Method != http.MethodPost:
		s.reject(w, http.StatusBadRequest, "method must be GET or POST")
		return
	}
	s.mu.Lock()
	_, taken := s.apps[app.Name]
	if !taken {
		s.apps[app.Name] = app
	}
	s.mu.Unlock()
	if !taken {
		s.counters.Update(func(st *Stats) { st.ApplicationsCreated++ })
	}
	if taken {
		s.reject(w, http.StatusConflict, "Application already exists: "+app.Name)
		return
	}
	out := map[string]any{"id": len(app.Name) + 1000, "name": app.Name, "type": app.Type, "url": app.URL,
		"method": app.Method, "active": app.Active, "domainId": s.domainID}
	writeJSON(w, http.StatusOK, out)
}

// Applications returns the domain's voice applications by name.
func (s *Server) Applications() map[string]Application {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]Application, len(s.apps))
	for k, v := range s.apps {
		out[k] = v
	}
	return out
}

// lookup returns the call of session token, nil when none.
func (s *Server) lookup(token string) *call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byToken[token]
}

// newCall registers a call placed with req and chooses its script.
func (s *Server) newCall(req CreateRequest) *call {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails
	c := &call{s: s, hangup: make(chan struct{})}
	s.mu.Lock()
	s.byTo[req.Destination]++
	c.info = CallInfo{N: len(s.calls) + 1, Token: hex.EncodeToString(b[:]), To: req.Destination, From: req.Caller(),
		Attempt: s.byTo[req.Destination], Request: req, Created: time.Now()}
	c.inFlight = true
	c.status = "new"
	s.calls = append(s.calls, c)
	s.byToken[c.info.Token] = c
	script := s.script
	s.mu.Unlock()
	s.counters.Update(func(st *Stats) {
		st.Created++
		st.InFlight++
	})
	sc := script(c.info)
	switch sc.Outcome {
	case "":
		sc.Outcome = Human
	case Human, Busy, NoAnswer, Failed, Canceled:
	default:
		sc.Outcome = Failed
	}
	c.script = sc
	return c
}

// writeError answers status with the simulator's JSON error body.
func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"code": status, "message": msg})
}

// writeJSON answers status with v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// errStatus formats a delivery's failure for the records.
func errStatus(status int, err error) string {
	if err != nil {
		return err.Error()
	}
	if status < 200 || status > 299 {
		return fmt.Sprintf("http %d", status)
	}
	return ""
}
