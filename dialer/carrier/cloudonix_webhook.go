package carrier

// Cloudonix webhooks: the status table, the CXML answer of API.md 6, and the
// parsing of session updates (the call's `callback`) and voice-application
// requests (the call's `url`). Cloudonix does not sign either (providers.md
// §7c): the per-attempt URL token, checked by the dialer before the carrier
// is asked, is the authenticity check. The carrier still parses strictly: a
// request that names no session, or names another domain than the
// configuration's, is ErrForged.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// cloudonixState is one row of the status table.
type cloudonixState struct {
	final    bool
	answered bool
	outcome  string
	// ended: the call ended normally; answered unless the event shows it
	// was never answered (then no_answer).
	ended bool
}

// cloudonixStates maps Cloudonix's session `status` (session updates,
// session fetches) and the Twilio-style `CallStatus` of voice-application
// requests to ours, case-insensitively; this is the only place that does:
//
//	new, queued, initiated, ringing, processing → not final
//	connected, answered, answer, in-progress    → not final, Answered
//	completed, ended, hangup                    → final answered; no_answer
//	                                              when the session says it was
//	                                              never answered (callAnswerTime
//	                                              given as 0 or null)
//	busy                                        → final busy
//	noanswer, no-answer, no_answer, timeout     → final no_answer
//	cancel, canceled, cancelled                 → final canceled
//	failed, failure, congestion, nocredit,
//	error, chanunavail, rejected                → final failed
//
// The CallStatus values are Cloudonix's documented set (queued, ringing,
// in-progress, completed, busy, canceled, failed, no-answer, unknown). The
// session status values are not published; ringing, processing, connected,
// busy, noanswer, cancel, nocredit and error are the ones a production
// Cloudonix integration handles, the rest are Asterisk dial statuses
// (Cloudonix's CDR dispositions) and spellings taken defensively. A status
// not in the table ("unknown" included) is kept in Raw and treated as not
// final, so the attempt finishes by a later event, a query or its deadline.
var cloudonixStates = map[string]cloudonixState{
	"new":         {},
	"queued":      {},
	"initiated":   {},
	"ringing":     {},
	"processing":  {},
	"connected":   {answered: true},
	"answered":    {answered: true},
	"answer":      {answered: true},
	"in-progress": {answered: true},
	"completed":   {final: true, ended: true},
	"ended":       {final: true, ended: true},
	"hangup":      {final: true, ended: true},
	"busy":        {final: true, outcome: OutcomeBusy},
	"noanswer":    {final: true, outcome: OutcomeNoAnswer},
	"no-answer":   {final: true, outcome: OutcomeNoAnswer},
	"no_answer":   {final: true, outcome: OutcomeNoAnswer},
	"timeout":     {final: true, outcome: OutcomeNoAnswer},
	"cancel":      {final: true, outcome: OutcomeCanceled},
	"canceled":    {final: true, outcome: OutcomeCanceled},
	"cancelled":   {final: true, outcome: OutcomeCanceled},
	"failed":      {final: true, outcome: OutcomeFailed},
	"failure":     {final: true, outcome: OutcomeFailed},
	"congestion":  {final: true, outcome: OutcomeFailed},
	"nocredit":    {final: true, outcome: OutcomeFailed},
	"error":       {final: true, outcome: OutcomeFailed},
	"chanunavail": {final: true, outcome: OutcomeFailed},
	"rejected":    {final: true, outcome: OutcomeFailed},
}

// cloudonixEvent is what a session update, a session fetch or a
// voice-application request says about a call.
type cloudonixEvent struct {
	token  string // the session token (our ProviderCallID)
	status string // session status or CallStatus, as sent
	// domainName and domainID name the session's domain when the event
	// does ("" / 0 otherwise).
	domainName string
	domainID   int64
	// answerKnown: the event carries the session's answer time (possibly
	// 0 or null: never answered); answerMs and endMs are epoch ms, 0 when
	// unknown.
	answerKnown     bool
	answerMs, endMs int64
	// duration is a talk time in seconds the event states, -1 when none.
	duration int
}

// toStatus maps the event with cloudonixStates.
func (ev cloudonixEvent) toStatus() Status {
	row := cloudonixStates[strings.ToLower(ev.status)]
	s := Status{ProviderCallID: ev.token, Raw: ev.status, Final: row.final, Outcome: row.outcome,
		Answered: row.answered || (!row.final && ev.answerMs > 0)}
	if row.ended {
		if ev.answerKnown && ev.answerMs == 0 {
			s.Outcome = OutcomeNoAnswer
		} else {
			s.Outcome, s.Answered = OutcomeAnswered, true
		}
	}
	if s.Final && s.Answered {
		switch {
		case ev.duration >= 0:
			s.DurationSeconds = ev.duration
		case ev.answerMs > 0 && ev.endMs > ev.answerMs:
			s.DurationSeconds = int((ev.endMs - ev.answerMs + 500) / 1000)
		}
	}
	return s
}

