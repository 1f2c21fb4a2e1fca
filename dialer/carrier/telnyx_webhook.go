package carrier

// Telnyx webhooks: the event mapping (one table for event types, one for
// hangup causes, one for machine-detection results), the Ed25519 signature
// check of API.md 7, and the (unused) answer markup.

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Telnyx's webhook signature headers and the timestamp tolerance.
const (
	telnyxSignatureHeader = "telnyx-signature-ed25519"
	telnyxTimestampHeader = "telnyx-timestamp"
	telnyxTolerance       = 300 * time.Second
)

// telnyxEvent is one row of the event table.
type telnyxEvent struct {
	answered    bool // the event shows the call was answered
	needsAnswer bool // Status.NeedsAnswer
	hangUp      bool // Status.HangUp
	amd         bool // the event carries a machine-detection result
	final       bool // call.hangup
}

// telnyxEvents maps Telnyx's event_type to ours; this table and the two
// below are the only places that do:
//
//	call.initiated                         → not final
//	call.answered                          → not final, Answered, NeedsAnswer
//	call.speak.started                     → not final, Answered
//	call.speak.ended                       → not final, Answered, HangUp
//	call.machine.detection.ended           → not final, Answered, AnsweredBy
//	call.machine.greeting.ended            → not final, Answered, AnsweredBy
//	call.machine.premium.detection.ended   → not final, Answered, AnsweredBy
//	call.machine.premium.greeting.ended    → not final, Answered, AnsweredBy
//	streaming.started, streaming.stopped   → not final
//	streaming.failed                       → not final, HangUp (the agent
//	                                         cannot be reached: the callee
//	                                         would hear silence)
//	call.hangup                            → final, see telnyxCauses
//
// An event not in the table (call.bridged, recordings, ...) is kept in Raw
// and treated as not final.
var telnyxEvents = map[string]telnyxEvent{
	"call.initiated":                       {},
	"call.answered":                        {answered: true, needsAnswer: true},
	"call.speak.started":                   {answered: true},
	"call.speak.ended":                     {answered: true, hangUp: true},
	"call.machine.detection.ended":         {answered: true, amd: true},
	"call.machine.greeting.ended":          {answered: true, amd: true},
	"call.machine.premium.detection.ended": {answered: true, amd: true},
	"call.machine.premium.greeting.ended":  {answered: true, amd: true},
	"streaming.started":                    {},
	"streaming.stopped":                    {},
	"streaming.failed":                     {hangUp: true},
	"call.hangup":                          {final: true},
}

// telnyxCause is one row of the hangup-cause table.
type telnyxCause struct {
	answered bool
	outcome  string
}

// telnyxCauses maps call.hangup's hangup_cause to an outcome:
//
//	normal_clearing    → answered (the call was connected and hung up),
//	                     unless sip_hangup_cause is a SIP failure (see
//	                     telnyxSIPOutcome)
//	time_limit         → answered (time_limit_secs ran out after answer)
//	user_busy          → busy
//	timeout, no_answer → no_answer
//	originator_cancel  → canceled (we hung up before the answer)
//	call_rejected, not_found, unspecified, and any other cause → failed
//
// normal_clearing and time_limit also set Answered, so a hangup that
// overtakes its call.answered still records the answer, and an earlier
// machine verdict turns it into voicemail.
var telnyxCauses = map[string]telnyxCause{
	"normal_clearing":   {answered: true, outcome: OutcomeAnswered},
	"time_limit":        {answered: true, outcome: OutcomeAnswered},
	"user_busy":         {outcome: OutcomeBusy},
	"timeout":           {outcome: OutcomeNoAnswer},
	"no_answer":         {outcome: OutcomeNoAnswer},
	"originator_cancel": {outcome: OutcomeCanceled},
	"call_rejected":     {outcome: OutcomeFailed},
	"not_found":         {outcome: OutcomeFailed},
	"unspecified":       {outcome: OutcomeFailed},
}

// telnyxSIPOutcome is the outcome of a normal_clearing hangup whose
// sip_hangup_cause is a SIP failure response (4xx-6xx): such a call was
// never connected, so it is not answered. 486 and 600 are busy, 408 and 480
// no_answer, 487 canceled, any other failure code failed. A 2xx, a missing
// or a non-numeric sip_hangup_cause leaves normal_clearing answered.
func telnyxSIPOutcome(sipCause string) (string, bool) {
	code, err := strconv.Atoi(strings.TrimSpace(sipCause))
	if err != nil || code < 400 || code > 699 {
		return "", false
	}
	switch code {
	case 486, 600:
		return OutcomeBusy, true
	case 408, 480:
		return OutcomeNoAnswer, true
	case 487:
		return OutcomeCanceled, true
	}
	return OutcomeFailed, true
}

