package carrier

// Plivo and Vobiz webhooks: verifying and parsing status callbacks and
// answer requests, and the XML answer of API.md 6.

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// plivoMaxExtraHeaders is the documented maximum length of a <Stream>'s
// extraHeaders (Plivo and Vobiz: 512 bytes).
const plivoMaxExtraHeaders = 512

// ParseStatus verifies a callback (see verifyWebhook) posted to the call's
// status URL (its ring_url, hangup_url and machine_detection_url) and
// returns its status: CallStatus mapped by plivoStates, ProviderCallID the
// CallUUID, RequestID the RequestUUID (the id Place returned) when it
// differs, DurationSeconds from Duration (else BillDuration), and
// AnsweredBy from a machine-detection callback's Machine parameter
// ("machine" or "human"; such a callback without CallStatus counts as
// in-progress). Plivo numbers no events, so Sequence is 0. A
// forged, unsigned or replayed callback is ErrForged (wrapped); a signed one
// without CallStatus is another error.
func (c *plivoLike) ParseStatus(w Webhook) (Status, error) {
	form, keys, err := c.verifyWebhook(w)
	if err != nil {
		return Status{}, fmt.Errorf("%s status webhook: %w", c.d.provider, err)
	}
	raw := form.Get("CallStatus")
	if raw == "" && form.Get("Machine") != "" {
		// A machine-detection callback is about an answered call even
		// when it leaves CallStatus out.
		raw = "in-progress"
	}
	if raw == "" {
		return Status{}, fmt.Errorf("%s status webhook: no CallStatus", c.d.provider)
	}
	s := plivoStatus(raw, plivoAnsweredBy(form.Get("Machine")))
	s.ProviderCallID = form.Get("CallUUID")
	if req := plivoFirst(form.Get("RequestUUID"), form.Get("ALegRequestUUID")); req != s.ProviderCallID {
		s.RequestID = req
	}
	for _, name := range []string{"Duration", "BillDuration"} {
		if d, err := strconv.Atoi(form.Get(name)); err == nil && d > 0 {
			s.DurationSeconds = d
			break
		}
	}
	s.ReplayKeys = keys
	return s, nil
}

// VerifyAnswer verifies the request to the call's answer URL (CallStatus
// in-progress) and returns the machine verdict it carries ("machine" or
// "human" when it has a Machine parameter, else "").
func (c *plivoLike) VerifyAnswer(w Webhook) (string, error) {
	if plivoStatusEvent(w) {
		return "", fmt.Errorf("%s answer webhook: %w", c.d.provider, ErrStatusEvent)
	}
	form, _, err := c.verifyWebhook(w)
	if err != nil {
		return "", fmt.Errorf("%s answer webhook: %w", c.d.provider, err)
	}
	return plivoAnsweredBy(form.Get("Machine")), nil
}

// verifyWebhook checks a webhook's signature with the dialect's scheme and
// returns its parameters (the form body of a POST, how every call is
// placed; the query of a GET) and its replay keys (Status.ReplayKeys).
func (c *plivoLike) verifyWebhook(w Webhook) (url.Values, []string, error) {
	if w.Request == nil {
		return nil, nil, fmt.Errorf("no request: %w", ErrForged)
	}
	if c.authToken == "" {
		return nil, nil, fmt.Errorf("configuration has no auth_token: %w", ErrForged)
	}
	var form, signed url.Values
	if w.Request.Method == http.MethodGet {
		u, err := url.Parse(w.PublicURL)
		if err != nil {
			return nil, nil, fmt.Errorf("public URL does not parse: %w", ErrForged)
		}
		form = u.Query()
	} else {
		var err error
		if form, err = url.ParseQuery(string(w.Body)); err != nil {
			return nil, nil, fmt.Errorf("form body does not parse: %w", ErrForged)
		}
		signed = form
	}
	keys, err := c.d.verify(c.authToken, w, signed)
	if err != nil {
		return nil, nil, err
	}
	return form, keys, nil
}

