package carrier_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer/carrier"
	"github.com/outdial/outdial/dialer/carrier/cloudonixsim"
)

// cloudonixHook is a webhook as the web layer hands it over.
func cloudonixHook(method, target, contentType, body string) carrier.Webhook {
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	return carrier.Webhook{Request: r, Body: []byte(body), PublicURL: target}
}

const cloudonixStatusURL = "https://pub.example/api/v1/telephony/cloudonix/status/7?t=tok"

func TestCloudonixStatusMapping(t *testing.T) {
	c := cloudonixNewCarrier(t, "http://unused", nil)
	answered := `"callAnswerTime":1700000000000,"callEndTime":1700000012600`
	unanswered := `"callAnswerTime":null,"callEndTime":1700000012600`
	tests := []struct {
		name, body string
		want       carrier.Status
	}{
		// Session updates (JSON Session model).
		{"new", `{"token":"s1","status":"new"}`, carrier.Status{ProviderCallID: "s1", Raw: "new"}},
		{"ringing", `{"token":"s1","status":"ringing","callAnswerTime":null}`, carrier.Status{ProviderCallID: "s1", Raw: "ringing"}},
		{"processing", `{"token":"s1","status":"processing"}`, carrier.Status{ProviderCallID: "s1", Raw: "processing"}},
		{"processing after answer", `{"token":"s1","status":"processing","callAnswerTime":1700000000000}`,
			carrier.Status{ProviderCallID: "s1", Raw: "processing", Answered: true}},
		{"connected", `{"token":"s1","status":"connected"}`, carrier.Status{ProviderCallID: "s1", Raw: "connected", Answered: true}},
		{"answer upper case", `{"token":"s1","status":"ANSWER"}`, carrier.Status{ProviderCallID: "s1", Raw: "ANSWER", Answered: true}},
		{"completed", `{"token":"s1","status":"completed",` + answered + `}`,
			carrier.Status{ProviderCallID: "s1", Raw: "completed", Answered: true, Final: true, Outcome: "answered", DurationSeconds: 13}},
		{"completed iso times", `{"token":"s1","status":"ended","answerTime":"2026-03-01T12:00:00Z","endTime":"2026-03-01T12:01:00.2Z"}`,
			carrier.Status{ProviderCallID: "s1", Raw: "ended", Answered: true, Final: true, Outcome: "answered", DurationSeconds: 60}},
		{"completed never answered", `{"token":"s1","status":"completed",` + unanswered + `}`,
			carrier.Status{ProviderCallID: "s1", Raw: "completed", Final: true, Outcome: "no_answer"}},
		{"busy", `{"token":"s1","status":"busy",` + unanswered + `}`, carrier.Status{ProviderCallID: "s1", Raw: "busy", Final: true, Outcome: "busy"}},
		{"noanswer", `{"token":"s1","status":"noanswer"}`, carrier.Status{ProviderCallID: "s1", Raw: "noanswer", Final: true, Outcome: "no_answer"}},
		{"cancel", `{"token":"s1","status":"cancel"}`, carrier.Status{ProviderCallID: "s1", Raw: "cancel", Final: true, Outcome: "canceled"}},
		{"nocredit", `{"token":"s1","status":"nocredit"}`, carrier.Status{ProviderCallID: "s1", Raw: "nocredit", Final: true, Outcome: "failed"}},
		{"congestion", `{"token":"s1","status":"congestion"}`, carrier.Status{ProviderCallID: "s1", Raw: "congestion", Final: true, Outcome: "failed"}},
		{"error", `{"token":"s1","status":"error"}`, carrier.Status{ProviderCallID: "s1", Raw: "error", Final: true, Outcome: "failed"}},
		{"unknown status", `{"token":"s1","status":"transferring"}`, carrier.Status{ProviderCallID: "s1", Raw: "transferring"}},
		{"one-element list", `[{"token":"s1","status":"busy"}]`, carrier.Status{ProviderCallID: "s1", Raw: "busy", Final: true, Outcome: "busy"}},
		// Voice-application style parameters (CallStatus), JSON and form.
		{"CallStatus in-progress", `{"CallSid":"s1","Session":"s1","CallStatus":"in-progress"}`,
			carrier.Status{ProviderCallID: "s1", Raw: "in-progress", Answered: true}},
		{"CallStatus completed", `{"CallSid":"s1","CallStatus":"completed","CallDuration":"21"}`,
			carrier.Status{ProviderCallID: "s1", Raw: "completed", Answered: true, Final: true, Outcome: "answered", DurationSeconds: 21}},
		{"CallStatus no-answer form", `CallSid=s1&CallStatus=no-answer`,
			carrier.Status{ProviderCallID: "s1", Raw: "no-answer", Final: true, Outcome: "no_answer"}},
		{"CallStatus canceled", `{"Session":"s1","CallStatus":"canceled"}`, carrier.Status{ProviderCallID: "s1", Raw: "canceled", Final: true, Outcome: "canceled"}},
		{"CallStatus failed", `{"Session":"s1","CallStatus":"failed"}`, carrier.Status{ProviderCallID: "s1", Raw: "failed", Final: true, Outcome: "failed"}},
		{"CallStatus unknown", `{"Session":"s1","CallStatus":"unknown"}`, carrier.Status{ProviderCallID: "s1", Raw: "unknown"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ct := "application/json"
			if !strings.HasPrefix(tt.body, "{") && !strings.HasPrefix(tt.body, "[") {
				ct = "application/x-www-form-urlencoded"
			}
			got, err := c.ParseStatus(cloudonixHook(http.MethodPost, cloudonixStatusURL, ct, tt.body))
			if err != nil {
				t.Fatalf("ParseStatus: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("ParseStatus = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestCloudonixStatusRefused(t *testing.T) {
	byName := cloudonixNewCarrier(t, "http://unused", nil)
	byID := cloudonixNewCarrier(t, "http://unused", map[string]any{"bearer_token": "k", "domain_id": "3"})
	tests := []struct {
		name   string
		c      carrier.Carrier
		body   string
		forged bool
	}{
		{"empty", byName, ``, true},
		{"not json", byName, `{"token":`, true},
		{"list of two", byName, `[{"token":"a","status":"busy"},{"token":"b","status":"busy"}]`, true},
		{"array of strings", byName, `["busy"]`, true},
		{"no session", byName, `{"status":"busy"}`, true},
		{"other domain name", byName, `{"token":"s1","status":"busy","domain":"evil.cloudonix.net"}`, true},
		{"other domain object", byName, `{"token":"s1","status":"busy","domain":{"id":3,"domain":"evil"}}`, true},
		{"other AccountSid", byName, `{"CallSid":"s1","CallStatus":"busy","AccountSid":"evil.cloudonix.net"}`, true},
		{"other domain id", byID, `{"token":"s1","status":"busy","domainId":4}`, true},
		{"no status", byName, `{"token":"s1"}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.c.ParseStatus(cloudonixHook(http.MethodPost, cloudonixStatusURL, "application/json", tt.body))
			if err == nil || errors.Is(err, carrier.ErrForged) != tt.forged {
				t.Fatalf("ParseStatus = %v, want forged %v", err, tt.forged)
			}
		})
	}
	// The same domain in its other spellings is accepted.
	for _, body := range []string{
		`{"token":"s1","status":"busy","domain":"ACME"}`,
		`{"token":"s1","status":"busy","domain":{"id":3,"domain":"acme.cloudonix.net"},"domainId":3}`,
		`{"CallSid":"s1","CallStatus":"busy","AccountSid":"acme.cloudonix.net"}`,
	} {
		if _, err := byName.ParseStatus(cloudonixHook(http.MethodPost, cloudonixStatusURL, "application/json", body)); err != nil {
			t.Fatalf("ParseStatus(%s) = %v", body, err)
		}
	}
	if _, err := byID.ParseStatus(cloudonixHook(http.MethodPost, cloudonixStatusURL, "application/json", `{"token":"s1","status":"busy","domain":"any-name","domainId":3}`)); err != nil {
		t.Fatalf("ParseStatus by id = %v", err)
	}
}

func TestCloudonixVerifyAnswer(t *testing.T) {
	c := cloudonixNewCarrier(t, "http://unused", nil)
	answerURL := "https://pub.example/api/v1/telephony/cloudonix/answer/7?t=tok"
	ok := []carrier.Webhook{
		cloudonixHook(http.MethodPost, answerURL, "application/json",
			`{"CallSid":"s1","Session":"s1","AccountSid":"acme.cloudonix.net","From":"+14155550100","To":"+14155550123","Direction":"outbound-api","SessionData":{"token":"s1"}}`),
		cloudonixHook(http.MethodPost, answerURL, "application/x-www-form-urlencoded", `CallSid=s1&Direction=outbound-api`),
		cloudonixHook(http.MethodGet, answerURL+"&CallSid=s1&AccountSid=acme&Direction=outbound-api", "", ""),
	}
	for i, w := range ok {
		if by, err := c.VerifyAnswer(w); err != nil || by != "" {
			t.Fatalf("VerifyAnswer #%d = %q, %v", i, by, err)
		}
	}
	bad := []carrier.Webhook{
		cloudonixHook(http.MethodGet, answerURL, "", ""),
		cloudonixHook(http.MethodPost, answerURL, "application/json", `{"From":"+14155550100"}`),
		cloudonixHook(http.MethodPost, answerURL, "application/json", `{"CallSid":"s1","AccountSid":"evil.cloudonix.net"}`),
		cloudonixHook(http.MethodPost, answerURL, "application/json", `not json{`),
	}
	for i, w := range bad {
		if _, err := c.VerifyAnswer(w); !errors.Is(err, carrier.ErrForged) {
			t.Fatalf("VerifyAnswer bad #%d = %v, want ErrForged", i, err)
		}
	}
}

func TestCloudonixAnswerMarkup(t *testing.T) {
	c := cloudonixNewCarrier(t, "http://unused", nil)
	const head = `<?xml version="1.0" encoding="UTF-8"?>`
	tests := []struct {
		name   string
		a      carrier.Answer
		want   string
		params map[string]string // the stream's parameters, decoded
	}{
		{"agent", carrier.Answer{AttemptID: 42, AgentURL: "wss://agent.example/ws?a=1&b=2",
			Context: map[string]string{"first_name": `Zoë "Z" <x>`, "attempt_id": "spoof", "account": "A&B"}},
			head + `<Response><Connect><Stream url="wss://agent.example/ws?a=1&amp;b=2">` +
				`<Parameter name="attempt_id" value="42"/><Parameter name="account" value="A&amp;B"/>` +
				`<Parameter name="first_name" value="Zoë &#34;Z&#34; &lt;x&gt;"/></Stream></Connect><Hangup/></Response>`,
			map[string]string{"attempt_id": "42", "account": "A&B", "first_name": `Zoë "Z" <x>`}},
		{"agent with opt-out", optOutAnswer("wss://agent.example/ws"),
			head + `<Response><Connect><Stream url="wss://agent.example/ws">` +
				`<Parameter name="attempt_id" value="42"/><Parameter name="opt_out_token" value="tok-_9Zx"/>` +
				`<Parameter name="token" value="tok-_9Zx"/>` +
				`<Parameter name="opt_out_url" value="https://svc.example/api/v1/telephony/opt-out/42?t=tok-_9Zx"/>` +
				`<Parameter name="agent_events_url" value="https://svc.example/api/v1/telephony/agent/42?t=tok-_9Zx"/>` +
				`<Parameter name="first_name" value="Ann"/></Stream></Connect><Hangup/></Response>`,
			optOutParams},
		{"agent without context", carrier.Answer{AttemptID: 1, AgentURL: "wss://a/ws"},
			head + `<Response><Connect><Stream url="wss://a/ws"><Parameter name="attempt_id" value="1"/></Stream></Connect><Hangup/></Response>`,
			map[string]string{"attempt_id": "1"}},
		{"greeting", carrier.Answer{AttemptID: 1, Greeting: "Hello <Ann> & co"},
			head + `<Response><Say>Hello &lt;Ann&gt; &amp; co</Say><Hangup/></Response>`, nil},
		{"nothing", carrier.Answer{AttemptID: 1}, head + `<Response><Hangup/></Response>`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ct, body := c.AnswerMarkup(tt.a)
			if ct != "text/xml" || string(body) != tt.want {
				t.Fatalf("AnswerMarkup = %s %s\nwant %s", ct, body, tt.want)
			}
			if got := streamParameters(t, body); !reflect.DeepEqual(got, tt.params) {
				t.Fatalf("stream parameters = %v, want %v", got, tt.params)
			}
		})
	}
}

// TestCloudonixThroughSimulator places calls through the simulator and
// parses every session update and voice-application request it sends, as
// the service does.
func TestCloudonixThroughSimulator(t *testing.T) {
	var c carrier.Carrier
	var mu sync.Mutex
	finals := map[string]carrier.Status{}
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		hook := carrier.Webhook{Request: r, Body: body, PublicURL: "http://" + r.Host + r.URL.RequestURI()}
		if strings.HasPrefix(r.URL.Path, "/answer") {
			if _, err := c.VerifyAnswer(hook); err != nil {
				t.Errorf("VerifyAnswer: %v", err)
			}
			ct, body := c.AnswerMarkup(carrier.Answer{AttemptID: 1, Greeting: "hi"})
			w.Header().Set("Content-Type", ct)
			w.Write(body)
			return
		}
		st, err := c.ParseStatus(hook)
		if err != nil {
			t.Errorf("ParseStatus: %v", err)
		}
		if st.Final {
			mu.Lock()
			finals[st.ProviderCallID] = st
			mu.Unlock()
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer svc.Close()
	sim := cloudonixsim.Start(cloudonixsim.Config{Script: func(ci cloudonixsim.CallInfo) cloudonixsim.Script {
		if ci.To == "+14155550001" {
			return cloudonixsim.Script{Outcome: cloudonixsim.Busy}
		}
		return cloudonixsim.Script{TalkDuration: 5 * time.Millisecond}
	}})
	defer sim.Close()
	c = cloudonixNewCarrier(t, sim.URL(), sim.Credentials(""))
	tokens := map[string]string{}
	for _, to := range []string{"+14155550001", "+14155550002"} {
		p, err := c.Place(context.Background(), carrier.Call{AttemptID: 1, To: to, From: "+14155550100",
			AnswerURL: svc.URL + "/answer/1?t=x", StatusURL: svc.URL + "/status/1?t=x", TimeLimit: time.Minute})
		if err != nil {
			t.Fatalf("Place: %v", err)
		}
		tokens[to] = p.ProviderCallID
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := sim.WaitFinal(ctx, 2); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if st := finals[tokens["+14155550001"]]; st.Outcome != "busy" {
		t.Fatalf("busy call final = %+v", st)
	}
	if st := finals[tokens["+14155550002"]]; st.Outcome != "answered" || !st.Answered {
		t.Fatalf("answered call final = %+v", st)
	}
	rec, _ := sim.Call(tokens["+14155550002"])
	if rec.CXML != `<?xml version="1.0" encoding="UTF-8"?><Response><Say>hi</Say><Hangup/></Response>` {
		t.Fatalf("CXML = %s", rec.CXML)
	}
	if rec.Request.Profile["outdial-attempt-id"] != "1" || rec.Request.TimeLimit == nil || *rec.Request.TimeLimit != 60 {
		t.Fatalf("request = %+v", rec.Request)
	}
	// Query and HangUp against the simulator.
	if st, err := c.Query(context.Background(), tokens["+14155550002"]); err != nil || st.Outcome != "answered" {
		t.Fatalf("Query = %+v, %v", st, err)
	}
	if err := c.HangUp(context.Background(), tokens["+14155550002"]); err != nil {
		t.Fatalf("HangUp of an ended call = %v", err)
	}
}