// telnyxVerdicts normalises machine-detection results to AnsweredBy values
// (IsMachine is true for "machine", "machine_silence" and "fax"):
//
//	human, human_residence, human_business → human
//	machine                                → machine
//	silence (premium)                      → machine_silence (Telnyx's own
//	                                         standard detector calls long
//	                                         initial silence a machine)
//	fax_detected (premium)                 → fax
//	not_sure                               → unknown (a person, as Twilio's
//	                                         "unknown")
//
// The greeting-ended events (beep_detected, ended) come only after a
// machine was detected: they are "machine"; their not_sure adds nothing
// ("").
var telnyxVerdicts = map[string]string{
	"human":           "human",
	"human_residence": "human",
	"human_business":  "human",
	"machine":         "machine",
	"silence":         "machine_silence",
	"fax_detected":    "fax",
	"not_sure":        "unknown",
}

// telnyxVerdict is the AnsweredBy of a machine-detection event's result.
func telnyxVerdict(eventType, result string) string {
	if strings.HasSuffix(eventType, ".greeting.ended") {
		if result == "beep_detected" || result == "ended" {
			return "machine"
		}
		return ""
	}
	return telnyxVerdicts[result]
}

// telnyxEnvelope is a webhook's JSON (webhook API version 2).
type telnyxEnvelope struct {
	Data struct {
		RecordType string        `json:"record_type"`
		EventType  string        `json:"event_type"`
		ID         string        `json:"id"`
		OccurredAt string        `json:"occurred_at"`
		Payload    telnyxPayload `json:"payload"`
	} `json:"data"`
}

// telnyxPayload is the part of an event's payload this carrier reads.
type telnyxPayload struct {
	CallControlID  string `json:"call_control_id"`
	ClientState    string `json:"client_state"`
	HangupCause    string `json:"hangup_cause"`
	HangupSource   string `json:"hangup_source"`
	SIPHangupCause string `json:"sip_hangup_cause"`
	StartTime      string `json:"start_time"`
	EndTime        string `json:"end_time"`
	Result         string `json:"result"`
}

// telnyxStatus maps a parsed event (see the tables above). Raw is the
// hangup_cause for call.hangup ("call.hangup" when it has none) and the
// event_type otherwise.
func telnyxStatus(env *telnyxEnvelope) Status {
	d := &env.Data
	p := &d.Payload
	ev := telnyxEvents[d.EventType]
	s := Status{ProviderCallID: p.CallControlID, Raw: d.EventType, Answered: ev.answered,
		NeedsAnswer: ev.needsAnswer, HangUp: ev.hangUp}
	if ev.amd {
		s.AnsweredBy = telnyxVerdict(d.EventType, p.Result)
	}
	if !ev.final {
		return s
	}
	s.Final = true
	if p.HangupCause != "" {
		s.Raw = p.HangupCause
	}
	cause, ok := telnyxCauses[p.HangupCause]
	if !ok {
		cause = telnyxCause{outcome: OutcomeFailed}
	}
	if p.HangupCause == "normal_clearing" {
		if outcome, failed := telnyxSIPOutcome(p.SIPHangupCause); failed {
			cause = telnyxCause{outcome: outcome}
		}
	}
	s.Answered, s.Outcome = cause.answered, cause.outcome
	if s.Answered {
		s.DurationSeconds = telnyxDuration(p.StartTime, p.EndTime, d.OccurredAt)
	}
	return s
}

// telnyxDuration is the talk time of an answered call in whole seconds:
// end_time (else the event's occurred_at) minus start_time, rounded; 0 when
// either is missing or unreadable, or the difference is negative.
func telnyxDuration(start, end, occurred string) int {
	if end == "" {
		end = occurred
	}
	st, err1 := time.Parse(time.RFC3339Nano, start)
	et, err2 := time.Parse(time.RFC3339Nano, end)
	if err1 != nil || err2 != nil || et.Before(st) {
		return 0
	}
	return int(math.Round(et.Sub(st).Seconds()))
}

// ParseStatus verifies an event webhook (see verifyTelnyx) and maps it: the
// call_control_id, the event (telnyxEvents), the machine verdict, and for
// call.hangup the outcome and talk time. Telnyx does not number events
// (Sequence 0); out-of-order events are handled by the tables (a hangup says
// itself whether the call was answered). A forged, unsigned, stale or
// replayed webhook is ErrForged (wrapped); a verified one that is not a
// Telnyx event is another error.
func (t *telnyx) ParseStatus(w Webhook) (Status, error) {
	key, err := t.verifyTelnyx(w)
	if err != nil {
		return Status{}, fmt.Errorf("telnyx status webhook: %w", err)
	}
	var env telnyxEnvelope
	if err := json.Unmarshal(w.Body, &env); err != nil {
		return Status{}, fmt.Errorf("telnyx status webhook: body is not JSON: %w", err)
	}
	if env.Data.EventType == "" {
		return Status{}, errors.New("telnyx status webhook: no data.event_type")
	}
	s := telnyxStatus(&env)
	if key != "" {
		s.ReplayKeys = []string{key}
	}
	return s, nil
}

