package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"
)

// agentPath is the agent events URL of attempt id with token tok ("" sends
// none).
func agentPath(id any, tok string) string {
	p := fmt.Sprintf("/api/v1/telephony/agent/%v", id)
	if tok != "" {
		p += "?t=" + url.QueryEscape(tok)
	}
	return p
}

// TestAgentEvents posts the agent's events: a wrong or missing token, or an
// unknown attempt, is 403 and records nothing; a malformed body is 422; the
// first report of each event counts and a repeat is 204 changing nothing.
func TestAgentEvents(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{engine: true})
	s := ce.setup(false)
	cid := ce.newCampaign(s, 2)
	calls := ce.calls(cid, "")
	if len(calls) != 2 || calls[0]["abandoned"] != nil || calls[0]["answer_to_first_audio_ms"] != nil {
		t.Fatalf("calls of a draft = %v, want abandoned and answer_to_first_audio_ms null", calls)
	}
	first, second := id(t, calls[0], "id"), id(t, calls[1], "id")
	body := rawBody(`{"event":"first_audio","at":"2026-11-28T10:00:01.250Z"}`)

	for name, path := range map[string]string{
		"no token":                agentPath(first, ""),
		"wrong token":             agentPath(first, "x"),
		"another attempt's token": agentPath(first, ce.token(second)),
		"an unknown attempt":      agentPath(999999, ce.token(999999)),
	} {
		wantDetail(t, ce.do(http.MethodPost, path, "", body), http.StatusForbidden, "Forbidden")
		a, err := ce.db.GetAttempt(t.Context(), first)
		if err != nil {
			t.Fatal(err)
		}
		if a.AgentFirstAudioAt != nil {
			t.Fatalf("%s: first audio recorded at %v", name, a.AgentFirstAudioAt)
		}
	}
	wantProblems(t, ce.do(http.MethodPost, agentPath("abc", "x"), "", body), "path.attempt_id int_parsing")

	tok := ce.token(first)
	for _, tc := range []struct {
		body string
		want []string
	}{
		{`{}`, []string{"body.event missing"}},
		{`{"event":"speaking"}`, []string{"body.event enum"}},
		{`{"event":7,"at":"yesterday"}`, []string{"body.event string_type", "body.at datetime_from_date_parsing"}},
		{`[1]`, []string{"body model_type"}},
		{`{"event":`, []string{"body.9 json_invalid"}},
	} {
		wantProblems(t, ce.do(http.MethodPost, agentPath(first, tok), "", rawBody(tc.body)), tc.want...)
	}

	wantStatus(t, ce.do(http.MethodPost, agentPath(first, tok), "", body), http.StatusNoContent)
	a, err := ce.db.GetAttempt(t.Context(), first)
	if err != nil || a.AgentFirstAudioAt == nil {
		t.Fatalf("first audio not recorded: %+v %v", a, err)
	}
	arrived := *a.AgentFirstAudioAt
	ce.clock.advance(5 * time.Second)
	wantStatus(t, ce.do(http.MethodPost, agentPath(first, tok), "", rawBody(`{"event":"first_audio"}`)), http.StatusNoContent)
	wantStatus(t, ce.do(http.MethodPost, agentPath(first, tok), "", rawBody(`{"event":"connected","extra":1}`)), http.StatusNoContent)
	a, err = ce.db.GetAttempt(t.Context(), first)
	if err != nil || !a.AgentFirstAudioAt.Equal(arrived) || a.AgentConnectedAt == nil || a.AgentFailedAt != nil {
		t.Fatalf("after a repeat: first audio %v (want %v), connected %v, failed %v, %v", a.AgentFirstAudioAt, arrived,
			a.AgentConnectedAt, a.AgentFailedAt, err)
	}

	r := ce.do(http.MethodGet, agentPath(first, tok), "", nil)
	wantDetail(t, r, http.StatusMethodNotAllowed, "Method Not Allowed")
	if allow := r.Header.Get("Allow"); allow != "OPTIONS, POST" {
		t.Fatalf("Allow = %q", allow)
	}
}
