package plivosim

// The REST side: routing, authentication, fault injection, validation, and
// the JSON resources (call request, live call, queued call, CDR,
// application).

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// maxBody bounds a request body.
const maxBody = 1 << 20

// ServeHTTP serves the API of the package comment; anything else is 404.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, s.prefix+"/Account/")
	if !ok {
		writeError(w, http.StatusNotFound, "resource not found")
		return
	}
	parts := strings.Split(strings.Trim(rest, "/"), "/")
	account := parts[0]
	switch {
	case len(parts) == 1 && r.Method == http.MethodGet:
		s.account(w, r, account)
	case len(parts) == 2 && parts[1] == "Call" && r.Method == http.MethodPost:
		s.create(w, r, account)
	case len(parts) == 3 && parts[1] == "Call" && r.Method == http.MethodGet:
		s.query(w, r, account, parts[2])
	case len(parts) == 3 && parts[1] == "Call" && r.Method == http.MethodDelete:
		s.hangUp(w, r, account, parts[2], OpHangUp)
	case len(parts) == 3 && parts[1] == "Request" && r.Method == http.MethodDelete:
		s.hangUp(w, r, account, parts[2], OpCancel)
	case len(parts) == 2 && parts[1] == "Application" && r.Method == http.MethodPost:
		s.createApp(w, r, account)
	case len(parts) >= 2 && (parts[1] == "Call" || parts[1] == "Request" || parts[1] == "Application"):
		writeError(w, http.StatusMethodNotAllowed, "method not allowed")
	default:
		writeError(w, http.StatusNotFound, "resource not found")
	}
}

// account is GET {prefix}/Account/{auth_id}/: the account's details
// (Plivo's "Retrieve account details"; Vobiz keeps Plivo's shape),
// read-only; refused credentials are a 401.
func (s *Server) account(w http.ResponseWriter, r *http.Request, account string) {
	if f := s.admit(r, account, Request{Op: OpAccount}); f != nil {
		s.answerFault(w, f)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"account_type": "standard", "auth_id": s.authID, "billing_mode": "prepaid", "cash_credits": "100.00000",
		"name": "plivosim account", "resource_uri": s.prefix + "/Account/" + s.authID + "/", "timezone": "UTC",
		"api_id": "00000000-0000-0000-0000-000000000000",
	})
}

// admit counts the request and applies, in order, the 401 mode, the
// dialect's authentication check, the 429 budget (call creates only) and
// the fault function. It returns the fault to answer, or nil to serve.
func (s *Server) admit(r *http.Request, account string, req Request) *Fault {
	var id, token string
	ok := true
	if s.dialect == Vobiz {
		id, token = r.Header.Get("X-Auth-ID"), r.Header.Get("X-Auth-Token")
	} else {
		id, token, ok = r.BasicAuth()
	}
	s.update(func(st *Stats) {
		st.Requests++
		if req.Op == OpCreate {
			st.CreateRequests++
		}
	})
	return s.gate.Check(req, ok && id == s.authID && token == s.authToken && account == s.authID, req.Op == OpCreate,
		func() *Fault {
			return &Fault{Status: http.StatusUnauthorized, Message: "authentication credentials invalid"}
		}, TooManyRequests)
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
	writeError(w, f.Status, f.Message)
}

// reject answers a validation error or an unknown resource.
func (s *Server) reject(w http.ResponseWriter, status int, msg string) {
	s.answerFault(w, &Fault{Status: status, Message: msg})
}

// readParams reads a JSON object (strings, numbers and booleans as their
// text) or a form body into a flat map.
func readParams(r *http.Request) (map[string]string, error) {
	data, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		form, err := url.ParseQuery(string(data))
		if err != nil {
			return nil, err
		}
		for k := range form {
			out[k] = form.Get(k)
		}
		return out, nil
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, err
	}
	for k, v := range raw {
		var str string
		if json.Unmarshal(v, &str) == nil {
			out[k] = str
			continue
		}
		out[k] = string(v) // numbers, booleans
	}
	return out, nil
}