// VerifyAnswer verifies a request to the answer URL as a status webhook is
// verified. Telnyx never requests an answer URL (its call is driven by
// commands), so this only guards the route: a verified request's
// machine-detection verdict, if it is such an event, is returned.
func (t *telnyx) VerifyAnswer(w Webhook) (string, error) {
	if _, err := t.verifyTelnyx(w); err != nil {
		return "", fmt.Errorf("telnyx answer webhook: %w", err)
	}
	var env telnyxEnvelope
	if json.Unmarshal(w.Body, &env) == nil && telnyxEvents[env.Data.EventType].amd {
		return telnyxVerdict(env.Data.EventType, env.Data.Payload.Result), nil
	}
	return "", nil
}

// verifyTelnyx checks a webhook's Ed25519 signature as Telnyx signs it: the
// telnyx-signature-ed25519 header is base64 of the 64-byte signature of
// telnyx-timestamp + "|" + the raw body, made with the key whose public half
// is the configuration's webhook_public_key. The timestamp (Unix seconds)
// must be within ±300 s of Options.Now. The replay key returned names the
// signed request (Status.ReplayKeys): the signature itself.
//
// A configuration without webhook_public_key accepts every webhook here: the
// per-attempt token in the callback URL, checked by the dialer before the
// carrier is asked, is then its only authentication (API.md 7). With a key,
// a missing, malformed, stale or wrong signature is ErrForged.
func (t *telnyx) verifyTelnyx(w Webhook) (replayKey string, err error) {
	if t.publicKey == nil {
		return "", nil
	}
	if w.Request == nil {
		return "", fmt.Errorf("no request: %w", ErrForged)
	}
	sigB64 := w.Request.Header.Get(telnyxSignatureHeader)
	ts := w.Request.Header.Get(telnyxTimestampHeader)
	if sigB64 == "" || ts == "" {
		return "", fmt.Errorf("no %s or %s header: %w", telnyxSignatureHeader, telnyxTimestampHeader, ErrForged)
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return "", fmt.Errorf("%s is not Unix seconds: %w", telnyxTimestampHeader, ErrForged)
	}
	now := t.now()
	if skew := now.Sub(time.Unix(sec, 0)); skew > telnyxTolerance || skew < -telnyxTolerance {
		return "", fmt.Errorf("timestamp %d is outside ±%s: %w", sec, telnyxTolerance, ErrForged)
	}
	sig, err := base64.StdEncoding.DecodeString(sigB64)
	if err != nil || len(sig) != ed25519.SignatureSize {
		return "", fmt.Errorf("malformed signature: %w", ErrForged)
	}
	msg := make([]byte, 0, len(ts)+1+len(w.Body))
	msg = append(append(append(msg, ts...), '|'), w.Body...)
	if !ed25519.Verify(t.publicKey, msg, sig) {
		return "", fmt.Errorf("signature mismatch: %w", ErrForged)
	}
	// Ed25519 signatures are not malleable (Verify rejects a non-canonical
	// S), so the decoded signature names the signed request exactly.
	return "telnyx\x00" + string(sig), nil
}

// AnswerMarkup has no Telnyx counterpart: Telnyx asks no answer URL. It
// returns, as application/json, what the carrier does with an answered call
// instead, for logs and tests:
//
//	{"stream_url":"wss://agent/?attempt_id=7&name=Ann"}   (asked at dial)
//	{"speak":{"payload":"Hello","service_level":"basic","voice":"female","language":"en-US"},"hangup":true}
//	{"hangup":true}                                        (empty greeting)
//
// The dialer does not use it for Telnyx.
func (t *telnyx) AnswerMarkup(a Answer) (string, []byte) {
	var v any
	switch {
	case a.AgentURL != "":
		u, err := telnyxStreamURL(a)
		if err != nil {
			u = a.AgentURL
		}
		v = struct {
			StreamURL string `json:"stream_url"`
		}{u}
	case a.Greeting != "":
		v = struct {
			Speak  any  `json:"speak"`
			HangUp bool `json:"hangup"`
		}{struct {
			Payload      string `json:"payload"`
			ServiceLevel string `json:"service_level"`
			Voice        string `json:"voice"`
			Language     string `json:"language"`
		}{truncateRunes(a.Greeting, telnyxMaxSpeak), telnyxServiceLevel, telnyxVoice, telnyxLanguage}, true}
	default:
		v = struct {
			HangUp bool `json:"hangup"`
		}{true}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // keep a stream URL's "&" readable
	_ = enc.Encode(v)        // plain structs of strings always encode
	return "application/json", bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
