package carrier

// Vonage webhooks: the status mapping, the NCCO answer of API.md 6 and the
// signed-webhook (HS256 JWT) verification of API.md 7.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// vonageClockSkew is the tolerance on a signed webhook's iat (and exp, nbf
// when present) against Options.Now: ±300 s. The store remembers a jti for
// longer (ReplayTTL), so a token cannot come back once forgotten.
const vonageClockSkew = 300 * time.Second

// vonageState is one row of the status table.
type vonageState struct {
	final      bool
	answered   bool
	answeredBy string
	outcome    string
}

// vonageStates maps Vonage's event status (and the fetched call's status)
// to ours; this is the only place that does:
//
//	started, ringing      → not final
//	answered              → not final, Answered
//	human                 → not final, Answered, AnsweredBy "human"
//	machine               → not final, Answered, AnsweredBy "machine"
//	completed             → final answered, Answered (the dialer makes it
//	                        voicemail when an earlier event said machine)
//	busy                  → final busy
//	timeout, unanswered   → final no_answer
//	cancelled             → final canceled
//	rejected, failed      → final failed
//
// human and machine are sent when the call asked for machine_detection.
// Statuses not in the table (disconnected, transfer and record events
// without a status, Vonage adding one) are kept in Raw and treated as not
// final, so the attempt finishes by a later event, a query or its deadline.
var vonageStates = map[string]vonageState{
	"started":    {},
	"ringing":    {},
	"answered":   {answered: true},
	"human":      {answered: true, answeredBy: "human"},
	"machine":    {answered: true, answeredBy: "machine"},
	"completed":  {final: true, answered: true, outcome: OutcomeAnswered},
	"busy":       {final: true, outcome: OutcomeBusy},
	"timeout":    {final: true, outcome: OutcomeNoAnswer},
	"unanswered": {final: true, outcome: OutcomeNoAnswer},
	"cancelled":  {final: true, outcome: OutcomeCanceled},
	"rejected":   {final: true, outcome: OutcomeFailed},
	"failed":     {final: true, outcome: OutcomeFailed},
}

// vonageStatus maps a raw status through vonageStates.
func vonageStatus(raw string) Status {
	st := vonageStates[raw]
	return Status{Raw: raw, Answered: st.answered, AnsweredBy: st.answeredBy, Final: st.final, Outcome: st.outcome}
}

// vonageNCCOAction is one action of the answer NCCO.
type vonageNCCOAction struct {
	Action   string            `json:"action"`
	Text     string            `json:"text,omitempty"`
	Endpoint []vonageWebsocket `json:"endpoint,omitempty"`
}

// vonageWebsocket is the websocket endpoint of a connect action.
type vonageWebsocket struct {
	Type        string            `json:"type"`
	URI         string            `json:"uri"`
	ContentType string            `json:"content-type"`
	Headers     map[string]string `json:"headers"`
}

// vonageAudio is the media format asked of the websocket: 16-bit linear
// PCM at 16 kHz.
const vonageAudio = "audio/l16;rate=16000"

// AnswerMarkup answers Vonage's request to the call's answer_url with an NCCO
// (application/json). With an AgentURL the call's audio is connected to it:
//
//	[{"action":"connect","endpoint":[{"type":"websocket","uri":"AGENT",
//	  "content-type":"audio/l16;rate=16000","headers":{"attempt_id":"ID",
//	  "opt_out_token":"TOKEN","token":"TOKEN","opt_out_url":"URL",
//	  "agent_events_url":"URL","KEY":"VALUE",...}}]}]
//
// where headers hold the attempt id, the webhook token, the opt-out and
// agent events URLs and every Context entry (see streamParams: a Context
// key named attempt_id, opt_out_token, token, opt_out_url or
// agent_events_url is left out, the answer's own value wins);
// Vonage hands them to the agent in the websocket's first message. Without
// an AgentURL the greeting is spoken, [{"action":"talk","text":"GREETING"}],
// and the call ends when the NCCO is done. An empty greeting gives [], an
// NCCO without actions: the call ends at once. JSON encoding escapes every
// value (invalid UTF-8 becomes U+FFFD).
func (v *vonage) AnswerMarkup(a Answer) (string, []byte) {
	ncco := []vonageNCCOAction{}
	switch {
	case a.AgentURL != "":
		params := streamParams(a)
		headers := make(map[string]string, len(params))
		for _, p := range params {
			headers[p.name] = p.value
		}
		ncco = append(ncco, vonageNCCOAction{Action: "connect", Endpoint: []vonageWebsocket{{
			Type: "websocket", URI: a.AgentURL, ContentType: vonageAudio, Headers: headers}}})
	case a.Greeting != "":
		ncco = append(ncco, vonageNCCOAction{Action: "talk", Text: a.Greeting})
	}
	body, err := json.Marshal(ncco)
	if err != nil { // strings and maps of strings always encode
		body = []byte("[]")
	}
	return "application/json", body
}

