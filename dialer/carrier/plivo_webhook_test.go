package carrier

import (
	"encoding/xml"
	"errors"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/outdial/outdial/dialer/carrier/plivosim"
)

const plivoHookURL = "https://svc.example/api/v1/telephony/plivo/status/42?t=tok"

// plivoHook is a webhook POSTed to rawURL with form, its headers set by
// sign (the simulator's independent signing code in the tests below).
func plivoHook(rawURL string, form url.Values, h http.Header) Webhook {
	req, _ := http.NewRequest(http.MethodPost, rawURL, strings.NewReader(form.Encode()))
	req.Header = h
	return Webhook{Request: req, Body: []byte(form.Encode()), PublicURL: rawURL}
}

// plivoSigned is a Plivo-signed webhook (token, fresh nonce).
func plivoSigned(token, rawURL string, form url.Values) Webhook {
	n := plivosim.Nonce()
	return plivoHook(rawURL, form, http.Header{
		"X-Plivo-Signature-V3":       {plivosim.SignatureV3(token, rawURL, http.MethodPost, n, form)},
		"X-Plivo-Signature-V3-Nonce": {n},
	})
}

// vobizSigned is a Vobiz-signed webhook with V3 and V2 signatures.
func vobizSigned(token, rawURL string, form url.Values) Webhook {
	n3, n2 := plivosim.Nonce(), plivosim.Nonce()
	return plivoHook(rawURL, form, http.Header{
		"X-Vobiz-Signature-V3":       {plivosim.VobizSignature(token, rawURL, n3, true)},
		"X-Vobiz-Signature-V3-Nonce": {n3},
		"X-Vobiz-Signature-V2":       {plivosim.VobizSignature(token, rawURL, n2, false)},
		"X-Vobiz-Signature-V2-Nonce": {n2},
	})
}

func plivoForm(kv ...string) url.Values {
	f := url.Values{"CallUUID": {"cu-1"}, "RequestUUID": {"rq-1"}, "From": {"14155550100"}, "To": {"14155550123"}, "Direction": {"outbound"}}
	for i := 0; i+1 < len(kv); i += 2 {
		f.Set(kv[i], kv[i+1])
	}
	return f
}

func TestPlivoParseStatusMapping(t *testing.T) {
	c := plivoTestCarrier(t, Plivo, "http://unused", nil)
	for _, tc := range []struct {
		form url.Values
		want Status
	}{
		{plivoForm("CallStatus", "ringing", "Event", "Ring"), Status{Raw: "ringing"}},
		{plivoForm("CallStatus", "in-progress"), Status{Raw: "in-progress", Answered: true}},
		{plivoForm("CallStatus", "completed", "Duration", "17", "BillDuration", "18"),
			Status{Raw: "completed", Answered: true, Final: true, Outcome: OutcomeAnswered, DurationSeconds: 17}},
		{plivoForm("CallStatus", "completed", "BillDuration", "9"),
			Status{Raw: "completed", Answered: true, Final: true, Outcome: OutcomeAnswered, DurationSeconds: 9}},
		{plivoForm("CallStatus", "busy"), Status{Raw: "busy", Final: true, Outcome: OutcomeBusy}},
		{plivoForm("CallStatus", "no-answer"), Status{Raw: "no-answer", Final: true, Outcome: OutcomeNoAnswer}},
		{plivoForm("CallStatus", "timeout"), Status{Raw: "timeout", Final: true, Outcome: OutcomeNoAnswer}},
		{plivoForm("CallStatus", "cancel"), Status{Raw: "cancel", Final: true, Outcome: OutcomeCanceled}},
		{plivoForm("CallStatus", "failed"), Status{Raw: "failed", Final: true, Outcome: OutcomeFailed}},
		{plivoForm("CallStatus", "in-progress", "Event", "MachineDetection", "Machine", "true"),
			Status{Raw: "in-progress", Answered: true, AnsweredBy: "machine"}},
		{plivoForm("CallStatus", "in-progress", "Event", "MachineDetection", "Machine", "false"),
			Status{Raw: "in-progress", Answered: true, AnsweredBy: "human"}},
		{plivoForm("Event", "MachineDetection", "Machine", "true"),
			Status{Raw: "in-progress", Answered: true, AnsweredBy: "machine"}},
		{plivoForm("CallStatus", "something-new"), Status{Raw: "something-new"}},
	} {
		got, err := c.ParseStatus(plivoSigned("secret-token", plivoHookURL, tc.form))
		if err != nil {
			t.Fatalf("%v: %v", tc.form, err)
		}
		tc.want.ProviderCallID, tc.want.RequestID = "cu-1", "rq-1"
		if !reflect.DeepEqual(withoutReplayKeys(got), tc.want) {
			t.Fatalf("%s\n got %+v\nwant %+v", tc.form.Get("CallStatus"), got, tc.want)
		}
	}
	// Vobiz names the call by one id: no RequestID.
	v := plivoTestCarrier(t, Vobiz, "http://unused", nil)
	got, err := v.ParseStatus(vobizSigned("secret-token", plivoHookURL, plivoForm("CallStatus", "busy", "RequestUUID", "cu-1")))
	if err != nil || got.ProviderCallID != "cu-1" || got.RequestID != "" || got.Outcome != OutcomeBusy {
		t.Fatalf("vobiz status %+v, %v", got, err)
	}
	if _, err := c.ParseStatus(plivoSigned("secret-token", plivoHookURL, plivoForm())); err == nil || errors.Is(err, ErrForged) {
		t.Fatalf("no CallStatus: %v, want a non-forged error", err)
	}
}

