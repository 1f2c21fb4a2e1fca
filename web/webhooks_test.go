package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer/carrier/twiliosim"
)

// ringing is a simulator script whose calls ring until hung up: the
// attempts stay in flight and the tests post their callbacks themselves.
func ringing(twiliosim.CallInfo) twiliosim.Script {
	return twiliosim.Script{Outcome: twiliosim.Human, RingDelay: twiliosim.Never}
}

// inFlight starts a campaign of n contacts whose calls ring forever and
// returns it with its attempts once every call is placed and the
// simulator's own callbacks (initiated, ringing) were applied.
func (ce *campEnv) inFlight(s campSetup, n int) (int64, []map[string]any) {
	ce.t.Helper()
	cid := ce.newCampaign(s, n, "rate_limit_per_second", 1000)
	wantStatus(ce.t, ce.a(http.MethodPost, campaignOp(cid, "start"), nil), http.StatusOK)
	calls := ce.waitCalls(cid, "placed and ringing", func(list []map[string]any) bool {
		for _, a := range list {
			if a["state"] != "in_flight" || a["provider_call_id"] == nil || a["raw_status"] != "ringing" {
				return false
			}
		}
		return len(list) == n
	})
	if err := ce.sim.Wait(ce.t.Context(), func(st twiliosim.Stats) bool { return st.Callbacks >= 2*n }); err != nil {
		ce.t.Fatalf("simulator callbacks: %v", err)
	}
	return cid, calls
}

// statusForm is a Twilio status callback of call sid.
func (ce *campEnv) statusForm(sid, status string, seq int, extra ...string) url.Values {
	f := url.Values{"AccountSid": {ce.sim.AccountSID()}, "ApiVersion": {"2010-04-01"}, "CallSid": {sid},
		"CallStatus": {status}, "Direction": {"outbound-api"}, "From": {campCallerID}, "SequenceNumber": {fmt.Sprint(seq)}}
	for i := 0; i+1 < len(extra); i += 2 {
		f.Set(extra[i], extra[i+1])
	}
	return f
}

// snapshot is what a forged callback must not change.
func (ce *campEnv) snapshot(cid int64) string {
	ce.t.Helper()
	c := ce.campaign(cid)
	delete(c, "next_dial_at")
	return fmt.Sprint(c, ce.calls(cid, ""))
}

func TestWebhookForgedCallbacks(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{engine: true, script: ringing})
	s := ce.setup(false)
	cid, calls := ce.inFlight(s, 2)
	a, b := id(t, calls[0], "id"), id(t, calls[1], "id")
	sidA, sidB := fmt.Sprint(calls[0]["provider_call_id"]), fmt.Sprint(calls[1]["provider_call_id"])
	final := ce.statusForm(sidA, "completed", 9, "CallDuration", "5")
	tokenA, tokenB := ce.token(a), ce.token(b)
	sign := func(u string, f url.Values) string { return twiliosim.Signature(ce.sim.AuthToken(), u, f) }
	before := ce.snapshot(cid)

	for _, kind := range []string{"status", "answer"} {
		urlA := ce.hookURL("twilio", kind, a, tokenA)
		tampered := ce.statusForm(sidA, "busy", 9)
		cases := []struct {
			name, url, sig string
			form           url.Values
		}{
			{"bad signature", urlA, "bm90IGEgc2lnbmF0dXJl", final},
			{"missing signature", urlA, "", final},
			{"signed with another auth token", urlA, twiliosim.Signature("another-token", urlA, final), final},
			{"params changed after signing", urlA, sign(urlA, final), tampered},
			{"signed for another URL", urlA, sign(ce.hookURL("twilio", kind, b, tokenB), final), final},
			{"bad token", ce.hookURL("twilio", kind, a, "AAAAAAAAAAAAAAAAAAAAAAAA"), "", final},
			{"no token", strings.TrimSuffix(urlA, "?t="+tokenA), "", final},
			{"another attempt's token", ce.hookURL("twilio", kind, a, tokenB), "", final},
			{"unknown attempt with its own token", ce.hookURL("twilio", kind, 424242, ce.token(424242)), "", final},
			{"wrong provider in the path", ce.hookURL("plivo", kind, a, tokenA), "", final},
			{"unknown provider in the path", ce.hookURL("nope", kind, a, tokenA), "", final},
		}
		if kind == "status" {
			cases = append(cases, struct {
				name, url, sig string
				form           url.Values
			}{"another call's CallSid", urlA, "", ce.statusForm(sidB, "completed", 9)})
		}
		for _, tc := range cases {
			sig := tc.sig
			if sig == "" && tc.name != "missing signature" {
				sig = sign(tc.url, tc.form) // correctly signed: only the URL is wrong
			}
			status, body, hdr := ce.postHook(tc.url, tc.form, sig)
			if status != http.StatusForbidden || body != "{\"detail\":\"Forbidden\"}\n" || hdr.Get("Content-Type") != "application/json" {
				t.Errorf("%s %s: %d %q, want 403 {\"detail\":\"Forbidden\"}", kind, tc.name, status, body)
			}
		}
	}
	if after := ce.snapshot(cid); after != before {
		t.Errorf("forged callbacks changed the campaign:\n%s\nwas\n%s", after, before)
	}

	// The genuine callback applies.
	status, body, _ := ce.signed(ce.hookURL("twilio", "status", a, tokenA), final)
	if status != http.StatusNoContent || body != "" {
		t.Fatalf("signed status: %d %q, want 204 and no body", status, body)
	}
	got := ce.calls(cid, fmt.Sprintf("?after_id=%d&limit=1", a-1))[0]
	if got["state"] != "done" || got["outcome"] != "answered" || got["raw_status"] != "completed" || got["duration_seconds"] != 5.0 {
		t.Errorf("attempt after a signed final status = %v", got)
	}
	wantCounters(t, ce.campaign(cid), 2, 1, 0, 2, 2)
}

