package telnyxsim

import "strings"

// speakArgs are the speak command's fields the simulator checks.
type speakArgs struct {
	Voice        string `json:"voice"`
	ServiceLevel string `json:"service_level"`
	Language     string `json:"language"`
	PayloadType  string `json:"payload_type"`
}

// premiumProviders are the speech providers a premium voice names first,
// in Telnyx's speak description: "<Provider>.<Model>.<VoiceId>" (AWS.Polly.
// Joanna, Azure.en-US-AvaNeural, ElevenLabs.<model>.<voice>,
// Telnyx.KokoroTTS.af, ...; the provider alone takes its defaults), and the
// older "Polly.<voice>" form.
var premiumProviders = map[string]bool{
	"AWS": true, "Polly": true, "Azure": true, "ElevenLabs": true, "Telnyx": true,
	"Minimax": true, "Rime": true, "Resemble": true, "xAI": true, "Humain": true,
}

// speakProblem checks a speak command's voice against its service_level as
// Telnyx's description of POST /v2/calls/{id}/actions/speak states them,
// and returns the error detail and JSON pointer of the first problem, or
// "" when there is none:
//
//   - service_level is basic or premium, premium when absent;
//   - with basic, voice is the speaker's gender (male or female), and only
//     the en-US language and the text payload type are allowed;
//   - with premium, voice names a speech provider's voice,
//     <Provider>.<Model>.<VoiceId>: "male" and "female" are not voices
//     there, so a speak that sends them without service_level basic is
//     refused (and a caller would hear nothing).
func speakProblem(a speakArgs) (detail, pointer string) {
	level := a.ServiceLevel
	if level == "" {
		level = "premium"
	}
	switch {
	case a.Voice == "":
		return "voice is required.", "/voice"
	case level != "basic" && level != "premium":
		return "service_level must be basic or premium.", "/service_level"
	case a.PayloadType != "" && a.PayloadType != "text" && a.PayloadType != "ssml":
		return "payload_type must be text or ssml.", "/payload_type"
	}
	if level == "basic" {
		switch {
		case a.Voice != "male" && a.Voice != "female":
			return "With service_level basic, voice must be male or female.", "/voice"
		case a.Language != "" && a.Language != "en-US":
			return "With service_level basic, only the en-US language is allowed.", "/language"
		case a.PayloadType == "ssml":
			return "With service_level basic, only the text payload type is allowed.", "/payload_type"
		}
		return "", ""
	}
	provider, _, _ := strings.Cut(a.Voice, ".")
	if !premiumProviders[provider] {
		return "With service_level premium, voice must be <Provider>.<Model>.<VoiceId> (e.g. AWS.Polly.Joanna); " +
			"male and female are voices of service_level basic.", "/voice"
	}
	return "", ""
}

// speakInvalid reports whether a has a problem (speakProblem), setting
// detail and pointer to it.
func speakInvalid(a speakArgs, detail, pointer *string) bool {
	*detail, *pointer = speakProblem(a)
	return *detail != ""
}