func TestPlivoPlivoStatusVoicemail(t *testing.T) {
	if s := plivoStatus("completed", "machine"); s.Outcome != OutcomeVoicemail || !s.Final {
		t.Fatalf("completed by a machine: %+v", s)
	}
}

func TestPlivoForgedAndReplayed(t *testing.T) {
	c := plivoTestCarrier(t, Plivo, "http://unused", nil)
	form := plivoForm("CallStatus", "completed")
	good := plivoSigned("secret-token", plivoHookURL, form)
	tamperedBody := plivoSigned("secret-token", plivoHookURL, form)
	tamperedBody.Body = []byte(plivoForm("CallStatus", "busy").Encode())
	otherURL := plivoSigned("secret-token", plivoHookURL, form)
	otherURL.PublicURL = strings.Replace(plivoHookURL, "/42?", "/43?", 1)
	otherQuery := plivoSigned("secret-token", plivoHookURL, form)
	otherQuery.PublicURL = plivoHookURL + "x"
	noNonce := plivoSigned("secret-token", plivoHookURL, form)
	noNonce.Request.Header.Del("X-Plivo-Signature-V3-Nonce")
	several := plivoSigned("secret-token", plivoHookURL, form)
	several.Request.Header.Set("X-Plivo-Signature-V3", "AAAA,"+several.Request.Header.Get("X-Plivo-Signature-V3"))
	for _, tc := range []struct {
		name   string
		w      Webhook
		forged bool
	}{
		{"good", good, false},
		// The carrier verifies a replay like the original; the store
		// applies one status per replay key (TestApplyStatusReplayKeys).
		{"replayed", good, false},
		{"several signatures", several, false},
		{"wrong token", plivoSigned("other-token", plivoHookURL, form), true},
		{"unsigned", plivoHook(plivoHookURL, form, http.Header{}), true},
		{"no nonce", noNonce, true},
		{"tampered body", tamperedBody, true},
		{"other attempt", otherURL, true},
		{"other query", otherQuery, true},
		{"no request", Webhook{Body: []byte(form.Encode()), PublicURL: plivoHookURL}, true},
		{"vobiz headers", vobizSigned("secret-token", plivoHookURL, form), true},
	} {
		_, err := c.ParseStatus(tc.w)
		if errors.Is(err, ErrForged) != tc.forged {
			t.Fatalf("%s: error %v, forged want %v", tc.name, err, tc.forged)
		}
	}
	first, _ := c.ParseStatus(good)
	again, _ := c.ParseStatus(good)
	other, _ := c.ParseStatus(plivoSigned("secret-token", plivoHookURL, form))
	if len(first.ReplayKeys) != 1 || !slices.Equal(first.ReplayKeys, again.ReplayKeys) || slices.Equal(first.ReplayKeys, other.ReplayKeys) {
		t.Fatalf("replay keys: %q, again %q, another request %q; want one key, the same for the same request only", first.ReplayKeys, again.ReplayKeys, other.ReplayKeys)
	}
	noToken := plivoTestCarrier(t, Plivo, "http://unused", map[string]any{"auth_id": "MAID"})
	if _, err := noToken.ParseStatus(plivoSigned("", plivoHookURL, form)); !errors.Is(err, ErrForged) {
		t.Fatalf("configuration without token: %v", err)
	}
}