// TestWebhookDuplicatesAndOrder: callbacks that come twice, late or out of
// order are applied once.
func TestWebhookDuplicatesAndOrder(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{engine: true, script: ringing})
	s := ce.setup(false)
	cid, calls := ce.inFlight(s, 2)
	a, b := id(t, calls[0], "id"), id(t, calls[1], "id")
	sidA, sidB := fmt.Sprint(calls[0]["provider_call_id"]), fmt.Sprint(calls[1]["provider_call_id"])
	urlA, urlB := ce.hookURL("twilio", "status", a, ce.token(a)), ce.hookURL("twilio", "status", b, ce.token(b))
	attempt := func(attemptID int64) map[string]any {
		t.Helper()
		return ce.calls(cid, fmt.Sprintf("?after_id=%d&limit=1", attemptID-1))[0]
	}
	post := func(u string, f url.Values) {
		t.Helper()
		if status, body, _ := ce.signed(u, f); status != http.StatusNoContent {
			t.Fatalf("status callback %v: %d %s, want 204", f, status, body)
		}
	}

	// Progress out of order: an older event does not win over a newer one.
	post(urlA, ce.statusForm(sidA, "in-progress", 5))
	post(urlA, ce.statusForm(sidA, "ringing", 3))
	if got := attempt(a); got["raw_status"] != "in-progress" || got["state"] != "in_flight" || got["answered_at"] == nil {
		t.Errorf("after in-progress then a late ringing: %v, want raw_status in-progress, answered_at set", got)
	}

	// A final status, twice, then late non-final and final events.
	final := ce.statusForm(sidA, "completed", 8, "CallDuration", "12")
	post(urlA, final)
	c1 := ce.campaign(cid)
	done := attempt(a)
	post(urlA, final)
	post(urlA, ce.statusForm(sidA, "ringing", 2))
	post(urlA, ce.statusForm(sidA, "in-progress", 20))
	post(urlA, ce.statusForm(sidA, "failed", 21))
	if got := attempt(a); !equalJSON(got, done) || got["outcome"] != "answered" || got["duration_seconds"] != 12.0 {
		t.Errorf("late callbacks changed the final attempt: %v, was %v", got, done)
	}
	if c2 := ce.campaign(cid); !equalJSON(c2, c1) {
		t.Errorf("a duplicate final status changed the campaign: %v, was %v", c2, c1)
	}
	wantCounters(t, c1, 2, 1, 0, 2, 2)

	// A retried outcome queues exactly one retry, whatever repeats.
	busy := ce.statusForm(sidB, "busy", 4)
	post(urlB, busy)
	post(urlB, busy)
	post(urlB, ce.statusForm(sidB, "no-answer", 4))
	c := ce.campaign(cid)
	wantCounters(t, c, 2, 1, 0, 2, 3)
	list := ce.calls(cid, "")
	due, _ := time.Parse(time.RFC3339, fmt.Sprint(list[len(list)-1]["due_at"]))
	if len(list) != 3 || list[1]["outcome"] != "busy" || list[2]["state"] != "queued" || list[2]["attempt"] != 2.0 ||
		due.Sub(ce.clock.now()) < 110*time.Second || due.Sub(ce.clock.now()) > 120*time.Second {
		t.Errorf("calls = %v, want B busy with one queued retry due in 120 s", list)
	}
	if c["state"] != "running" {
		t.Errorf("state = %v, want running (the retry is pending)", c["state"])
	}
}