// create is POST .../Call/.
func (s *Server) create(w http.ResponseWriter, r *http.Request, account string) {
	body, err := readParams(r)
	if err != nil {
		s.admit(r, account, Request{Op: OpCreate})
		s.reject(w, http.StatusBadRequest, "request body is not valid JSON")
		return
	}
	f := s.admit(r, account, Request{Op: OpCreate, Body: body})
	if f != nil && !f.Create {
		s.answerFault(w, f)
		return
	}
	if msg := validateCreate(body); msg != "" {
		s.reject(w, http.StatusBadRequest, msg)
		return
	}
	c := s.newCall(body)
	if f != nil {
		s.answerFault(w, f)
	} else {
		msg := "call fired"
		if s.dialect == Vobiz {
			msg = "Call fired"
		}
		writeJSON(w, http.StatusCreated, map[string]string{"api_id": newUUID(), "message": msg, "request_uuid": c.info.RequestUUID})
	}
	if fl, ok := w.(http.Flusher); ok {
		fl.Flush() // the answer goes out before the first webhook
	}
	c.start()
}

// validateCreate returns the error message for an invalid create, or "".
func validateCreate(b map[string]string) string {
	for _, k := range []string{"from", "to", "answer_url"} {
		if b[k] == "" {
			return k + " is required"
		}
	}
	for _, k := range []string{"from", "to"} {
		if strings.HasPrefix(b[k], "+") {
			return k + " must be a number without '+' (got " + b[k] + ")"
		}
		if !digits(b[k]) && !strings.HasPrefix(b[k], "sip:") {
			return k + " is not a valid number or SIP URI: " + b[k]
		}
	}
	for _, k := range []string{"answer_url", "ring_url", "hangup_url", "fallback_url", "machine_detection_url"} {
		if v := b[k]; v != "" && !absoluteHTTP(v) {
			return k + " is not a valid URL: " + v
		}
	}
	for _, k := range []string{"answer_method", "ring_method", "hangup_method", "fallback_method", "machine_detection_method"} {
		if v := strings.ToUpper(b[k]); v != "" && v != http.MethodGet && v != http.MethodPost {
			return k + " must be GET or POST"
		}
	}
	switch b["machine_detection"] {
	case "", "true", "false", "hangup":
	default:
		return "machine_detection must be true or hangup"
	}
	if b["machine_detection"] == "true" || b["machine_detection"] == "hangup" {
		if b["machine_detection_url"] == "" {
			return "machine_detection_url is required with machine_detection"
		}
	}
	for _, k := range []string{"ring_timeout", "time_limit"} {
		if v := b[k]; v != "" {
			if n, err := strconv.Atoi(v); err != nil || n <= 0 {
				return k + " must be a positive integer"
			}
		}
	}
	return ""
}

