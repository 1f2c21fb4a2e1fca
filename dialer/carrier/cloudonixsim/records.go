package cloudonixsim

// What the simulator recorded about its calls, and helpers to send a
// webhook again (a replay) or to another URL (a forgery).

import (
	"context"
	"errors"
)

// CallRecord is a snapshot of one call.
type CallRecord struct {
	CallInfo
	// Script is the script the call plays (Outcome never "").
	Script Script
	// Status is the session's status (new, ringing, connected, completed,
	// busy, noanswer, failed, cancel, or the script's FinalStatus).
	Status string
	// Answered and Final: the call was answered; the call is over (see
	// Stats.Final).
	Answered bool
	Final    bool
	// HungUp is true when the call was ended through the API.
	HungUp bool
	// CXML is the body the voice-application request got, CXMLContentType
	// its Content-Type, AnswerStatus its HTTP status (0: not asked, or a
	// transport error).
	CXML            string
	CXMLContentType string
	AnswerStatus    int
	// Callbacks are the session updates sent, in order.
	Callbacks []Callback
}

// Callback is one session update sent.
type Callback struct {
	// URL is where it was posted (the call's callback), Body the JSON
	// Session posted.
	URL  string
	Body []byte
	// Status is the HTTP status answered, 0 on a transport error (Err).
	Status int
	Err    string
}

// record snapshots the call.
func (c *call) record() CallRecord {
	c.mu.Lock()
	defer c.mu.Unlock()
	return CallRecord{CallInfo: c.info, Script: c.script, Status: c.status, Answered: !c.answeredAt.IsZero(),
		Final: c.final, HungUp: c.hungUp, CXML: c.cxml, CXMLContentType: c.cxmlType, AnswerStatus: c.answerStatus,
		Callbacks: append([]Callback(nil), c.callbacks...)}
}

// Calls returns a snapshot of every call placed, in creation order.
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

// Call returns a snapshot of the call whose session token is token.
func (s *Server) Call(token string) (CallRecord, bool) {
	c := s.lookup(token)
	if c == nil {
		return CallRecord{}, false
	}
	return c.record(), true
}

// Post sends body as a JSON session update to target, exactly as the
// simulator delivers callbacks (no signature: Cloudonix has none), and
// returns the HTTP status. Tests use it to forge an update (another URL or
// token) or, with a recorded Callback, to replay one.
func (s *Server) Post(ctx context.Context, target string, body []byte) (int, error) {
	if s.closed.Load() {
		return 0, errors.New("cloudonixsim: closed")
	}
	return s.post(ctx, target, body)
}

// Replay sends a recorded session update again, unchanged.
func (s *Server) Replay(ctx context.Context, cb Callback) (int, error) {
	return s.Post(ctx, cb.URL, cb.Body)
}
