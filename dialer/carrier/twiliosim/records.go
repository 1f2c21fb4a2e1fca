package twiliosim

// What the simulator recorded about its calls, and the signature scheme.

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"net/url"
	"sort"
	"strings"
	"time"
)

// CallRecord is a snapshot of one call.
type CallRecord struct {
	CallInfo
	// Script is the script the call plays (Outcome never "").
	Script Script
	// Status is the call resource's status (queued, ringing, in-progress,
	// completed, busy, no-answer, failed, canceled).
	Status     string
	AnsweredBy string
	// Duration is the reported talk time in seconds, once ended.
	Duration int
	// Final is true once the call is over (see Stats.Final).
	Final bool
	// Ended is when the call reached its final status (zero before). A
	// call is up at the provider from CallInfo.Created until Ended, so a
	// test can tell which calls were up together. Unlike Stats.InFlight,
	// which counts a call until its final status callback starts, Ended
	// does not wait for callbacks held up on the way: a service that
	// fetches the call's status may learn of the end before any callback.
	Ended time.Time
	// TwiML is the body the answer webhook got (or the create request's
	// Twiml parameter), TwiMLContentType its Content-Type, AnswerStatus its
	// HTTP status (0: not asked yet, or a transport error).
	TwiML            string
	TwiMLContentType string
	AnswerStatus     int
	// Callbacks are the status callbacks sent, in order, when
	// Config.RecordCallbacks is set.
	Callbacks []Callback
}

// Callback is one status callback sent.
type Callback struct {
	// Params is the form posted (signed with X-Twilio-Signature).
	Params url.Values
	// Status is the HTTP status answered, 0 on a transport error (Err).
	Status int
	Err    string
}

func (c *call) record() CallRecord {
	c.mu.Lock()
	defer c.mu.Unlock()
	return CallRecord{
		CallInfo: c.info, Script: c.script, Status: c.status, AnsweredBy: c.answeredBy,
		Duration: c.duration, Final: c.final, Ended: c.endedAt,
		TwiML: c.twiml, TwiMLContentType: c.twimlType, AnswerStatus: c.answerStatus,
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

// Call returns a snapshot of the call sid.
func (s *Server) Call(sid string) (CallRecord, bool) {
	c := s.lookup(sid)
	if c == nil {
		return CallRecord{}, false
	}
	return c.record(), true
}

// Signature is X-Twilio-Signature for a request to rawURL (exactly as
// requested, query included) with form parameters params (nil for a GET):
// base64 of HMAC-SHA1 keyed with authToken over rawURL followed by every
// parameter's name and value, names sorted, a repeated name's values in
// order. Tests use it to forge callbacks with a wrong token.
func Signature(authToken, rawURL string, params url.Values) string {
	var b strings.Builder
	b.WriteString(rawURL)
	names := make([]string, 0, len(params))
	for k := range params {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		for _, v := range params[k] {
			b.WriteString(k)
			b.WriteString(v)
		}
	}
	mac := hmac.New(sha1.New, []byte(authToken))
	mac.Write([]byte(b.String()))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}