// digits reports whether s is non-empty ASCII digits.
func digits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// absoluteHTTP reports whether raw is an absolute http(s) URL.
func absoluteHTTP(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// query is GET .../Call/{id}/: ?status=live (by call_uuid),
// ?status=queued (by request_uuid), or the CDR of an ended call.
func (s *Server) query(w http.ResponseWriter, r *http.Request, account, id string) {
	op := OpCDR
	switch r.URL.Query().Get("status") {
	case "live":
		op = OpLive
	case "queued":
		op = OpQueued
	}
	if f := s.admit(r, account, Request{Op: op, ID: id}); f != nil {
		s.answerFault(w, f)
		return
	}
	var res map[string]any
	switch op {
	case OpLive:
		if c := s.lookupCall(id); c != nil {
			res = c.liveJSON()
		}
	case OpQueued:
		if c := s.lookupRequest(id); c != nil {
			res = c.queuedJSON()
		}
	default:
		if c := s.lookupCall(id); c != nil {
			res = c.cdrJSON(s)
		}
	}
	if res == nil {
		s.reject(w, http.StatusNotFound, "call not found")
		return
	}
	s.update(func(st *Stats) { st.Queries++ })
	writeJSON(w, http.StatusOK, res)
}

// hangUp is DELETE .../Call/{call_uuid}/ (op OpHangUp: a live call) or
// DELETE .../Request/{request_uuid}/ (OpCancel: a call not answered yet).
func (s *Server) hangUp(w http.ResponseWriter, r *http.Request, account, id, op string) {
	if f := s.admit(r, account, Request{Op: op, ID: id}); f != nil {
		s.answerFault(w, f)
		return
	}
	var c *call
	if op == OpHangUp {
		c = s.lookupCall(id)
	} else {
		c = s.lookupRequest(id)
	}
	if c == nil || !c.hangUp(op) {
		s.reject(w, http.StatusNotFound, "call not found")
		return
	}
	s.update(func(st *Stats) {
		if op == OpHangUp {
			st.HangUps++
		} else {
			st.Cancels++
		}
	})
	w.WriteHeader(http.StatusNoContent)
}

// createApp is POST .../Application/.
func (s *Server) createApp(w http.ResponseWriter, r *http.Request, account string) {
	body, err := readParams(r)
	if err != nil {
		s.admit(r, account, Request{Op: OpCreateApp})
		s.reject(w, http.StatusBadRequest, "request body is not valid JSON")
		return
	}
	if f := s.admit(r, account, Request{Op: OpCreateApp, Body: body}); f != nil {
		s.answerFault(w, f)
		return
	}
	switch {
	case body["app_name"] == "" || body["answer_url"] == "":
		s.reject(w, http.StatusBadRequest, "app_name and answer_url are required")
		return
	case !appName(body["app_name"]):
		s.reject(w, http.StatusBadRequest, "app_name may only hold letters, digits, '-' and '_'")
		return
	case !absoluteHTTP(body["answer_url"]) || (body["hangup_url"] != "" && !absoluteHTTP(body["hangup_url"])):
		s.reject(w, http.StatusBadRequest, "answer_url and hangup_url must be absolute http(s) URLs")
		return
	}
	n, _ := rand.Int(rand.Reader, new(big.Int).Exp(big.NewInt(10), big.NewInt(17), nil))
	id := fmt.Sprintf("%017d", n)
	s.mu.Lock()
	s.apps = append(s.apps, AppRecord{AppID: id, Body: body})
	s.update(func(st *Stats) { st.AppsCreated++ }) // under mu, as in newCall
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]string{"api_id": newUUID(), "app_id": id, "message": "created"})
}

// appName reports whether s holds only letters, digits, "-" and "_".
func appName(s string) bool {
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// lookupCall returns the call whose CallUUID is id, or nil.
func (s *Server) lookupCall(id string) *call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byCall[id]
}

// lookupRequest returns the call whose request_uuid is id, or nil.
func (s *Server) lookupRequest(id string) *call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byRequest[id]
}

// newCall registers a call created from body and chooses its script.
func (s *Server) newCall(body map[string]string) *call {
	c := newCallOf(s)
	req := newUUID()
	callID := req
	if s.dialect == Plivo {
		callID = newUUID()
	}
	s.mu.Lock()
	to := body["to"]
	s.byTo[to]++
	c.info = CallInfo{N: len(s.calls) + 1, RequestUUID: req, CallUUID: callID, To: to, From: body["from"],
		Attempt: s.byTo[to], Body: body, Created: time.Now()}
	c.inFlight = true
	s.calls = append(s.calls, c)
	s.byRequest[req] = c
	s.byCall[callID] = c
	script := s.script
	s.update(func(st *Stats) { // under mu: a call counted is a call listed
		st.Created++
		st.InFlight++
	})
	s.mu.Unlock()
	c.configure(script(c.info))
	return c
}

// newUUID returns a random version-4 UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// writeError writes the providers' error body {"api_id", "error"}.
func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"api_id": newUUID(), "error": msg})
}

// writeJSON writes v as JSON with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