func TestVobizForgedAndReplayed(t *testing.T) {
	c := plivoTestCarrier(t, Vobiz, "http://unused", nil)
	form := plivoForm("CallStatus", "completed")
	good := vobizSigned("secret-token", plivoHookURL, form)
	v2only := vobizSigned("secret-token", plivoHookURL, form)
	v2only.Request.Header.Del("X-Vobiz-Signature-V3")
	v2only.Request.Header.Del("X-Vobiz-Signature-V3-Nonce")
	badV3 := vobizSigned("secret-token", plivoHookURL, form)
	badV3.Request.Header.Set("X-Vobiz-Signature-V3", "AAAA")
	// A captured request replayed with its V3 headers stripped.
	captured := vobizSigned("secret-token", plivoHookURL, form)
	downgraded := vobizSigned("secret-token", plivoHookURL, form)
	downgraded.Request.Header = captured.Request.Header.Clone()
	downgraded.Request.Header.Del("X-Vobiz-Signature-V3")
	downgraded.Request.Header.Del("X-Vobiz-Signature-V3-Nonce")
	// Vobiz signs neither body nor query: a changed body still verifies
	// (the attempt's URL token and TLS protect it), a changed path does not.
	otherBody := vobizSigned("secret-token", plivoHookURL, form)
	otherBody.Body = []byte(plivoForm("CallStatus", "busy").Encode())
	otherPath := vobizSigned("secret-token", plivoHookURL, form)
	otherPath.PublicURL = strings.Replace(plivoHookURL, "/42?", "/43?", 1)
	for _, tc := range []struct {
		name   string
		w      Webhook
		forged bool
	}{
		{"good", good, false},
		{"replayed", good, false},
		{"v2 only", v2only, false},
		{"bad v3, good v2", badV3, true},
		{"captured", captured, false},
		{"downgraded replay", downgraded, false},
		{"wrong token", vobizSigned("other-token", plivoHookURL, form), true},
		{"unsigned", plivoHook(plivoHookURL, form, http.Header{}), true},
		{"plivo headers", plivoSigned("secret-token", plivoHookURL, form), true},
		{"other body", otherBody, false},
		{"other attempt", otherPath, true},
	} {
		_, err := c.ParseStatus(tc.w)
		if errors.Is(err, ErrForged) != tc.forged {
			t.Fatalf("%s: error %v, forged want %v", tc.name, err, tc.forged)
		}
	}
	// A captured request replayed with its V3 headers stripped shares its
	// V2 nonce key with the original: the store refuses to apply it again.
	orig, _ := c.ParseStatus(captured)
	down, _ := c.ParseStatus(downgraded)
	if len(orig.ReplayKeys) != 2 || len(down.ReplayKeys) != 1 || !slices.Contains(orig.ReplayKeys, down.ReplayKeys[0]) {
		t.Fatalf("replay keys of the captured request %q and its downgrade %q: want the downgrade's among the original's", orig.ReplayKeys, down.ReplayKeys)
	}
}

func TestPlivoVerifyAnswer(t *testing.T) {
	c := plivoTestCarrier(t, Plivo, "http://unused", nil)
	for _, tc := range []struct {
		form url.Values
		want string
	}{
		{plivoForm("CallStatus", "in-progress", "Event", "StartApp"), ""},
		{plivoForm("CallStatus", "in-progress", "Machine", "true"), "machine"},
		{plivoForm("CallStatus", "in-progress", "Machine", "false"), "human"},
	} {
		got, err := c.VerifyAnswer(plivoSigned("secret-token", plivoHookURL, tc.form))
		if err != nil || got != tc.want {
			t.Fatalf("answer %v: %q, %v; want %q", tc.form, got, err, tc.want)
		}
	}
	if _, err := c.VerifyAnswer(plivoSigned("bad", plivoHookURL, plivoForm())); !errors.Is(err, ErrForged) {
		t.Fatalf("forged answer: %v", err)
	}
	// A GET answer request is verified over its query.
	n := plivosim.Nonce()
	u := plivoHookURL + "&CallUUID=cu-1&CallStatus=in-progress"
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	req.Header.Set("X-Plivo-Signature-V3", plivosim.SignatureV3("secret-token", u, http.MethodGet, n, nil))
	req.Header.Set("X-Plivo-Signature-V3-Nonce", n)
	if _, err := c.VerifyAnswer(Webhook{Request: req, PublicURL: u}); err != nil {
		t.Fatalf("GET answer: %v", err)
	}
}