// cloudonixDecode reads an event from body: a JSON session object (or a
// one-element array of one, as session notifications sometimes come), a
// JSON or form-encoded voice-application request, or, for an empty body
// (a GET voice-application request), the query parameters.
func cloudonixDecode(body []byte, query url.Values) (cloudonixEvent, error) {
	m, err := cloudonixFields(body, query)
	if err != nil {
		return cloudonixEvent{}, err
	}
	ev := cloudonixEvent{duration: -1}
	ev.token = cloudonixFirst(cloudonixScalar(m["token"]), cloudonixScalar(m["Session"]), cloudonixScalar(m["CallSid"]))
	ev.status = cloudonixFirst(cloudonixScalar(m["status"]), cloudonixScalar(m["CallStatus"]))
	switch d := m["domain"].(type) {
	case map[string]any:
		ev.domainName = cloudonixFirst(cloudonixScalar(d["domain"]), cloudonixScalar(d["name"]))
		ev.domainID = cloudonixInt(d["id"])
	default:
		ev.domainName = cloudonixScalar(d)
	}
	ev.domainName = cloudonixFirst(ev.domainName, cloudonixScalar(m["Domain"]), cloudonixScalar(m["AccountSid"]))
	if ev.domainID == 0 {
		ev.domainID = cloudonixInt(m["domainId"])
	}
	_, hasMs := m["callAnswerTime"]
	_, hasISO := m["answerTime"]
	ev.answerKnown = hasMs || hasISO
	ev.answerMs = cloudonixFirstPositive(cloudonixInt(m["callAnswerTime"]), cloudonixISOms(m["answerTime"]))
	ev.endMs = cloudonixFirstPositive(cloudonixInt(m["callEndTime"]), cloudonixISOms(m["endTime"]))
	for _, k := range []string{"CallDuration", "duration"} {
		if v := cloudonixScalar(m[k]); v != "" {
			if n, err := strconv.Atoi(v); err == nil && n >= 0 {
				ev.duration = n
				break
			}
		}
	}
	return ev, nil
}

// cloudonixFields decodes body (or query) into a field map; JSON numbers
// stay json.Number.
func cloudonixFields(body []byte, query url.Values) (map[string]any, error) {
	b := bytes.TrimSpace(body)
	if len(b) == 0 {
		m := make(map[string]any, len(query))
		for k, v := range query {
			if len(v) > 0 {
				m[k] = v[0]
			}
		}
		return m, nil
	}
	switch b[0] {
	case '{', '[':
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("body is not JSON: %w", err)
		}
		if list, ok := v.([]any); ok {
			if len(list) != 1 {
				return nil, fmt.Errorf("body is a list of %d events, want 1", len(list))
			}
			v = list[0]
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, errors.New("body is not a JSON object")
		}
		return m, nil
	}
	form, err := url.ParseQuery(string(b))
	if err != nil {
		return nil, fmt.Errorf("body is neither JSON nor a form: %w", err)
	}
	return cloudonixFields(nil, form)
}

// cloudonixScalar renders a string, number or boolean field ("" otherwise).
func cloudonixScalar(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	return ""
}

// cloudonixInt reads an integer field (number or numeric string), 0 when
// absent or not a number.
func cloudonixInt(v any) int64 {
	s := cloudonixScalar(v)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return int64(f)
	}
	return 0
}

// cloudonixISOms reads an ISO-8601 time field as epoch ms, 0 when absent.
func cloudonixISOms(v any) int64 {
	s := cloudonixScalar(v)
	if s == "" {
		return 0
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0
	}
	return t.UnixMilli()
}

// cloudonixFirstPositive returns the first positive value, 0 when none is.
func cloudonixFirstPositive(vs ...int64) int64 {
	for _, v := range vs {
		if v > 0 {
			return v
		}
	}
	return 0
}

// cloudonixDomainKey normalises a domain name for comparison: lower case,
// without the ".cloudonix.net" suffix Cloudonix adds to short names.
func cloudonixDomainKey(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	return strings.TrimSuffix(s, ".cloudonix.net")
}