func TestWebhookAnswer(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{engine: true})
	s := ce.setup(false)
	agentWF := ce.workflow(ce.keyA, "agent", campAgentDefinition)
	csv := "phone_number,first_name,plan\n" + campPhone(1) + ",\"<Ada & \"\"Co\"\">\",\n" + campPhone(2) + ",Bo,gold\n"
	key := ce.upload(ce.keyA, csv)
	say := ce.createCampaign(ce.keyA, campBody("say", s.workflowID, key, "rate_limit_per_second", 1000))
	stream := ce.createCampaign(ce.keyA, campBody("stream", agentWF, key, "rate_limit_per_second", 1000))
	for _, c := range []map[string]any{say, stream} {
		cid := id(t, c, "id")
		wantStatus(t, ce.a(http.MethodPost, campaignOp(cid, "start"), nil), http.StatusOK)
		ce.waitState(cid, "completed")
		ce.waitCounters(cid, 2, 2, 0, 2, 2)
	}
	if err := ce.sim.WaitFinal(t.Context(), 4); err != nil {
		t.Fatal(err)
	}
	const xmlHead = `<?xml version="1.0" encoding="UTF-8"?><Response>`
	want := map[string]string{}
	for _, c := range []map[string]any{say, stream} {
		for _, a := range ce.calls(id(t, c, "id"), "") {
			sid, aid := fmt.Sprint(a["provider_call_id"]), id(t, a, "id")
			switch {
			case c["name"] == "say" && a["contact_row"] == 2.0:
				want[sid] = xmlHead + `<Say>Hi &lt;Ada &amp; &#34;Co&#34;&gt;, about our plan!</Say><Hangup/></Response>`
			case c["name"] == "say":
				want[sid] = xmlHead + `<Say>Hi Bo, about gold!</Say><Hangup/></Response>`
			case a["contact_row"] == 2.0:
				want[sid] = xmlHead + `<Connect><Stream url="wss://agent.example/ws?x=1&amp;y=2">` +
					fmt.Sprintf(`<Parameter name="attempt_id" value="%d"/>`, aid) + ce.optOutParams(aid) +
					`<Parameter name="first_name" value="&lt;Ada &amp; &#34;Co&#34;&gt;"/><Parameter name="plan" value=""/></Stream></Connect></Response>`
			default:
				want[sid] = xmlHead + `<Connect><Stream url="wss://agent.example/ws?x=1&amp;y=2">` +
					fmt.Sprintf(`<Parameter name="attempt_id" value="%d"/>`, aid) + ce.optOutParams(aid) +
					`<Parameter name="first_name" value="Bo"/><Parameter name="plan" value="gold"/></Stream></Connect></Response>`
			}
		}
	}
	for _, rec := range ce.sim.Calls() {
		if rec.AnswerStatus != http.StatusOK || rec.TwiMLContentType != "text/xml" || rec.TwiML != want[rec.SID] {
			t.Errorf("call %s to %s: answer %d %q\n%s\nwant\n%s", rec.SID, rec.To, rec.AnswerStatus, rec.TwiMLContentType, rec.TwiML, want[rec.SID])
		}
	}

	// Asked again directly (POST as placed, GET as Twilio may), signed.
	a := ce.calls(id(t, say, "id"), "")[1]
	aid := id(t, a, "id")
	u := ce.hookURL("twilio", "answer", aid, ce.token(aid))
	form := ce.statusForm(fmt.Sprint(a["provider_call_id"]), "in-progress", 2)
	status, body, hdr := ce.signed(u, form)
	if status != http.StatusOK || hdr.Get("Content-Type") != "text/xml" || body != want[fmt.Sprint(a["provider_call_id"])] {
		t.Errorf("POST answer: %d %q %s", status, hdr.Get("Content-Type"), body)
	}
	get := u + "&" + form.Encode()
	req, _ := http.NewRequest(http.MethodGet, get, nil)
	req.Header.Set("X-Twilio-Signature", twiliosim.Signature(ce.sim.AuthToken(), get, nil))
	if status, body, _ := ce.hookDo(req); status != http.StatusOK || body != want[fmt.Sprint(a["provider_call_id"])] {
		t.Errorf("GET answer: %d %s", status, body)
	}
	req, _ = http.NewRequest(http.MethodGet, get, nil)
	req.Header.Set("X-Twilio-Signature", twiliosim.Signature(ce.sim.AuthToken(), u, nil))
	if status, _, _ := ce.hookDo(req); status != http.StatusForbidden {
		t.Errorf("GET answer signed without its query: %d, want 403", status)
	}
}