// vonageEvent is the part of an event (or answer) request we read. The
// human/machine event names the call call_uuid instead of uuid.
type vonageEvent struct {
	UUID             string   `json:"uuid"`
	CallUUID         string   `json:"call_uuid"`
	ConversationUUID string   `json:"conversation_uuid"`
	Status           string   `json:"status"`
	Duration         looseInt `json:"duration"`
}

// ParseStatus verifies an event webhook (see verifyVonage) and returns its
// status: uuid (or call_uuid), status mapped by vonageStates, duration. A
// forged, unsigned (when a signature secret is configured) or replayed
// event is ErrForged (wrapped); a verified one whose body is not a JSON
// event is another error. Vonage does not number its events: Sequence is 0.
func (v *vonage) ParseStatus(w Webhook) (Status, error) {
	ev, key, err := v.readVonage(w)
	if err != nil {
		return Status{}, fmt.Errorf("vonage event webhook: %w", err)
	}
	s := vonageStatus(ev.Status)
	s.ProviderCallID = ev.UUID
	if s.ProviderCallID == "" {
		s.ProviderCallID = ev.CallUUID
	}
	s.DurationSeconds = max(int(ev.Duration), 0)
	if key != "" {
		s.ReplayKeys = []string{key}
	}
	return s, nil
}

// VerifyAnswer verifies the answer request like an event. Vonage's answer
// request carries no machine verdict (that comes as a machine or human
// event), so the verdict returned is always "".
func (v *vonage) VerifyAnswer(w Webhook) (string, error) {
	if _, _, err := v.readVonage(w); err != nil {
		return "", fmt.Errorf("vonage answer webhook: %w", err)
	}
	return "", nil
}

// readVonage verifies w and decodes its event: the JSON body of a POST, or
// the query parameters of a GET (answer_method or event_method GET). It
// returns the request's replay key (Status.ReplayKeys), "" when unsigned.
func (v *vonage) readVonage(w Webhook) (vonageEvent, string, error) {
	var ev vonageEvent
	if w.Request == nil {
		return ev, "", fmt.Errorf("no request: %w", ErrForged)
	}
	key, err := v.verifyVonage(w)
	if err != nil {
		return ev, "", err
	}
	if w.Request.Method == http.MethodGet && len(w.Body) == 0 {
		q := w.Request.URL.Query()
		ev = vonageEvent{UUID: q.Get("uuid"), CallUUID: q.Get("call_uuid"),
			ConversationUUID: q.Get("conversation_uuid"), Status: q.Get("status")}
		if d, err := strconv.Atoi(q.Get("duration")); err == nil {
			ev.Duration = looseInt(d)
		}
		return ev, key, nil
	}
	if err := json.Unmarshal(w.Body, &ev); err != nil {
		return ev, "", errors.New("body is not a JSON event")
	}
	return ev, key, nil
}

