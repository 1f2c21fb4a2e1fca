package telnyxsim_test

import (
	"net/http"
	"testing"

	"github.com/outdial/outdial/dialer/carrier/telnyxsim"
)

// TestSpeakVoiceAndServiceLevel: the speak command's voice must fit its
// service_level as Telnyx describes them (premium by default, voices named
// <Provider>.<Model>.<VoiceId>; male/female only with basic, which takes
// en-US text alone). A refusal is Telnyx's 422 error body with the field's
// pointer, and plays nothing.
func TestSpeakVoiceAndServiceLevel(t *testing.T) {
	tests := []struct {
		name    string
		body    map[string]any
		pointer string // "" when accepted
	}{
		{"female without service_level (premium by default)", map[string]any{"voice": "female", "language": "en-US"}, "/voice"},
		{"male with premium", map[string]any{"voice": "male", "service_level": "premium"}, "/voice"},
		{"female with basic", map[string]any{"voice": "female", "service_level": "basic", "language": "en-US", "payload_type": "text"}, ""},
		{"male with basic, no language", map[string]any{"voice": "male", "service_level": "basic"}, ""},
		{"basic with another language", map[string]any{"voice": "female", "service_level": "basic", "language": "de-DE"}, "/language"},
		{"basic with ssml", map[string]any{"voice": "female", "service_level": "basic", "payload_type": "ssml"}, "/payload_type"},
		{"basic with a provider voice", map[string]any{"voice": "AWS.Polly.Joanna", "service_level": "basic"}, "/voice"},
		{"premium provider voice", map[string]any{"voice": "AWS.Polly.Joanna-Neural"}, ""},
		{"premium provider alone", map[string]any{"voice": "Telnyx"}, ""},
		{"legacy Polly voice", map[string]any{"voice": "Polly.Brian", "service_level": "premium"}, ""},
		{"unknown service level", map[string]any{"voice": "female", "service_level": "standard"}, "/service_level"},
		{"no voice", map[string]any{"service_level": "basic"}, "/voice"},
	}
	s := telnyxsim.Start(telnyxsim.Config{Script: func(telnyxsim.CallInfo) telnyxsim.Script {
		return telnyxsim.Script{TalkDuration: telnyxsim.Never, SpeakDuration: telnyxsim.Never}
	}})
	defer s.Close()
	rc := newReceiver(t, s.PublicKey())
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id := dial(t, s, dialBody(rc, "+14155550123", nil))
			rc.waitFor(t, id, "call.answered")
			tc.body["payload"] = "Hello Ann"
			status, out := api(t, s, http.MethodPost, "/v2/calls/"+id+"/actions/speak", s.APIKey(), tc.body)
			rec, _ := s.Call(id)
			if tc.pointer == "" {
				if status != http.StatusOK || len(rec.Commands) != 1 {
					t.Fatalf("speak = %d %v, commands %+v; want 200 and the command played", status, out, rec.Commands)
				}
				return
			}
			errs, _ := out["errors"].([]any)
			if status != http.StatusUnprocessableEntity || len(errs) != 1 {
				t.Fatalf("speak = %d %v, want 422 with one error", status, out)
			}
			e, _ := errs[0].(map[string]any)
			src, _ := e["source"].(map[string]any)
			if e["code"] != "10015" || e["title"] != "Invalid value" || src["pointer"] != tc.pointer || e["detail"] == "" {
				t.Fatalf("error = %v, want code 10015 at %s", e, tc.pointer)
			}
			if len(rec.Commands) != 0 {
				t.Fatalf("a refused speak was played: %+v", rec.Commands)
			}
		})
	}
}