// optOutParams is the TwiML of attempt aid's opt-out stream parameters
// (API.md 12.4, 19): its webhook token (twice), the opt-out URL and the
// agent events URL.
func (ce *campEnv) optOutParams(aid int64) string {
	tok := ce.token(aid)
	return fmt.Sprintf(`<Parameter name="opt_out_token" value="%s"/><Parameter name="token" value="%s"/>`+
		`<Parameter name="opt_out_url" value="%s/api/v1/telephony/opt-out/%d?t=%s"/>`+
		`<Parameter name="agent_events_url" value="%s/api/v1/telephony/agent/%d?t=%s"/>`,
		tok, tok, ce.srv.URL, aid, tok, ce.srv.URL, aid, tok)
}

// TestWebhookServerAgentURL: without a workflow agent_url, serve
// --agent-url takes the call.
func TestWebhookServerAgentURL(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{engine: true, agentURL: "wss://default-agent.example/stream"})
	s := ce.setup(false)
	cid := ce.newCampaign(s, 1, "rate_limit_per_second", 1000)
	wantStatus(t, ce.a(http.MethodPost, campaignOp(cid, "start"), nil), http.StatusOK)
	ce.waitState(cid, "completed")
	ce.waitCounters(cid, 1, 1, 0, 1, 1)
	if err := ce.sim.WaitFinal(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	aid := id(t, ce.calls(cid, "")[0], "id")
	want := `<?xml version="1.0" encoding="UTF-8"?><Response><Connect><Stream url="wss://default-agent.example/stream">` +
		fmt.Sprintf(`<Parameter name="attempt_id" value="%d"/>`, aid) + ce.optOutParams(aid) +
		`<Parameter name="first_name" value="Name1"/><Parameter name="plan" value="p1"/></Stream></Connect></Response>`
	if got := ce.sim.Calls()[0].TwiML; got != want {
		t.Errorf("TwiML =\n%s\nwant\n%s", got, want)
	}
}

// TestWebhookRequests: path ids, body size and a server without a dialer.
func TestWebhookRequests(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{engine: true, script: ringing})
	s := ce.setup(false)
	_, calls := ce.inFlight(s, 1)
	aid := id(t, calls[0], "id")
	for _, kind := range []string{"status", "answer"} {
		base := fmt.Sprintf("%s/api/v1/telephony/twilio/%s/", ce.srv.URL, kind)
		status, body, _ := ce.postHook(base+"abc?t=x", url.Values{}, "")
		if status != http.StatusUnprocessableEntity || !strings.Contains(body, `"loc":["path","attempt_id"]`) || !strings.Contains(body, "int_parsing") {
			t.Errorf("%s with a bad id: %d %s", kind, status, body)
		}
		status, body, _ = ce.postHook(base+"99999999999999999999?t=x", url.Values{}, "")
		if status != http.StatusNotFound || body != "{\"detail\":\"call attempt not found\"}\n" {
			t.Errorf("%s with a huge id: %d %s", kind, status, body)
		}
		big := url.Values{"CallStatus": {strings.Repeat("x", 1<<20)}}
		status, body, _ = ce.postHook(ce.hookURL("twilio", kind, aid, ce.token(aid)), big, "sig")
		if status != http.StatusRequestEntityTooLarge || body != "{\"detail\":\"Request body too large\"}\n" {
			t.Errorf("%s with a 1 MiB body: %d %s", kind, status, body)
		}
	}
	// The status path has no GET.
	req, _ := http.NewRequest(http.MethodGet, ce.hookURL("twilio", "status", aid, ce.token(aid)), nil)
	if status, _, _ := ce.hookDo(req); status != http.StatusMethodNotAllowed {
		t.Errorf("GET status: %d, want 405", status)
	}

	// A server without a dialer cannot take callbacks.
	plain := newCampEnv(t, campOpts{})
	for _, kind := range []string{"status", "answer"} {
		status, body, _ := plain.postHook(fmt.Sprintf("%s/api/v1/telephony/twilio/%s/1?t=x", plain.srv.URL, kind), url.Values{}, "")
		if status != http.StatusServiceUnavailable || body != "{\"detail\":\"the dialer is not running\"}\n" {
			t.Errorf("%s without a dialer: %d %s", kind, status, body)
		}
	}
}
