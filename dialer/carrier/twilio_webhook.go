package carrier

// Twilio webhooks: the status mapping, the TwiML answer of API.md 6 and the
// X-Twilio-Signature verification of API.md 7.

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/subtle"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// twilioState is one row of the status table.
type twilioState struct {
	final    bool
	answered bool
	outcome  string
}

// twilioStates maps Twilio's CallStatus (webhooks) and Call resource status
// (queries) to ours; this is the only place that does:
//
//	queued, initiated, ringing  → not final
//	in-progress                 → not final, Answered
//	completed                   → final answered, Answered; voicemail when
//	                              AnsweredBy is machine_* or fax
//	busy                        → final busy
//	no-answer                   → final no_answer
//	failed                      → final failed
//	canceled                    → final canceled
//
// A status not in the table (Twilio adding one) is kept in Raw and treated
// as not final, so the attempt finishes by a later event, a query or its
// deadline.
var twilioStates = map[string]twilioState{
	"queued":      {},
	"initiated":   {},
	"ringing":     {},
	"in-progress": {answered: true},
	"completed":   {final: true, answered: true, outcome: OutcomeAnswered},
	"busy":        {final: true, outcome: OutcomeBusy},
	"no-answer":   {final: true, outcome: OutcomeNoAnswer},
	"failed":      {final: true, outcome: OutcomeFailed},
	"canceled":    {final: true, outcome: OutcomeCanceled},
}

// twilioStatus maps a raw status and machine-detection verdict.
func twilioStatus(raw, answeredBy string) Status {
	st := twilioStates[raw]
	s := Status{Raw: raw, AnsweredBy: answeredBy, Answered: st.answered, Final: st.final, Outcome: st.outcome}
	if s.Outcome == OutcomeAnswered && IsMachine(answeredBy) {
		s.Outcome = OutcomeVoicemail
	}
	return s
}

// AnswerMarkup answers Twilio's request to the call's Url with TwiML
// (text/xml). With an AgentURL the call's audio is connected to it:
//
//	<Response><Connect><Stream url="AGENT"><Parameter name="attempt_id" value="ID"/>
//	<Parameter name="opt_out_token" value="TOKEN"/><Parameter name="token" value="TOKEN"/>
//	<Parameter name="opt_out_url" value="URL"/><Parameter name="agent_events_url" value="URL"/>
//	<Parameter name="KEY" value="VALUE"/>...</Stream></Connect></Response>
//
// with one Parameter per Context key in sorted order (a Context key named
// attempt_id, opt_out_token, token, opt_out_url or agent_events_url is left out: the answer's own
// value wins; see streamParams); the agent finds them in the stream's
// start message (customParameters). Without an AgentURL the greeting is
// spoken and the call hung up: <Response><Say>GREETING</Say><Hangup/></Response>,
// or just <Hangup/> for an empty greeting. Every value is XML-escaped
// (characters XML cannot carry become U+FFFD). The body starts with an XML
// declaration.
func (t *twilio) AnswerMarkup(a Answer) (string, []byte) {
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
	} else {
		if a.Greeting != "" {
			b.WriteString(`<Say>`)
			xmlEscape(&b, a.Greeting)
			b.WriteString(`</Say>`)
		}
		b.WriteString(`<Hangup/>`)
	}
	b.WriteString(`</Response>`)
	return "text/xml", []byte(b.String())
}

func writeParameter(b *strings.Builder, name, value string) {
	b.WriteString(`<Parameter name="`)
	xmlEscape(b, name)
	b.WriteString(`" value="`)
	xmlEscape(b, value)
	b.WriteString(`"/>`)
}

// xmlEscape writes s escaped for XML text and double-quoted attributes.
func xmlEscape(b *strings.Builder, s string) {
	_ = xml.EscapeText(b, []byte(s)) // a strings.Builder never fails
}

// ParseStatus verifies a status callback's X-Twilio-Signature (see
// verifyTwilio) and returns its status: CallSid, CallStatus (mapped by
// twilioStates), AnsweredBy, CallDuration and SequenceNumber. Twilio numbers
// a call's callbacks from 0; Sequence is SequenceNumber+1 so that 0 keeps
// meaning "not numbered". A forged or unsigned callback is ErrForged
// (wrapped); a signed one without CallStatus is another error.
func (t *twilio) ParseStatus(w Webhook) (Status, error) {
	form, err := t.verifyTwilio(w)
	if err != nil {
		return Status{}, fmt.Errorf("twilio status webhook: %w", err)
	}
	raw := form.Get("CallStatus")
	if raw == "" {
		return Status{}, errors.New("twilio status webhook: no CallStatus")
	}
	s := twilioStatus(raw, form.Get("AnsweredBy"))
	s.ProviderCallID = form.Get("CallSid")
	if d, err := strconv.Atoi(form.Get("CallDuration")); err == nil && d > 0 {
		s.DurationSeconds = d
	}
	if n, err := strconv.Atoi(form.Get("SequenceNumber")); err == nil && n >= 0 {
		s.Sequence = n + 1
	}
	return s, nil
}

