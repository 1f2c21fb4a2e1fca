package carrier_test

import (
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/outdial/outdial/dialer/carrier"
	"github.com/outdial/outdial/dialer/carrier/twiliosim"
)

func twilioWith(t *testing.T, token string) carrier.Carrier {
	t.Helper()
	c, err := carrier.New(carrier.Twilio, map[string]any{"account_sid": testSID, "auth_token": token}, carrier.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// webhook builds a form POST to requestURL carrying sig (none when "").
func webhook(publicURL string, form url.Values, sig string) carrier.Webhook {
	body := form.Encode()
	r := httptest.NewRequest(http.MethodPost, "/hook", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if sig != "" {
		r.Header.Set("X-Twilio-Signature", sig)
	}
	return carrier.Webhook{Request: r, Body: []byte(body), PublicURL: publicURL}
}

// TestTwilioPublishedSignature checks the example of Twilio's webhook
// security documentation: auth token 12345, that URL and those parameters
// sign to 0/KCTR6DLpKmkAf8muzZqo1nDgQ=.
func TestTwilioPublishedSignature(t *testing.T) {
	const (
		u   = "https://mycompany.com/myapp.php?foo=1&bar=2"
		sig = "0/KCTR6DLpKmkAf8muzZqo1nDgQ="
	)
	form := url.Values{"CallSid": {"CA1234567890ABCDE"}, "Caller": {"+12349013030"}, "Digits": {"1234"},
		"From": {"+12349013030"}, "To": {"+18005551212"}}
	if got := twiliosim.Signature("12345", u, form); got != sig {
		t.Fatalf("twiliosim.Signature = %q, want %q", got, sig)
	}
	c := twilioWith(t, "12345")
	if _, err := c.VerifyAnswer(webhook(u, form, sig)); err != nil {
		t.Fatalf("VerifyAnswer of the published example: %v", err)
	}
	form.Set("Digits", "1235")
	if _, err := c.VerifyAnswer(webhook(u, form, sig)); !errors.Is(err, carrier.ErrForged) {
		t.Fatalf("VerifyAnswer of a tampered example = %v, want ErrForged", err)
	}
}

func TestTwilioSignatureChecks(t *testing.T) {
	const pub = "https://pub.example/api/v1/telephony/twilio/status/7?t=tok"
	form := url.Values{"CallSid": {"CA1"}, "CallStatus": {"ringing"}, "SequenceNumber": {"1"}}
	tests := []struct {
		name      string
		publicURL string // handed to ParseStatus
		signedURL string // signed by "Twilio"
		token     string
		form      url.Values
		noSig     bool
		ok        bool
	}{
		{"valid", pub, pub, testToken, form, false, true},
		{"missing header", pub, pub, testToken, form, true, false},
		{"wrong token", pub, pub, "other-token", form, false, false},
		{"other attempt url", pub, strings.Replace(pub, "/7?", "/8?", 1), testToken, form, false, false},
		{"other query token", pub, strings.Replace(pub, "t=tok", "t=tik", 1), testToken, form, false, false},
		{"signed with :443", pub, "https://pub.example:443/api/v1/telephony/twilio/status/7?t=tok", testToken, form, false, true},
		{"public with :443", "https://pub.example:443/api/v1/telephony/twilio/status/7?t=tok", pub, testToken, form, false, true},
		{"http signed with :80", "http://pub.example/s?t=1", "http://pub.example:80/s?t=1", testToken, form, false, true},
		{"http public with :80", "http://pub.example:80/s?t=1", "http://pub.example/s?t=1", testToken, form, false, true},
		{"other port is not default", "https://pub.example:8443/s", "https://pub.example/s", testToken, form, false, false},
		{"ipv6 with :443", "https://[::1]:443/s", "https://[::1]/s", testToken, form, false, true},
		{"non-default port kept", "http://127.0.0.1:8080/s?t=1", "http://127.0.0.1:8080/s?t=1", testToken, form, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sig := ""
			if !tt.noSig {
				sig = twiliosim.Signature(tt.token, tt.signedURL, tt.form)
			}
			_, err := twilioWith(t, testToken).ParseStatus(webhook(tt.publicURL, tt.form, sig))
			if tt.ok && err != nil {
				t.Fatalf("ParseStatus: %v", err)
			}
			if !tt.ok && !errors.Is(err, carrier.ErrForged) {
				t.Fatalf("ParseStatus = %v, want ErrForged", err)
			}
		})
	}
	t.Run("no request", func(t *testing.T) {
		if _, err := twilioWith(t, testToken).ParseStatus(carrier.Webhook{PublicURL: pub}); !errors.Is(err, carrier.ErrForged) {
			t.Fatalf("ParseStatus = %v, want ErrForged", err)
		}
	})
	t.Run("configuration without token", func(t *testing.T) {
		w := webhook(pub, form, twiliosim.Signature("", pub, form))
		if _, err := twilioWith(t, "").ParseStatus(w); !errors.Is(err, carrier.ErrForged) {
			t.Fatalf("ParseStatus = %v, want ErrForged", err)
		}
	})
	t.Run("extra parameter", func(t *testing.T) {
		sig := twiliosim.Signature(testToken, pub, form)
		f := url.Values{"AnsweredBy": {"human"}}
		for k, v := range form {
			f[k] = v
		}
		if _, err := twilioWith(t, testToken).ParseStatus(webhook(pub, f, sig)); !errors.Is(err, carrier.ErrForged) {
			t.Fatalf("ParseStatus = %v, want ErrForged", err)
		}
	})
}

func TestTwilioParseStatus(t *testing.T) {
	const pub = "https://pub.example/status/1?t=x"
	tests := []struct {
		form map[string]string
		want carrier.Status
	}{
		{map[string]string{"CallStatus": "initiated", "SequenceNumber": "0"}, carrier.Status{Raw: "initiated", Sequence: 1}},
		{map[string]string{"CallStatus": "ringing", "SequenceNumber": "1"}, carrier.Status{Raw: "ringing", Sequence: 2}},
		{map[string]string{"CallStatus": "in-progress", "SequenceNumber": "2", "AnsweredBy": "human"},
			carrier.Status{Raw: "in-progress", Answered: true, AnsweredBy: "human", Sequence: 3}},
		{map[string]string{"CallStatus": "completed", "SequenceNumber": "3", "CallDuration": "42"},
			carrier.Status{Raw: "completed", Answered: true, Final: true, Outcome: carrier.OutcomeAnswered, DurationSeconds: 42, Sequence: 4}},
		{map[string]string{"CallStatus": "completed", "AnsweredBy": "unknown"},
			carrier.Status{Raw: "completed", Answered: true, AnsweredBy: "unknown", Final: true, Outcome: carrier.OutcomeAnswered}},
		{map[string]string{"CallStatus": "completed", "AnsweredBy": "human"},
			carrier.Status{Raw: "completed", Answered: true, AnsweredBy: "human", Final: true, Outcome: carrier.OutcomeAnswered}},
		{map[string]string{"CallStatus": "completed", "AnsweredBy": "machine_start"},
			carrier.Status{Raw: "completed", Answered: true, AnsweredBy: "machine_start", Final: true, Outcome: carrier.OutcomeVoicemail}},
		{map[string]string{"CallStatus": "completed", "AnsweredBy": "machine_end_beep"},
			carrier.Status{Raw: "completed", Answered: true, AnsweredBy: "machine_end_beep", Final: true, Outcome: carrier.OutcomeVoicemail}},
		{map[string]string{"CallStatus": "completed", "AnsweredBy": "fax"},
			carrier.Status{Raw: "completed", Answered: true, AnsweredBy: "fax", Final: true, Outcome: carrier.OutcomeVoicemail}},
		{map[string]string{"CallStatus": "busy", "CallDuration": "0"}, carrier.Status{Raw: "busy", Final: true, Outcome: carrier.OutcomeBusy}},
		{map[string]string{"CallStatus": "no-answer"}, carrier.Status{Raw: "no-answer", Final: true, Outcome: carrier.OutcomeNoAnswer}},
		{map[string]string{"CallStatus": "failed"}, carrier.Status{Raw: "failed", Final: true, Outcome: carrier.OutcomeFailed}},
		{map[string]string{"CallStatus": "canceled"}, carrier.Status{Raw: "canceled", Final: true, Outcome: carrier.OutcomeCanceled}},
		{map[string]string{"CallStatus": "queued"}, carrier.Status{Raw: "queued"}},
		{map[string]string{"CallStatus": "something-new"}, carrier.Status{Raw: "something-new"}},
	}
	c := twilioWith(t, testToken)
	for _, tt := range tests {
		form := url.Values{"CallSid": {"CA9"}, "AccountSid": {testSID}}
		for k, v := range tt.form {
			form.Set(k, v)
		}
		got, err := c.ParseStatus(webhook(pub, form, twiliosim.Signature(testToken, pub, form)))
		if err != nil {
			t.Fatalf("ParseStatus(%v): %v", tt.form, err)
		}
		tt.want.ProviderCallID = "CA9"
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseStatus(%v) = %+v, want %+v", tt.form, got, tt.want)
		}
	}
	form := url.Values{"CallSid": {"CA9"}}
	_, err := c.ParseStatus(webhook(pub, form, twiliosim.Signature(testToken, pub, form)))
	if err == nil || errors.Is(err, carrier.ErrForged) {
		t.Fatalf("ParseStatus without CallStatus = %v, want a non-forged error", err)
	}
}

func TestTwilioVerifyAnswer(t *testing.T) {
	const pub = "https://pub.example/answer/1?t=x"
	c := twilioWith(t, testToken)
	form := url.Values{"CallSid": {"CA9"}, "CallStatus": {"in-progress"}, "AnsweredBy": {"machine_start"}}
	got, err := c.VerifyAnswer(webhook(pub, form, twiliosim.Signature(testToken, pub, form)))
	if err != nil || got != "machine_start" {
		t.Fatalf("VerifyAnswer = %q, %v", got, err)
	}
	form.Del("AnsweredBy")
	if got, err := c.VerifyAnswer(webhook(pub, form, twiliosim.Signature(testToken, pub, form))); err != nil || got != "" {
		t.Fatalf("VerifyAnswer without AMD = %q, %v", got, err)
	}
	if _, err := c.VerifyAnswer(webhook(pub, form, "")); !errors.Is(err, carrier.ErrForged) {
		t.Fatalf("unsigned VerifyAnswer = %v, want ErrForged", err)
	}
}

// Opt-out values of the answer-markup tests: the token has the "-" and "_"
// a URL-safe base64 token may hold.
const (
	testOptOutToken = "tok-_9Zx"
	testOptOutURL   = "https://svc.example/api/v1/telephony/opt-out/42?t=tok-_9Zx"
	testEventsURL   = "https://svc.example/api/v1/telephony/agent/42?t=tok-_9Zx"
)

// optOutAnswer is an agent answer with the opt-out values and a context
// whose keys try to take the reserved parameter names.
func optOutAnswer(agentURL string) carrier.Answer {
	return carrier.Answer{AttemptID: 42, AgentURL: agentURL, OptOutToken: testOptOutToken, OptOutURL: testOptOutURL,
		AgentEventsURL: testEventsURL, Context: map[string]string{"opt_out_token": "spoof", "opt_out_url": "https://evil.example/",
			"attempt_id": "1", "token": "spoof", "agent_events_url": "https://evil.example/", "first_name": "Ann"}}
}

// optOutParams are the stream parameters of optOutAnswer.
var optOutParams = map[string]string{"attempt_id": "42", "opt_out_token": testOptOutToken, "token": testOptOutToken,
	"opt_out_url": testOptOutURL, "agent_events_url": testEventsURL, "first_name": "Ann"}

// streamParameters decodes TwiML (or Cloudonix CXML) and returns its
// <Connect><Stream>'s parameters by name (nil without a stream), failing
// the test on a name given twice.
func streamParameters(t *testing.T, body []byte) map[string]string {
	t.Helper()
	var r struct {
		Stream *struct {
			Params []struct {
				Name  string `xml:"name,attr"`
				Value string `xml:"value,attr"`
			} `xml:"Parameter"`
		} `xml:"Connect>Stream"`
	}
	if err := xml.Unmarshal(body, &r); err != nil {
		t.Fatalf("markup %s: %v", body, err)
	}
	if r.Stream == nil {
		return nil
	}
	params := map[string]string{}
	for _, p := range r.Stream.Params {
		if _, dup := params[p.Name]; dup {
			t.Fatalf("parameter %q given twice in %s", p.Name, body)
		}
		params[p.Name] = p.Value
	}
	return params
}

func TestTwilioAnswerMarkup(t *testing.T) {
	const decl = `<?xml version="1.0" encoding="UTF-8"?>`
	tests := []struct {
		name   string
		a      carrier.Answer
		want   string
		params map[string]string // the stream's parameters, decoded
	}{
		{"stream", carrier.Answer{AttemptID: 42, AgentURL: "wss://agent.example/ws?a=1&b=2",
			Context: map[string]string{"zeta": "z", "first_name": `Ann "<&>' O'Neil`, "attempt_id": "spoof"}},
			`<Response><Connect><Stream url="wss://agent.example/ws?a=1&amp;b=2">` +
				`<Parameter name="attempt_id" value="42"/>` +
				`<Parameter name="first_name" value="Ann &#34;&lt;&amp;&gt;&#39; O&#39;Neil"/>` +
				`<Parameter name="zeta" value="z"/></Stream></Connect></Response>`,
			map[string]string{"attempt_id": "42", "first_name": `Ann "<&>' O'Neil`, "zeta": "z"}},
		{"stream with opt-out", optOutAnswer("wss://agent.example/ws"),
			`<Response><Connect><Stream url="wss://agent.example/ws">` +
				`<Parameter name="attempt_id" value="42"/><Parameter name="opt_out_token" value="tok-_9Zx"/>` +
				`<Parameter name="token" value="tok-_9Zx"/>` +
				`<Parameter name="opt_out_url" value="https://svc.example/api/v1/telephony/opt-out/42?t=tok-_9Zx"/>` +
				`<Parameter name="agent_events_url" value="https://svc.example/api/v1/telephony/agent/42?t=tok-_9Zx"/>` +
				`<Parameter name="first_name" value="Ann"/></Stream></Connect></Response>`,
			optOutParams},
		{"stream without context", carrier.Answer{AttemptID: 1, AgentURL: "wss://a"},
			`<Response><Connect><Stream url="wss://a"><Parameter name="attempt_id" value="1"/></Stream></Connect></Response>`,
			map[string]string{"attempt_id": "1"}},
		{"greeting", carrier.Answer{AttemptID: 1, Greeting: "Hi Ann & <Bob>!\nBye"},
			`<Response><Say>Hi Ann &amp; &lt;Bob&gt;!&#xA;Bye</Say><Hangup/></Response>`, nil},
		{"no greeting", carrier.Answer{AttemptID: 1}, `<Response><Hangup/></Response>`, nil},
	}
	c := twilioWith(t, testToken)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ct, body := c.AnswerMarkup(tt.a)
			if ct != "text/xml" {
				t.Fatalf("content type = %q", ct)
			}
			if got := string(body); got != decl+tt.want {
				t.Fatalf("markup =\n%s\nwant\n%s", got, decl+tt.want)
			}
			d := xml.NewDecoder(strings.NewReader(string(body)))
			for {
				if _, err := d.Token(); err == io.EOF {
					break
				} else if err != nil {
					t.Fatalf("markup is not well-formed XML: %v", err)
				}
			}
			if got := streamParameters(t, body); !reflect.DeepEqual(got, tt.params) {
				t.Fatalf("stream parameters = %v, want %v", got, tt.params)
			}
		})
	}
	// The escaped values read back as given.
	_, body := c.AnswerMarkup(tests[0].a)
	var r struct {
		Stream struct {
			URL    string `xml:"url,attr"`
			Params []struct {
				Name  string `xml:"name,attr"`
				Value string `xml:"value,attr"`
			} `xml:"Parameter"`
		} `xml:"Connect>Stream"`
	}
	if err := xml.Unmarshal(body, &r); err != nil {
		t.Fatal(err)
	}
	if r.Stream.URL != "wss://agent.example/ws?a=1&b=2" || r.Stream.Params[1].Value != `Ann "<&>' O'Neil` {
		t.Fatalf("decoded = %+v", r.Stream)
	}
}
