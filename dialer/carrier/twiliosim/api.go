package twiliosim

// The REST side: routing, authentication, fault injection, validation and
// the JSON Call resource.

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

const apiPrefix = "/2010-04-01/Accounts/"

// twilioTime is the date format of Twilio's 2010 API (RFC 2822, UTC).
const twilioTime = "Mon, 02 Jan 2006 15:04:05 -0000"

// ServeHTTP serves the Calls API (see the package comment). Anything else is
// 404 with error 20404.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, apiPrefix)
	if !ok {
		writeError(w, http.StatusNotFound, 20404, "The requested resource "+r.URL.Path+" was not found")
		return
	}
	account, resource, _ := strings.Cut(rest, "/")
	switch {
	case resource == "" && strings.HasSuffix(account, ".json") && r.Method == http.MethodGet:
		s.account(w, r, strings.TrimSuffix(account, ".json"))
	case resource == "Calls.json" && r.Method == http.MethodPost:
		s.create(w, r, account)
	case strings.HasPrefix(resource, "Calls/") && strings.HasSuffix(resource, ".json") && !strings.Contains(resource[len("Calls/"):], "/"):
		sid := strings.TrimSuffix(strings.TrimPrefix(resource, "Calls/"), ".json")
		switch r.Method {
		case http.MethodGet:
			s.fetch(w, r, account, sid)
		case http.MethodPost:
			s.updateCall(w, r, account, sid)
		default:
			writeError(w, http.StatusMethodNotAllowed, 20004, "Method not allowed")
		}
	case resource == "Calls.json":
		writeError(w, http.StatusMethodNotAllowed, 20004, "Method not allowed")
	default:
		writeError(w, http.StatusNotFound, 20404, "The requested resource "+r.URL.Path+" was not found")
	}
}

// admit counts the request and applies, in order, the 401 mode, the Basic
// auth check, the 429 budget (creates only) and the fault function. It
// returns the fault to answer, or nil to serve the request.
func (s *Server) admit(r *http.Request, account string, req Request) *Fault {
	user, pass, ok := r.BasicAuth()
	create := req.Op == OpCreate
	s.counters.Update(func(st *Stats) {
		st.Requests++
		if create {
			st.CreateRequests++
		}
	})
	authorized := ok && user == s.accountSID && pass == s.authToken && account == s.accountSID
	return s.gate.Check(req, authorized, create, unauthorized, TooManyRequests)
}