// verifyVonage checks a webhook's authenticity.
//
// With a signature_secret configured, the request must carry
// "Authorization: Bearer <JWT>" as Vonage signs webhooks: HS256 keyed with
// the signature secret (vonageVerifyHS256), whose claims must hold
//
//   - iat within ±300 s of now (and now before exp, after nbf, with the same
//     tolerance, when present);
//   - api_key equal to the configuration's, and application_id equal to the
//     configuration's, each when present;
//   - payload_hash equal to the hex SHA-256 of the payload (see
//     vonagePayloadMatches);
//   - a jti, returned as the replay key (Status.ReplayKeys): the store
//     applies a status of one signed request once.
//
// Anything missing or different is ErrForged.
//
// Without a signature secret Vonage's signature cannot be checked: the event
// is accepted on the per-attempt URL token alone (which the dialer checks
// before calling the carrier).
func (v *vonage) verifyVonage(w Webhook) (replayKey string, err error) {
	if v.signatureSecret == "" {
		return "", nil
	}
	auth := w.Request.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(strings.TrimSpace(auth), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
		return "", fmt.Errorf("no bearer token: %w", ErrForged)
	}
	c, err := vonageVerifyHS256(strings.TrimSpace(tok), v.signatureSecret)
	if err != nil {
		return "", fmt.Errorf("%s: %w", err.Error(), ErrForged)
	}
	now := v.now()
	skew := vonageClockSkew.Seconds()
	t := float64(now.UnixNano()) / 1e9
	switch {
	case c.IssuedAt == nil:
		return "", fmt.Errorf("jwt has no iat: %w", ErrForged)
	case math.Abs(t-*c.IssuedAt) > skew:
		return "", fmt.Errorf("jwt iat is not within 300 s of now: %w", ErrForged)
	case c.ExpiresAt != nil && t > *c.ExpiresAt+skew:
		return "", fmt.Errorf("jwt has expired: %w", ErrForged)
	case c.NotBefore != nil && t < *c.NotBefore-skew:
		return "", fmt.Errorf("jwt is not valid yet: %w", ErrForged)
	case c.APIKey != "" && c.APIKey != v.apiKey:
		return "", fmt.Errorf("jwt api_key is another account's: %w", ErrForged)
	case c.ApplicationID != "" && c.ApplicationID != v.applicationID:
		return "", fmt.Errorf("jwt application_id is another application's: %w", ErrForged)
	case c.PayloadHash == "":
		return "", fmt.Errorf("jwt has no payload_hash: %w", ErrForged)
	case c.JTI == "":
		return "", fmt.Errorf("jwt has no jti: %w", ErrForged)
	}
	if !vonagePayloadMatches(w, c.PayloadHash) {
		return "", fmt.Errorf("payload_hash does not match the body: %w", ErrForged)
	}
	return "vonage\x00" + c.JTI, nil
}

// vonagePayloadMatches reports whether hash (hex, any case) is the SHA-256
// of the request's payload. Vonage hashes the JSON text of the payload with
// no whitespace between properties, in the order sent: for a POST the body
// (tried as received and, if it differs, compacted); for a GET the JSON
// object of the query parameters in the order they appear. For a GET the
// object is tried with every parameter and without our own "t" token that
// precedes Vonage's parameters (which of the two Vonage hashes is not
// documented; calls are placed with POST, so this path is a fallback).
func vonagePayloadMatches(w Webhook, hash string) bool {
	var payloads [][]byte
	if w.Request.Method == http.MethodGet && len(w.Body) == 0 {
		payloads = append(payloads, vonageQueryJSON(w.Request.URL.RawQuery, ""),
			vonageQueryJSON(w.Request.URL.RawQuery, "t"))
	} else {
		payloads = append(payloads, w.Body)
		var b bytes.Buffer
		if json.Compact(&b, w.Body) == nil && !bytes.Equal(b.Bytes(), w.Body) {
			payloads = append(payloads, b.Bytes())
		}
	}
	for _, p := range payloads {
		sum := sha256.Sum256(p)
		if strings.EqualFold(hash, hex.EncodeToString(sum[:])) {
			return true
		}
	}
	return false
}

// vonageJSONString writes s as a JSON string the way JavaScript's
// JSON.stringify does (no HTML escaping of <, > and &).
func vonageJSONString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)       // strings always encode
	b.Truncate(b.Len() - 1) // Encode's newline
}

// vonageQueryJSON is the JSON object of the query's parameters (string
// values) in the order they appear, without the parameter named skip; an
// undecodable parameter is left out.
func vonageQueryJSON(rawQuery, skip string) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	first := true
	for _, kv := range strings.Split(rawQuery, "&") {
		if kv == "" {
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		key, err1 := url.QueryUnescape(k)
		val, err2 := url.QueryUnescape(v)
		if err1 != nil || err2 != nil || key == skip {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		vonageJSONString(&b, key)
		b.WriteByte(':')
		vonageJSONString(&b, val)
	}
	b.WriteByte('}')
	return b.Bytes()
}
