package telnyxsim

// What the simulator recorded, and the webhook signature scheme.

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"strconv"
	"time"
)

// Telnyx's webhook signature headers.
const (
	SignatureHeader = "telnyx-signature-ed25519"
	TimestampHeader = "telnyx-timestamp"
)

// Application is a Call Control application of the account.
type Application struct {
	ID                string `json:"id"`
	ApplicationName   string `json:"application_name"`
	WebhookEventURL   string `json:"webhook_event_url"`
	WebhookAPIVersion string `json:"webhook_api_version"`
	Active            bool   `json:"active"`
	// Body is the create request's JSON body ("" for DefaultConnectionID).
	Body []byte `json:"-"`
}

// Command is a call command received (hangup, speak, streaming_start).
type Command struct {
	Name string
	// Body is the command's JSON body.
	Body []byte
	At   time.Time
}

// Event is one signed webhook: what was (or would be) posted.
type Event struct {
	// Type is data.event_type.
	Type string
	URL  string
	// Body is the exact JSON posted; Timestamp and Signature the
	// telnyx-timestamp and telnyx-signature-ed25519 headers.
	Body      []byte
	Timestamp string
	Signature string
	// Status is the HTTP status answered, 0 on a transport error (Err) or
	// for an event not sent.
	Status int
	Err    string
}

// CallRecord is a snapshot of one call.
type CallRecord struct {
	CallInfo
	// Script is the script the call plays (Outcome never "").
	Script Script
	// State is parked (ringing), answered or hangup; HangupCause the cause
	// it ended with.
	State       string
	HangupCause string
	Answered    bool
	// StreamURL is the media stream asked for (dial or streaming_start).
	StreamURL string
	// Final is true once the call is over (see Stats.Final).
	Final bool
	// Commands are the commands the call got, in order.
	Commands []Command
	// Events are the events sent, in order, with Config.RecordEvents.
	Events []Event
}

// record is a snapshot of the call.
func (c *call) record() CallRecord {
	c.mu.Lock()
	defer c.mu.Unlock()
	return CallRecord{CallInfo: c.info, Script: c.script, State: c.state, HangupCause: c.hangupCause,
		Answered: !c.answeredAt.IsZero(), StreamURL: c.streamURL, Final: c.final,
		Commands: append([]Command(nil), c.commands...), Events: append([]Event(nil), c.events...)}
}

// Calls returns a snapshot of every call dialled, in dial order.
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

// Call returns a snapshot of the call callControlID.
func (s *Server) Call(callControlID string) (CallRecord, bool) {
	c := s.lookup(callControlID)
	if c == nil {
		return CallRecord{}, false
	}
	return c.record(), true
}

// Applications returns the account's Call Control applications in creation
// order, DefaultConnectionID first.
func (s *Server) Applications() []Application {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Application(nil), s.apps...)
}

// Sign is telnyx-signature-ed25519 for body sent at timestamp (Unix seconds,
// as in telnyx-timestamp): base64 of the Ed25519 signature of timestamp +
// "|" + body with key. Tests use it to forge webhooks with another key.
func Sign(key ed25519.PrivateKey, timestamp string, body []byte) string {
	msg := make([]byte, 0, len(timestamp)+1+len(body))
	msg = append(append(append(msg, timestamp...), '|'), body...)
	return base64.StdEncoding.EncodeToString(ed25519.Sign(key, msg))
}

// signed is the event eventType with body for url, signed now with the
// simulator's key.
func (s *Server) signed(url, eventType string, body []byte) Event {
	ts := strconv.FormatInt(s.now().Unix(), 10)
	return Event{Type: eventType, URL: url, Body: body, Timestamp: ts, Signature: Sign(s.priv, ts, body)}
}

// SignedEvent returns body as an event to url signed now by the simulator
// (not sent; see Deliver): a test's hand-made event that verifies.
func (s *Server) SignedEvent(url string, body []byte) Event {
	return s.signed(url, "", body)
}

// Forged returns ev signed by a key other than the simulator's (same body,
// URL and timestamp): it must not verify.
func Forged(ev Event) Event {
	_, other, _ := ed25519.GenerateKey(nil)
	ev.Signature = Sign(other, ev.Timestamp, ev.Body)
	ev.Status, ev.Err = 0, ""
	return ev
}

// Deliver posts ev exactly as given (URL, body, timestamp and signature
// headers), e.g. a recorded event again (a replay) or a Forged one, and
// returns the HTTP status answered.
func (s *Server) Deliver(ctx context.Context, ev Event) (int, error) {
	return s.post(ctx, ev)
}
