package carrier

import (
	"net/url"
	"reflect"
	"testing"
)

// Opt-out values of the answer-markup tests: the token has the "-" and "_"
// a URL-safe base64 token may hold.
const (
	testOptOutToken = "tok-_9Zx"
	testOptOutURL   = "https://svc.example/api/v1/telephony/opt-out/42?t=tok-_9Zx"
	testEventsURL   = "https://svc.example/api/v1/telephony/agent/42?t=tok-_9Zx"
)

// optOutAnswer is an agent answer with the opt-out values and a context
// whose keys try to take the reserved parameter names (the same as the
// external tests' optOutAnswer).
func optOutAnswer(agentURL string) Answer {
	return Answer{AttemptID: 42, AgentURL: agentURL, OptOutToken: testOptOutToken, OptOutURL: testOptOutURL,
		AgentEventsURL: testEventsURL, Context: map[string]string{"opt_out_token": "spoof", "opt_out_url": "https://evil.example/",
			"attempt_id": "1", "token": "spoof", "agent_events_url": "https://evil.example/", "first_name": "Ann"}}
}

// optOutParams are the stream parameters of optOutAnswer.
var optOutParams = map[string]string{"attempt_id": "42", "opt_out_token": testOptOutToken, "token": testOptOutToken,
	"opt_out_url": testOptOutURL, "agent_events_url": testEventsURL, "first_name": "Ann"}

// queryParams returns a URL's query parameters by name, failing the test
// on a name given twice.
func queryParams(t *testing.T, raw string) map[string]string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("stream URL %q: %v", raw, err)
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		t.Fatalf("stream URL %q: %v", raw, err)
	}
	params := map[string]string{}
	for k, vs := range q {
		if len(vs) != 1 {
			t.Fatalf("stream URL %q: %s given %d times", raw, k, len(vs))
		}
		params[k] = vs[0]
	}
	return params
}

func TestStreamParams(t *testing.T) {
	spoof := map[string]string{"attempt_id": "1", "opt_out_token": "spoof", "opt_out_url": "https://evil.example/", "token": "spoof",
		"agent_events_url": "https://evil.example/", "b": "2", "a": "1"}
	tests := []struct {
		name string
		a    Answer
		want []streamParam
	}{
		{"all", Answer{AttemptID: 42, OptOutToken: testOptOutToken, OptOutURL: testOptOutURL, AgentEventsURL: testEventsURL, Context: spoof},
			[]streamParam{{"attempt_id", "42"}, {"opt_out_token", testOptOutToken}, {"token", testOptOutToken}, {"opt_out_url", testOptOutURL},
				{"agent_events_url", testEventsURL}, {"a", "1"}, {"b", "2"}}},
		{"no opt-out: the reserved names stay reserved", Answer{AttemptID: 7, Context: spoof},
			[]streamParam{{"attempt_id", "7"}, {"a", "1"}, {"b", "2"}}},
		{"token only", Answer{AttemptID: 7, OptOutToken: "t"},
			[]streamParam{{"attempt_id", "7"}, {"opt_out_token", "t"}, {"token", "t"}}},
		{"nothing else", Answer{AttemptID: 7}, []streamParam{{"attempt_id", "7"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := streamParams(tt.a); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("streamParams = %v, want %v", got, tt.want)
			}
		})
	}
}
