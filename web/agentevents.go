package web

import (
	"net/http"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/outdial/outdial/store"
)

// The voice agent's events (API.md 19): the agent, which receives the
// attempt id, its webhook token and agent_events_url in its stream
// parameters, posts /api/v1/telephony/agent/{attempt_id}?t=<token> with
// {"event": "connected"|"first_audio"|"failed", "at"?: RFC 3339} when it
// connects, when its first audio reaches the callee, or when it fails.
//
// Routed before the router like the opt-out (tokenroutes.go).

// agentEventsRoute is the agent events route in httprouter syntax, as
// Routes lists it.
const agentEventsRoute = "/api/v1/telephony/agent/:attempt_id"

// agentEventsPrefix is agentEventsRoute up to its wildcard.
const agentEventsPrefix = "/api/v1/telephony/agent/"

// agentEvents are the event names the agent may report.
var agentEvents = []string{store.AgentConnected, store.AgentFirstAudio, store.AgentFailed}

// agentEvent records the agent's report and answers 204. The token is
// checked before anything but the id's form, so a wrong or missing token is 403 whether
// the attempt exists or not; a right token for an attempt that does not
// exist (its campaign was deleted) is 403 too (API.md 19), and both change
// nothing. A body that is not {"event": one of agentEvents, "at"?: RFC
// 3339} is 422. Repeats answer 204 and change nothing.
func (s *Server) agentEvent(w http.ResponseWriter, r *http.Request, ps httprouter.Params) error {
	if s.dialer == nil {
		return errStatus(http.StatusServiceUnavailable, "the dialer is not running")
	}
	// An id that is not an integer is 422, one out of range 404, as on
	// every route (pathID); any other id without its token is 403.
	id, err := pathID(ps, "attempt_id")
	if err != nil {
		return err
	}
	if !s.dialer.ValidToken(id, r.URL.Query().Get("t")) {
		return errStatus(http.StatusForbidden, "Forbidden")
	}
	obj, err := readJSONObject(r)
	if err != nil {
		return err
	}
	var p Problems
	f := fields{obj: obj, loc: []any{"body"}, p: &p}
	event, _, ok := f.String("event", true, false, 1, 32)
	if ok && !validAgentEvent(event) {
		p.Add([]any{"body", "event"}, "enum", "Input should be 'connected', 'first_audio' or 'failed'", event,
			map[string]any{"expected": "'connected', 'first_audio' or 'failed'"})
	}
	var reported *time.Time
	if raw, present, ok := f.String("at", false, true, 1, 64); present && ok && raw != "" {
		t, err := time.Parse(time.RFC3339Nano, raw)
		if err != nil {
			p.Add([]any{"body", "at"}, "datetime_from_date_parsing", "Input should be a valid datetime (RFC 3339)", raw, nil)
		} else {
			reported = &t
		}
	}
	if err := p.Err(); err != nil {
		return err
	}
	err = s.dialer.AgentEvent(r.Context(), id, event, reported)
	if store.ErrorCode(err) == store.ENOTFOUND {
		return errStatus(http.StatusForbidden, "Forbidden")
	}
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func validAgentEvent(e string) bool {
	for _, v := range agentEvents {
		if v == e {
			return true
		}
	}
	return false
}