// plivoStreamOf decodes Plivo (or Vobiz) XML and returns its <Stream>'s
// URL query and extraHeaders, each by name (nil, nil without a stream),
// failing the test on a name given twice.
func plivoStreamOf(t *testing.T, body []byte) (query, headers map[string]string) {
	t.Helper()
	var r struct {
		Stream *struct {
			URL          string `xml:",chardata"`
			ExtraHeaders string `xml:"extraHeaders,attr"`
		} `xml:"Stream"`
	}
	if err := xml.Unmarshal(body, &r); err != nil {
		t.Fatalf("markup %s: %v", body, err)
	}
	if r.Stream == nil {
		return nil, nil
	}
	headers = map[string]string{}
	for _, pair := range strings.Split(r.Stream.ExtraHeaders, ",") {
		k, v, ok := strings.Cut(pair, "=")
		if _, dup := headers[k]; !ok || dup {
			t.Fatalf("extraHeaders %q: pair %q", r.Stream.ExtraHeaders, pair)
		}
		headers[k] = v
	}
	return queryParams(t, r.Stream.URL), headers
}

func TestPlivoAnswerMarkup(t *testing.T) {
	const decl = `<?xml version="1.0" encoding="UTF-8"?>`
	for _, tc := range []struct {
		name    string
		a       Answer
		want    string
		query   map[string]string // the stream URL's query, decoded
		headers map[string]string // extraHeaders, decoded
	}{
		{"agent", Answer{AttemptID: 42, AgentURL: "wss://agent.example/ws?x=1",
			Context: map[string]string{"first_name": "Ann Lee", "tier": "gold", "attempt_id": "9", "attemptId": "9", "n": "<&>"}},
			decl + `<Response><Stream bidirectional="true" keepCallAlive="true" contentType="audio/x-mulaw;rate=8000" ` +
				`extraHeaders="attemptId=42,tier=gold">wss://agent.example/ws?x=1&amp;attempt_id=42&amp;attemptId=9&amp;` +
				`first_name=Ann+Lee&amp;n=%3C%26%3E&amp;tier=gold</Stream></Response>`,
			map[string]string{"x": "1", "attempt_id": "42", "attemptId": "9", "first_name": "Ann Lee", "n": "<&>", "tier": "gold"},
			map[string]string{"attemptId": "42", "tier": "gold"}},
		{"agent with opt-out", Answer{AttemptID: 42, AgentURL: "wss://agent.example/ws?x=1", OptOutToken: testOptOutToken, OptOutURL: testOptOutURL,
			AgentEventsURL: testEventsURL, Context: map[string]string{"opt_out_token": "spoof", "opt_out_url": "https://evil.example/", "attempt_id": "1",
				"optOutToken": "spoof", "optOutUrl": "spoof", "token": "spoof", "agentEventsUrl": "spoof", "tier": "gold"}},
			decl + `<Response><Stream bidirectional="true" keepCallAlive="true" contentType="audio/x-mulaw;rate=8000" ` +
				`extraHeaders="attemptId=42,tier=gold">wss://agent.example/ws?x=1&amp;attempt_id=42&amp;opt_out_token=tok-_9Zx&amp;` +
				`token=tok-_9Zx&amp;opt_out_url=https%3A%2F%2Fsvc.example%2Fapi%2Fv1%2Ftelephony%2Fopt-out%2F42%3Ft%3Dtok-_9Zx&amp;` +
				`agent_events_url=https%3A%2F%2Fsvc.example%2Fapi%2Fv1%2Ftelephony%2Fagent%2F42%3Ft%3Dtok-_9Zx&amp;` +
				`agentEventsUrl=spoof&amp;optOutToken=spoof&amp;optOutUrl=spoof&amp;tier=gold</Stream></Response>`,
			map[string]string{"x": "1", "attempt_id": "42", "opt_out_token": testOptOutToken, "token": testOptOutToken,
				"opt_out_url": testOptOutURL, "agent_events_url": testEventsURL,
				"agentEventsUrl": "spoof", "optOutToken": "spoof", "optOutUrl": "spoof", "tier": "gold"},
			map[string]string{"attemptId": "42", "tier": "gold"}},
		{"agent without context", Answer{AttemptID: 7, AgentURL: "wss://a/b"},
			decl + `<Response><Stream bidirectional="true" keepCallAlive="true" contentType="audio/x-mulaw;rate=8000" ` +
				`extraHeaders="attemptId=7">wss://a/b?attempt_id=7</Stream></Response>`,
			map[string]string{"attempt_id": "7"}, map[string]string{"attemptId": "7"}},
		{"greeting", Answer{AttemptID: 1, Greeting: `Hello "Bob" & <co>`},
			decl + `<Response><Speak>Hello &#34;Bob&#34; &amp; &lt;co&gt;</Speak><Hangup/></Response>`, nil, nil},
		{"empty greeting", Answer{AttemptID: 1}, decl + `<Response><Hangup/></Response>`, nil, nil},
	} {
		for _, p := range []string{Plivo, Vobiz} {
			ct, body := plivoTestCarrier(t, p, "http://unused", nil).AnswerMarkup(tc.a)
			if ct != "text/xml" || string(body) != tc.want {
				t.Fatalf("%s %s: %s\n%s\nwant\n%s", p, tc.name, ct, body, tc.want)
			}
			query, headers := plivoStreamOf(t, body)
			if !reflect.DeepEqual(query, tc.query) || !reflect.DeepEqual(headers, tc.headers) {
				t.Fatalf("%s %s: stream query %v, extraHeaders %v\nwant %v, %v", p, tc.name, query, headers, tc.query, tc.headers)
			}
		}
	}
}

