package carrier

import (
	"sort"
	"strconv"
)

// The names under which every carrier hands the voice agent the answer's
// own values, beside the contact's context (API.md 6, 12.4 and 19). They
// are reserved: a Context key with one of these names is left out, so a
// contact's column can never stand in for the attempt id, its webhook
// token or the URLs the agent posts to.
const (
	paramAttemptID      = "attempt_id"
	paramOptOutToken    = "opt_out_token"
	paramToken          = "token"
	paramOptOutURL      = "opt_out_url"
	paramAgentEventsURL = "agent_events_url"
)

// streamParam is one name and value the voice agent receives with the
// media stream.
type streamParam struct {
	name, value string
}

// streamParams returns what the voice agent receives with a's media
// stream, in this order: attempt_id; opt_out_token and token (the same
// webhook token, under the opt-out's name and API.md 19's), opt_out_url and
// agent_events_url, each only when set; then every Context key but the
// reserved ones, sorted, with its value. Names are unique.
func streamParams(a Answer) []streamParam {
	keys := contextKeys(a)
	ps := make([]streamParam, 0, len(keys)+5)
	ps = append(ps, streamParam{paramAttemptID, strconv.FormatInt(a.AttemptID, 10)})
	if a.OptOutToken != "" {
		ps = append(ps, streamParam{paramOptOutToken, a.OptOutToken}, streamParam{paramToken, a.OptOutToken})
	}
	if a.OptOutURL != "" {
		ps = append(ps, streamParam{paramOptOutURL, a.OptOutURL})
	}
	if a.AgentEventsURL != "" {
		ps = append(ps, streamParam{paramAgentEventsURL, a.AgentEventsURL})
	}
	for _, k := range keys {
		ps = append(ps, streamParam{k, a.Context[k]})
	}
	return ps
}

// contextKeys returns a's Context keys but the reserved parameter names,
// sorted.
func contextKeys(a Answer) []string {
	keys := make([]string, 0, len(a.Context))
	for k := range a.Context {
		switch k {
		case paramAttemptID, paramOptOutToken, paramToken, paramOptOutURL, paramAgentEventsURL:
		default:
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}