// unauthorized is the 401 Twilio answers for wrong credentials.
func unauthorized() *Fault {
	return &Fault{Status: http.StatusUnauthorized, Code: 20003, Message: "Authenticate"}
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
	if f.Status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Basic realm="Twilio API"`)
	}
	writeError(w, f.Status, f.Code, f.Message)
}

// reject answers a validation error.
func (s *Server) reject(w http.ResponseWriter, status, code int, msg string) {
	s.answerFault(w, &Fault{Status: status, Code: code, Message: msg})
}

var statusEvents = map[string]bool{"initiated": true, "ringing": true, "answered": true, "completed": true}

// create is POST .../Calls.json.
func (s *Server) create(w http.ResponseWriter, r *http.Request, account string) {
	if err := r.ParseForm(); err != nil {
		s.admit(r, account, Request{Op: OpCreate})
		s.reject(w, http.StatusBadRequest, 20001, "Unable to parse the request body")
		return
	}
	form := r.PostForm
	f := s.admit(r, account, Request{Op: OpCreate, Form: form})
	if f != nil && !f.Create {
		s.answerFault(w, f)
		return
	}
	if code, msg := validateCreate(form); code != 0 {
		s.reject(w, http.StatusBadRequest, code, msg)
		return
	}
	c := s.newCall(form)
	if f != nil {
		s.answerFault(w, f)
	} else {
		writeJSON(w, http.StatusCreated, c.resource())
	}
	if fl, ok := w.(http.Flusher); ok {
		fl.Flush() // the answer goes out before the first webhook
	}
	c.start()
}

// validateCreate returns Twilio's error code and message for an invalid
// create form, or 0.
func validateCreate(form url.Values) (int, string) {
	switch {
	case form.Get("To") == "":
		return 21201, "No 'To' number is specified"
	case form.Get("From") == "":
		return 21213, "No 'From' number is specified"
	case form.Get("Url") == "" && form.Get("Twiml") == "" && form.Get("ApplicationSid") == "":
		return 21205, "A 'Url', 'Twiml' or 'ApplicationSid' parameter is required"
	case form.Get("Url") != "" && !absoluteHTTP(form.Get("Url")):
		return 21205, "Url is not a valid URL: " + form.Get("Url")
	case form.Get("StatusCallback") != "" && !absoluteHTTP(form.Get("StatusCallback")):
		return 21205, "StatusCallback is not a valid URL: " + form.Get("StatusCallback")
	}
	for _, e := range form["StatusCallbackEvent"] {
		// Twilio also accepts several events space-separated in one value.
		for _, e := range strings.Fields(e) {
			if !statusEvents[e] {
				return 21626, "Invalid 'StatusCallbackEvent': " + e
			}
		}
	}
	for _, m := range []string{"Method", "StatusCallbackMethod"} {
		if v := strings.ToUpper(form.Get(m)); v != "" && v != http.MethodGet && v != http.MethodPost {
			return 21200, m + " must be GET or POST"
		}
	}
	return 0, ""
}

func absoluteHTTP(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// fetch is GET .../Calls/{sid}.json.
func (s *Server) fetch(w http.ResponseWriter, r *http.Request, account, sid string) {
	if f := s.admit(r, account, Request{Op: OpFetch, CallSID: sid}); f != nil {
		s.answerFault(w, f)
		return
	}
	c := s.lookup(sid)
	if c == nil {
		s.reject(w, http.StatusNotFound, 20404, "The requested resource /2010-04-01/Accounts/"+s.accountSID+"/Calls/"+sid+".json was not found")
		return
	}
	s.counters.Update(func(st *Stats) { st.Fetches++ })
	writeJSON(w, http.StatusOK, c.resource())
}

// account is GET /2010-04-01/Accounts/{AccountSid}.json: the Account
// resource (sid, friendly_name, status active, type Full), read-only; a
// refused Basic auth is Twilio's 401 with error 20003.
func (s *Server) account(w http.ResponseWriter, r *http.Request, account string) {
	if f := s.admit(r, account, Request{Op: OpAccount}); f != nil {
		s.answerFault(w, f)
		return
	}
	created := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC).Format(twilioTime)
	writeJSON(w, http.StatusOK, map[string]any{
		"sid": s.accountSID, "owner_account_sid": s.accountSID, "friendly_name": "twiliosim account",
		"status": "active", "type": "Full", "date_created": created, "date_updated": created,
		"uri": apiPrefix + s.accountSID + ".json",
	})
}

// updateCall is POST .../Calls/{sid}.json with Status=completed (hang up,
// or cancel a call not answered yet) or Status=canceled (cancel a call not
// answered yet; no effect on an answered one). An ended call is answered
// unchanged.
func (s *Server) updateCall(w http.ResponseWriter, r *http.Request, account, sid string) {
	if err := r.ParseForm(); err != nil {
		s.admit(r, account, Request{Op: OpUpdate, CallSID: sid})
		s.reject(w, http.StatusBadRequest, 20001, "Unable to parse the request body")
		return
	}
	if f := s.admit(r, account, Request{Op: OpUpdate, CallSID: sid, Form: r.PostForm}); f != nil {
		s.answerFault(w, f)
		return
	}
	c := s.lookup(sid)
	if c == nil {
		s.reject(w, http.StatusNotFound, 20404, "The requested resource /2010-04-01/Accounts/"+s.accountSID+"/Calls/"+sid+".json was not found")
		return
	}
	status := r.PostForm.Get("Status")
	if status != "completed" && status != "canceled" {
		s.reject(w, http.StatusBadRequest, 21200, "Status must be 'completed' or 'canceled'")
		return
	}
	c.hangUp(status)
	s.counters.Update(func(st *Stats) { st.HangUps++ })
	writeJSON(w, http.StatusOK, c.resource())
}

func (s *Server) lookup(sid string) *call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bySID[sid]
}

// newCall registers a call created from form and chooses its script.
func (s *Server) newCall(form url.Values) *call {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails
	c := makeCall(s)
	now := time.Now()
	s.mu.Lock()
	to := form.Get("To")
	s.byTo[to]++
	c.info = CallInfo{N: len(s.calls) + 1, SID: "CA" + hex.EncodeToString(b[:]), To: to, From: form.Get("From"),
		Attempt: s.byTo[to], Form: form, Created: now}
	c.inFlight = true
	s.calls = append(s.calls, c)
	s.bySID[c.info.SID] = c
	script := s.script
	s.mu.Unlock()
	// The call is registered before it is counted: whoever waits for
	// Created finds it in Calls.
	s.counters.Update(func(st *Stats) {
		st.Created++
		st.InFlight++
	})
	c.configure(script(c.info))
	return c
}

// resourceJSON is the Call resource of the 2010 API, the fields a client
// reads.
type resourceJSON struct {
	Sid             string            `json:"sid"`
	AccountSid      string            `json:"account_sid"`
	To              string            `json:"to"`
	ToFormatted     string            `json:"to_formatted"`
	From            string            `json:"from"`
	FromFormatted   string            `json:"from_formatted"`
	Status          string            `json:"status"`
	Direction       string            `json:"direction"`
	AnsweredBy      *string           `json:"answered_by"`
	Duration        *string           `json:"duration"`
	StartTime       *string           `json:"start_time"`
	EndTime         *string           `json:"end_time"`
	DateCreated     string            `json:"date_created"`
	DateUpdated     string            `json:"date_updated"`
	APIVersion      string            `json:"api_version"`
	QueueTime       string            `json:"queue_time"`
	ParentCallSid   *string           `json:"parent_call_sid"`
	Price           *string           `json:"price"`
	PriceUnit       string            `json:"price_unit"`
	URI             string            `json:"uri"`
	SubresourceURIs map[string]string `json:"subresource_uris"`
}

// errorJSON is Twilio's error body.
type errorJSON struct {
	Code     int    `json:"code"`
	Message  string `json:"message"`
	MoreInfo string `json:"more_info"`
	Status   int    `json:"status"`
}

func writeError(w http.ResponseWriter, status, code int, msg string) {
	writeJSON(w, status, errorJSON{Code: code, Message: msg,
		MoreInfo: "https://www.twilio.com/docs/errors/" + strconv.Itoa(code), Status: status})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func strPtr(s string) *string { return &s }