func TestPlivoExtraHeadersLimit(t *testing.T) {
	ctx := map[string]string{}
	for i := 0; i < 100; i++ {
		ctx["key"+strings.Repeat("x", 3)+string(rune('a'+i%26))+string(rune('a'+i/26))] = strings.Repeat("v", 20)
	}
	h := plivoExtraHeaders(Answer{AttemptID: 1, Context: ctx})
	if len(h) > plivoMaxExtraHeaders || !strings.HasPrefix(h, "attemptId=1,") {
		t.Fatalf("extraHeaders of %d bytes: %.60s...", len(h), h)
	}
}

func TestPlivoCDRRaw(t *testing.T) {
	for _, tc := range []struct {
		cdr  plivoCDR
		want string
	}{
		{plivoCDR{AnswerTime: "2022-10-12 21:57:47+05:30", HangupCauseCode: 8011, HangupCauseName: "Invalid Answer XML"}, "completed"},
		{plivoCDR{CallState: "ANSWER"}, "completed"},
		{plivoCDR{BillDuration: 3}, "completed"},
		{plivoCDR{HangupCauseCode: 1000, HangupCauseName: "Canceled"}, "cancel"},
		{plivoCDR{HangupCauseCode: 1010, HangupCauseName: "Canceled (Out Of Credits)"}, "failed"},
		{plivoCDR{HangupCauseCode: 3000, HangupCauseName: "Busy Line"}, "busy"},
		{plivoCDR{HangupCauseName: "No Answer"}, "no-answer"},
		{plivoCDR{HangupCauseName: "Ring Timeout Reached"}, "no-answer"},
		{plivoCDR{CallState: "NO_ANSWER"}, "no-answer"},
		{plivoCDR{HangupCauseCode: 2000, HangupCauseName: "Invalid Destination Address"}, "failed"},
		{plivoCDR{}, "failed"},
	} {
		if got := tc.cdr.raw(); got != tc.want {
			t.Errorf("%+v: raw %q, want %q", tc.cdr, got, tc.want)
		}
	}
}
