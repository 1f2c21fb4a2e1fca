package carrier

// Plivo and Vobiz call statuses: the one table mapping them to outcomes,
// the machine-detection verdict, and the call resources a status query
// reads (live call, call detail record, queued call).

import (
	"strings"
)

// plivoState is one row of the status table.
type plivoState struct {
	final    bool
	answered bool
	outcome  string
}

// plivoStates maps the CallStatus of Plivo and Vobiz callbacks (and the
// call_status of their live and queued call resources) to ours; this is the
// only place that does:
//
//	queued, ringing  → not final
//	in-progress      → not final, Answered
//	completed        → final answered, Answered (voicemail once a machine
//	                   verdict was recorded for the attempt)
//	busy             → final busy
//	no-answer        → final no_answer
//	timeout          → final no_answer
//	cancel           → final canceled
//	failed           → final failed
//
// A status not in the table is kept in Raw and treated as not final, so the
// attempt finishes by a later event, a query or its deadline.
var plivoStates = map[string]plivoState{
	"queued":      {},
	"ringing":     {},
	"in-progress": {answered: true},
	"completed":   {final: true, answered: true, outcome: OutcomeAnswered},
	"busy":        {final: true, outcome: OutcomeBusy},
	"no-answer":   {final: true, outcome: OutcomeNoAnswer},
	"timeout":     {final: true, outcome: OutcomeNoAnswer},
	"cancel":      {final: true, outcome: OutcomeCanceled},
	"failed":      {final: true, outcome: OutcomeFailed},
}

// plivoStatus maps a raw status and a normalised machine verdict.
func plivoStatus(raw, answeredBy string) Status {
	st := plivoStates[raw]
	s := Status{Raw: raw, AnsweredBy: answeredBy, Answered: st.answered, Final: st.final, Outcome: st.outcome}
	if s.Outcome == OutcomeAnswered && IsMachine(answeredBy) {
		s.Outcome = OutcomeVoicemail
	}
	return s
}

// plivoAnsweredBy normalises the Machine parameter of an asynchronous
// machine-detection callback: "true" is "machine", "false" "human"; absent
// or anything else is "" (no verdict).
func plivoAnsweredBy(machine string) string {
	switch strings.ToLower(strings.TrimSpace(machine)) {
	case "true":
		return "machine"
	case "false":
		return "human"
	}
	return ""
}

// plivoLiveCall is the live call resource (GET .../Call/{id}/?status=live).
// Vobiz documents both this flat form and one wrapping the call in "calls".
type plivoLiveCall struct {
	CallStatus  string `json:"call_status"`
	CallUUID    string `json:"call_uuid"`
	RequestUUID string `json:"request_uuid"`
	Calls       []struct {
		CallState string `json:"call_state"`
		CallUUID  string `json:"call_uuid"`
	} `json:"calls"`
}

// status is the live call's status: never final. A live call without a
// call_status is in progress.
func (l plivoLiveCall) status(id string) Status {
	raw, uuid := l.CallStatus, l.CallUUID
	if len(l.Calls) > 0 && uuid == "" {
		uuid = l.Calls[0].CallUUID
	}
	if raw == "" {
		raw = "in-progress"
	}
	s := plivoStatus(raw, "")
	s.Final, s.Outcome = false, "" // a live call is not over, whatever it says
	s.ProviderCallID = plivoFirst(uuid, id)
	if l.RequestUUID != "" && l.RequestUUID != s.ProviderCallID {
		s.RequestID = l.RequestUUID
	}
	return s
}

// plivoQueuedCall is a queued call request (GET
// .../Call/{request_uuid}/?status=queued).
type plivoQueuedCall struct {
	CallStatus  string `json:"call_status"`
	CallUUID    string `json:"call_uuid"`
	RequestUUID string `json:"request_uuid"`
}

// status is the queued call's status: not final.
func (q plivoQueuedCall) status(id string) Status {
	s := plivoStatus("queued", "")
	if q.CallStatus != "" && !plivoStates[q.CallStatus].final {
		s = plivoStatus(q.CallStatus, "")
	}
	s.ProviderCallID = plivoFirst(q.CallUUID, q.RequestUUID, id)
	return s
}

// plivoCDR is the call detail record of an ended call (GET
// .../Call/{call_uuid}/), the fields we read.
type plivoCDR struct {
	CallUUID        string     `json:"call_uuid"`
	CallState       nullString `json:"call_state"`
	AnswerTime      nullString `json:"answer_time"`
	CallDuration    looseInt   `json:"call_duration"`
	BillDuration    looseInt   `json:"bill_duration"`
	HangupCauseCode looseInt   `json:"hangup_cause_code"`
	HangupCauseName nullString `json:"hangup_cause_name"`
}

// status is the record's final status. A CDR has no CallStatus, so one is
// derived (plivoCDRRaw) and mapped by plivoStates like a callback's; the
// duration is call_duration, else bill_duration.
func (r plivoCDR) status(id string) Status {
	s := plivoStatus(r.raw(), "")
	s.ProviderCallID = plivoFirst(r.CallUUID, id)
	s.DurationSeconds = int(r.CallDuration)
	if s.DurationSeconds <= 0 {
		s.DurationSeconds = max(int(r.BillDuration), 0)
	}
	return s
}

// raw derives a CallStatus from a CDR:
//
//   - answered (an answer_time, call_state ANSWER or a billed duration):
//     completed;
//   - else from call_state or the hangup cause: 1000 (Canceled, via the
//     API) → cancel, the rest of the 1000s (out of credits, simultaneous
//     dial limit) → failed; a cause or state naming a cancel → cancel, one
//     naming busy → busy, one naming no answer or a ring timeout →
//     no-answer;
//   - anything else (invalid or barred destination, carrier and network
//     errors, out of credits) → failed.
func (r plivoCDR) raw() string {
	state := strings.ToUpper(string(r.CallState))
	if r.AnswerTime != "" || state == "ANSWER" || state == "ANSWERED" || r.BillDuration > 0 {
		return "completed"
	}
	words := strings.ToLower(state + " " + string(r.HangupCauseName))
	words = strings.NewReplacer("_", " ", "-", " ").Replace(words)
	switch {
	case r.HangupCauseCode == 1000:
		return "cancel"
	case r.HangupCauseCode > 1000 && r.HangupCauseCode < 2000:
		return "failed" // out of credits, simultaneous dial limit
	case strings.Contains(words, "cancel"):
		return "cancel"
	case strings.Contains(words, "busy"):
		return "busy"
	case strings.Contains(words, "no answer") || strings.Contains(words, "noanswer") ||
		strings.Contains(words, "timeout") || strings.Contains(words, "unanswered"):
		return "no-answer"
	}
	return "failed"
}

// plivoFirst returns the first of vs that is not "".
func plivoFirst(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}