// AnswerMarkup answers the request to the call's answer_url with Plivo XML
// (text/xml; Vobiz XML is the same). With an AgentURL the call's audio is
// streamed both ways to it, the call kept up while the stream lasts:
//
//	<Response><Stream bidirectional="true" keepCallAlive="true"
//	contentType="audio/x-mulaw;rate=8000" extraHeaders="attemptId=ID,...">
//	AGENT?attempt_id=ID&opt_out_token=TOKEN&token=TOKEN&opt_out_url=URL&agent_events_url=URL&KEY=VALUE...</Stream></Response>
//
// The attempt id and Context travel twice, because extraHeaders only takes
// letters and digits (documented for both providers: [A-Za-z0-9], pairs
// written k=v and joined by ",", at most 512 bytes):
//
//   - in the stream URL's query: attempt_id, opt_out_token, token,
//     opt_out_url, agent_events_url and every Context key, URL encoded (see
//     streamParams: a Context key named like one of the first five is left
//     out, the answer's own
//     value wins), added to any query the AgentURL has;
//   - in extraHeaders: attemptId=ID, then the Context pairs whose key and
//     value are both non-empty letters and digits, in key order, as long as
//     the whole stays within 512 bytes. The opt-out token (URL-safe base64,
//     which may hold "-" and "_") and URL cannot be written there: they
//     travel only in the query, and Context keys named attemptId,
//     optOutToken or optOutUrl are left out of extraHeaders so that no
//     column poses as them.
//
// Without an AgentURL the greeting is spoken and the call hung up:
// <Response><Speak>GREETING</Speak><Hangup/></Response>, or just <Hangup/>
// for an empty greeting. Every value is XML-escaped. The body starts with
// an XML declaration.
func (c *plivoLike) AnswerMarkup(a Answer) (string, []byte) {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><Response>`)
	if a.AgentURL != "" {
		b.WriteString(`<Stream bidirectional="true" keepCallAlive="true" contentType="audio/x-mulaw;rate=8000" extraHeaders="`)
		xmlEscape(&b, plivoExtraHeaders(a))
		b.WriteString(`">`)
		xmlEscape(&b, plivoStreamURL(a))
		b.WriteString(`</Stream>`)
	} else {
		if a.Greeting != "" {
			b.WriteString(`<Speak>`)
			xmlEscape(&b, a.Greeting)
			b.WriteString(`</Speak>`)
		}
		b.WriteString(`<Hangup/>`)
	}
	b.WriteString(`</Response>`)
	return "text/xml", []byte(b.String())
}

// plivoStreamURL is the AgentURL with the stream parameters (attempt_id,
// the webhook token, the opt-out and agent events URLs, the Context) added to its query (see
// AnswerMarkup). An AgentURL that does not parse is used as given.
func plivoStreamURL(a Answer) string {
	u, err := url.Parse(a.AgentURL)
	if err != nil {
		return a.AgentURL
	}
	var q strings.Builder
	q.WriteString(u.RawQuery)
	add := func(k, v string) {
		if q.Len() > 0 {
			q.WriteByte('&')
		}
		q.WriteString(url.QueryEscape(k) + "=" + url.QueryEscape(v))
	}
	for _, p := range streamParams(a) {
		add(p.name, p.value)
	}
	u.RawQuery = q.String()
	return u.String()
}

// plivoExtraHeaders is the <Stream> extraHeaders value (see AnswerMarkup).
func plivoExtraHeaders(a Answer) string {
	s := "attemptId=" + strconv.FormatInt(a.AttemptID, 10)
	for _, k := range contextKeys(a) {
		v := a.Context[k]
		if !plivoAlnum(k) || !plivoAlnum(v) || plivoReservedHeaders[k] {
			continue
		}
		if len(s)+len(k)+len(v)+2 > plivoMaxExtraHeaders {
			break
		}
		s += "," + k + "=" + v
	}
	return s
}

// plivoReservedHeaders are the extraHeaders names a Context key may not
// take: attemptId is ours, and optOutToken, optOutUrl, token and
// agentEventsUrl name the values the other providers' agents receive (here
// only in the query).
var plivoReservedHeaders = map[string]bool{"attemptId": true, "optOutToken": true, "optOutUrl": true, "token": true, "agentEventsUrl": true}

// plivoAlnum reports whether s is non-empty ASCII letters and digits.
func plivoAlnum(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// plivoStatusEvent reports whether a request to the answer URL is a status
// event: Vobiz documents Ring and Hangup events sent to the answer URL
// (docs.vobiz.ai/compare/plivo/webhooks), with an Event parameter or a
// CallStatus that is not in-progress. It only peeks at the parameters;
// ParseStatus verifies the request.
func plivoStatusEvent(w Webhook) bool {
	if w.Request == nil || w.Request.Method != http.MethodPost {
		return false
	}
	form, err := url.ParseQuery(string(w.Body))
	if err != nil {
		return false
	}
	switch form.Get("Event") {
	case "Ring", "Hangup":
		return true
	}
	st := form.Get("CallStatus")
	return st != "" && st != "in-progress"
}