// domainMatches reports whether ev's domain can be the configuration's:
// names are compared when both sides are names, numeric ids when both are
// ids; an event naming its domain in a form the configuration cannot be
// compared with matches.
func (c *cloudonix) domainMatches(ev cloudonixEvent) bool {
	conf := strings.TrimSpace(c.domain)
	if conf == "" {
		return true
	}
	if id, err := strconv.ParseInt(conf, 10, 64); err == nil {
		return ev.domainID == 0 || ev.domainID == id
	}
	return ev.domainName == "" || cloudonixDomainKey(ev.domainName) == cloudonixDomainKey(conf)
}

// event decodes and checks a webhook: it must name a session and, when it
// names a domain, the configuration's. Failures are ErrForged.
func (c *cloudonix) event(w Webhook) (cloudonixEvent, error) {
	var query url.Values
	switch {
	case w.Request != nil && w.Request.URL != nil:
		query = w.Request.URL.Query()
	case w.PublicURL != "":
		if u, err := url.Parse(w.PublicURL); err == nil {
			query = u.Query()
		}
	}
	ev, err := cloudonixDecode(w.Body, query)
	if err != nil {
		return cloudonixEvent{}, fmt.Errorf("%s: %w", err.Error(), ErrForged)
	}
	if ev.token == "" {
		return cloudonixEvent{}, fmt.Errorf("request names no session: %w", ErrForged)
	}
	if !c.domainMatches(ev) {
		return cloudonixEvent{}, fmt.Errorf("request is for another domain: %w", ErrForged)
	}
	return ev, nil
}

// ParseStatus reads a session update posted to the call's `callback` URL:
// the Session model's token, status (mapped by cloudonixStates),
// callAnswerTime and callEndTime (talk time). Twilio-style CallStatus
// parameters are read the same way. Cloudonix does not sign its requests:
// an update that names no session or another domain is ErrForged; one
// without a status is another error. The session token becomes
// ProviderCallID, which the dialer checks against the attempt's. A repeated
// update is harmless (a final status is applied once).
func (c *cloudonix) ParseStatus(w Webhook) (Status, error) {
	ev, err := c.event(w)
	if err != nil {
		return Status{}, fmt.Errorf("cloudonix status webhook: %w", err)
	}
	if ev.status == "" {
		return Status{}, errors.New("cloudonix status webhook: no status")
	}
	return ev.toStatus(), nil
}

// VerifyAnswer checks the voice-application request the answered call makes
// to its `url` (parameters in the query for GET, JSON or form body for POST):
// it must name its session (Session or CallSid) and, when it names one, the
// configuration's domain (AccountSid / Domain). Cloudonix has no machine
// detection, so the verdict is always "". A domain "requests key" bearer
// header, when Cloudonix sends one, is not required.
func (c *cloudonix) VerifyAnswer(w Webhook) (string, error) {
	if _, err := c.event(w); err != nil {
		return "", fmt.Errorf("cloudonix answer webhook: %w", err)
	}
	return "", nil
}

// AnswerMarkup answers the voice-application request with CXML (text/xml),
// Cloudonix's Twilio-compatible markup. With an AgentURL the call's audio is
// connected to it as a bidirectional stream, and the call is hung up when
// the stream ends:
//
//	<Response><Connect><Stream url="AGENT"><Parameter name="attempt_id" value="ID"/>
//	<Parameter name="opt_out_token" value="TOKEN"/><Parameter name="token" value="TOKEN"/>
//	<Parameter name="opt_out_url" value="URL"/><Parameter name="agent_events_url" value="URL"/>
//	<Parameter name="KEY" value="VALUE"/>...</Stream></Connect><Hangup/></Response>
//
// with one Parameter per Context key in sorted order (a Context key named
// attempt_id, opt_out_token, token, opt_out_url or agent_events_url is left out: the answer's own
// value wins; see streamParams), as for Twilio. Without an AgentURL the
// greeting is spoken and the call hung up: <Response><Say>GREETING</Say><Hangup/></Response>,
// or just <Hangup/> for an empty greeting. Every value is XML-escaped. The
// body starts with an XML declaration.
func (c *cloudonix) AnswerMarkup(a Answer) (string, []byte) {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><Response>`)
	if a.AgentURL != "" {
		b.WriteString(`<Connect><Stream url="`)
		xmlEscape(&b, a.AgentURL)
		b.WriteString(`">`)
		for _, p := range streamParams(a) {
			writeParameter(&b, p.name, p.value)
		}
		b.WriteString(`</Stream></Connect>`)
	} else if a.Greeting != "" {
		b.WriteString(`<Say>`)
		xmlEscape(&b, a.Greeting)
		b.WriteString(`</Say>`)
	}
	b.WriteString(`<Hangup/></Response>`)
	return "text/xml", []byte(b.String())
}
