package vonagesim

// What the simulator recorded about its calls, and helpers that post a
// replayed or forged webhook.

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"
)

// CallRecord is a snapshot of one call.
type CallRecord struct {
	CallInfo
	// Script is the script the call plays (Outcome never "").
	Script Script
	// Status is the call's status (started, ringing, answered, then the
	// final one: completed, busy, timeout, unanswered, rejected, failed,
	// cancelled).
	Status string
	// Verdict is the machine-detection event's status sent ("human",
	// "machine"), "" when detection was not asked for.
	Verdict string
	// Duration is the reported talk time in seconds, once ended.
	Duration int
	// Final is true once the call is over (see Stats.Final).
	Final bool
	// NCCO is the body the answer webhook got, NCCOContentType its
	// Content-Type, AnswerStatus its HTTP status (0: not asked yet, or a
	// transport error).
	NCCO            string
	NCCOContentType string
	AnswerStatus    int
	// Callbacks are the events sent, in order, when
	// Config.RecordCallbacks is set.
	Callbacks []Callback
}

// Callback is one webhook request sent (or to send).
type Callback struct {
	// URL and Method are where and how it went; Body is the JSON body
	// (nil for a GET, whose fields are in the URL's query).
	URL    string
	Method string
	Body   []byte
	// Authorization is the header sent ("Bearer <JWT>", "" unsigned).
	Authorization string
	// Status is the HTTP status answered, 0 on a transport error (Err).
	Status int
	Err    string
}

// Fields decodes the callback's JSON body.
func (cb Callback) Fields() map[string]any {
	var m map[string]any
	_ = json.Unmarshal(cb.Body, &m)
	return m
}

func (c *call) record() CallRecord {
	c.mu.Lock()
	defer c.mu.Unlock()
	return CallRecord{
		CallInfo: c.info, Script: c.script, Status: c.status, Verdict: c.answeredBy, Duration: c.duration,
		Final: c.final, NCCO: c.ncco, NCCOContentType: c.nccoType, AnswerStatus: c.answerStatus,
		Callbacks: append([]Callback(nil), c.callbacks...),
	}
}

// Calls returns a snapshot of every call created, in creation order.
func (s *Server) Calls() []CallRecord {
	s.mu.Lock()
	calls := append([]*call(nil), s.calls...)
	s.mu.Unlock()
	out := make([]CallRecord, len(calls))
	for i, c := range calls {
		out[i] = c.record()
	}
	return out
}

// Call returns a snapshot of the call uuid.
func (s *Server) Call(uuid string) (CallRecord, bool) {
	c := s.lookup(uuid)
	if c == nil {
		return CallRecord{}, false
	}
	return c.record(), true
}

// ErrNoEvent is Replay's error for a call that sent no event yet.
var ErrNoEvent = errors.New("vonagesim: the call sent no event yet")

// Replay sends the last event the call uuid delivered again, byte for byte:
// same URL, body and Authorization (so the same jti), as an attacker who
// captured it would. It returns the HTTP status answered.
func (s *Server) Replay(ctx context.Context, uuid string) (int, error) {
	c := s.lookup(uuid)
	if c == nil {
		return 0, errors.New("vonagesim: no call " + uuid)
	}
	c.mu.Lock()
	last := c.lastEvent
	c.mu.Unlock()
	if last == nil {
		return 0, ErrNoEvent
	}
	return s.Send(ctx, Callback{URL: last.URL, Method: last.Method, Body: last.Body, Authorization: last.Authorization})
}

// Send posts one webhook as the simulator posts them (Content-Type JSON
// unless a GET) with cb's URL, method (default POST), body and
// Authorization, as given: tests build forged ones with Token. It returns
// the HTTP status answered.
func (s *Server) Send(ctx context.Context, cb Callback) (int, error) {
	if cb.Method == "" {
		cb.Method = http.MethodPost
	}
	status, _, _, err := s.send(ctx, cb, false)
	return status, err
}

// EventBody is the JSON body of an event of call uuid with status (and the
// final fields, duration, when final), timestamped now, as the simulator
// would send it.
func (s *Server) EventBody(uuid, status string, final bool) ([]byte, error) {
	c := s.lookup(uuid)
	if c == nil {
		return nil, errors.New("vonagesim: no call " + uuid)
	}
	c.mu.Lock()
	f := c.fields()
	var extra map[string]any
	if final {
		extra = c.summary()
	}
	c.mu.Unlock()
	f["direction"] = "outbound"
	f["status"] = status
	f["timestamp"] = time.Now().UTC().Format(vonageTime)
	for k, v := range extra {
		f[k] = v
	}
	return json.Marshal(f)
}