// VerifyAnswer verifies the answer request's X-Twilio-Signature and returns
// its AnsweredBy ("" when machine detection did not run).
func (t *twilio) VerifyAnswer(w Webhook) (string, error) {
	form, err := t.verifyTwilio(w)
	if err != nil {
		return "", fmt.Errorf("twilio answer webhook: %w", err)
	}
	return form.Get("AnsweredBy"), nil
}

// verifyTwilio checks X-Twilio-Signature and returns the request's form
// parameters. Calls are placed with Method=POST and StatusCallbackMethod=POST,
// so every webhook is a form-encoded POST.
//
// The signature is base64(HMAC-SHA1(auth_token, URL + each form parameter
// name followed by its value, in name order)), where URL is w.PublicURL
// exactly as handed to Twilio; a repeated name contributes each of its
// values in the order received. Like Twilio's own validators, the URL is
// also tried with the scheme's default port (:443, :80) added when it has
// none, or removed when it has it. Comparison is constant time.
func (t *twilio) verifyTwilio(w Webhook) (url.Values, error) {
	if w.Request == nil {
		return nil, fmt.Errorf("no request: %w", ErrForged)
	}
	sig := w.Request.Header.Get("X-Twilio-Signature")
	if sig == "" {
		return nil, fmt.Errorf("no X-Twilio-Signature: %w", ErrForged)
	}
	if t.authToken == "" {
		return nil, fmt.Errorf("configuration has no auth_token: %w", ErrForged)
	}
	pub, err := url.Parse(w.PublicURL)
	if err != nil || pub.Host == "" {
		return nil, fmt.Errorf("public URL is not absolute: %w", ErrForged)
	}
	params, err := url.ParseQuery(string(w.Body))
	if err != nil {
		return nil, fmt.Errorf("form body does not parse: %w", ErrForged)
	}
	got := []byte(sig)
	for _, u := range portVariants(w.PublicURL, pub) {
		want := twilioSignature(t.authToken, u, params)
		if subtle.ConstantTimeCompare(got, []byte(want)) == 1 {
			return params, nil
		}
	}
	return nil, fmt.Errorf("X-Twilio-Signature mismatch: %w", ErrForged)
}

// portVariants returns raw and, when it differs, raw with the scheme's
// default port added (no port given) or removed (the default port given).
func portVariants(raw string, u *url.URL) []string {
	def := map[string]string{"https": "443", "http": "80"}[strings.ToLower(u.Scheme)]
	if def == "" {
		return []string{raw}
	}
	// Rewrite only the authority, keeping the rest of raw byte for byte.
	prefix := u.Scheme + "://"
	if !strings.HasPrefix(strings.ToLower(raw), strings.ToLower(prefix)) {
		return []string{raw}
	}
	rest := raw[len(prefix):]
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	authority, tail := rest[:end], rest[end:]
	userinfo := ""
	if i := strings.LastIndex(authority, "@"); i >= 0 {
		userinfo, authority = authority[:i+1], authority[i+1:]
	}
	host, port, err := net.SplitHostPort(authority)
	switch {
	case err != nil: // no port
		return []string{raw, raw[:len(prefix)] + userinfo + authority + ":" + def + tail}
	case port == def:
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
		return []string{raw, raw[:len(prefix)] + userinfo + host + tail}
	}
	return []string{raw}
}

// twilioSignature computes X-Twilio-Signature for a request to rawURL with
// form parameters params: base64 of
// HMAC-SHA1 keyed by authToken over rawURL followed by every parameter name
// and value, names in byte order, a repeated name's values in their order.
func twilioSignature(authToken, rawURL string, params url.Values) string {
	mac := hmac.New(sha1.New, []byte(authToken))
	mac.Write([]byte(rawURL))
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, v := range params[k] {
			mac.Write([]byte(k))
			mac.Write([]byte(v))
		}
	}
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}
