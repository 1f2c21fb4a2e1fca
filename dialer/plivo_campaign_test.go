package dialer_test

// Full campaigns dialing through the Plivo simulator: the real store,
// engine and web router, the Plivo carrier placing calls with Basic auth
// and a request_uuid, callbacks posted as forms to the per-attempt status
// URL signed with X-Plivo-Signature-V3 and naming the call by a CallUUID
// the engine adopts (Status.RequestID), and the XML fetched from the
// per-attempt answer URL. The helpers take the dialect: the Vobiz tests in
// vobiz_campaign_test.go run the same scenarios through the Vobiz dialect.

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer"
	"github.com/outdial/outdial/dialer/carrier"
	"github.com/outdial/outdial/dialer/carrier/plivosim"
	"github.com/outdial/outdial/store"
)

// plivoHarnessSim adapts plivosim to providerSim.
type plivoHarnessSim struct {
	*plivosim.Server
	machineDetection bool
}

func (s plivoHarnessSim) Provider() string { return string(s.Dialect()) }
func (s plivoHarnessSim) BaseURL() string  { return s.URL() }
func (s plivoHarnessSim) Credentials() map[string]any {
	return s.Server.Credentials(s.machineDetection)
}

// newPlivoHarness is a harness dialing through a simulator of dialect d
// started with cfg, its configuration asking for machine detection when md
// is set (Plivo only: Vobiz configurations have no such field).
func newPlivoHarness(t *testing.T, d plivosim.Dialect, cfg plivosim.Config, md bool, opts ...harnessOption) (*harness, *plivosim.Server) {
	t.Helper()
	cfg.Dialect = d
	sim := plivosim.Start(cfg)
	return newProviderHarness(t, plivoHarnessSim{Server: sim, machineDetection: md}, opts...), sim
}

// plivoContact is the index of the contact a simulated call dials, or -1.
func plivoContact(to string) int {
	i := -1
	if _, err := fmt.Sscanf(strings.TrimPrefix(to, "1415555"), "%d", &i); err != nil {
		return -1
	}
	return i
}

// plivoCampaignOutcomes runs every outcome path (machine detection on for
// Plivo) with duplicated and reordered callbacks and a retry, never above
// max_concurrency, and checks the create requests, the XML answers and that
// each attempt ends known by its CallUUID.
func plivoCampaignOutcomes(t *testing.T, d plivosim.Dialect) {
	md := d == plivosim.Plivo
	human, machine := "", ""
	if md {
		human, machine = "human", "machine"
	}
	type path struct {
		script                plivosim.Script
		outcome, raw, verdict string
		retried, answered     bool
	}
	paths := []path{
		{script: plivosim.Script{TalkDuration: 5 * time.Millisecond, Duration: 4}, outcome: "answered", raw: "completed", verdict: human, answered: true},
		{script: plivosim.Script{Outcome: plivosim.Machine, TalkDuration: 2 * time.Millisecond}, outcome: map[bool]string{true: "voicemail", false: "answered"}[md],
			raw: "completed", verdict: machine, answered: true},
		{script: plivosim.Script{Outcome: plivosim.Busy}, outcome: "busy", raw: "busy", retried: true},
		{script: plivosim.Script{Outcome: plivosim.NoAnswer, RingDelay: 3 * time.Millisecond}, outcome: "no_answer", raw: "no-answer"},
		{script: plivosim.Script{Outcome: plivosim.Timeout}, outcome: "no_answer", raw: "timeout"},
		{script: plivosim.Script{Outcome: plivosim.Failed}, outcome: "failed", raw: "failed"},
		{script: plivosim.Script{Outcome: plivosim.Canceled}, outcome: "canceled", raw: "cancel"},
		{script: plivosim.Script{TalkDuration: 2 * time.Millisecond, Duplicate: true}, outcome: "answered", raw: "completed", verdict: human, answered: true},
		{script: plivosim.Script{Outcome: plivosim.Busy, OutOfOrder: true, Duplicate: true, CallbackDelay: 2 * time.Millisecond},
			outcome: "busy", raw: "busy", retried: true},
		{script: plivosim.Script{Outcome: plivosim.NoAnswer, QueueDelay: 2 * time.Millisecond}, outcome: "no_answer", raw: "no-answer"},
	}
	n := 2 * len(paths)
	h, sim := newPlivoHarness(t, d, plivosim.Config{Script: func(ci plivosim.CallInfo) plivosim.Script {
		i := plivoContact(ci.To)
		if i < 0 || i >= n {
			return plivosim.Script{}
		}
		if ci.Attempt > 1 { // the retry answers
			return plivosim.Script{TalkDuration: 2 * time.Millisecond}
		}
		return paths[i%len(paths)].script
	}}, md)
	rc := store.RetryConfig{Enabled: true, MaxRetries: 1, RetryDelaySeconds: 30, RetryOnBusy: true}
	c := h.campaign(n, store.Settings{MaxConcurrency: 3, RetryConfig: rc}, nil)
	h.clock.Set(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	h.do(c.ID, store.OpStart)
	retries := 0
	for _, p := range paths {
		if p.retried {
			retries += 2
		}
	}
	simPoll(t, sim, "first attempts over and retries queued", func() bool {
		return sim.Stats().Final >= n && h.countAttempts(c.ID, store.AttemptQueued) == retries
	})
	h.advance(31*time.Second, c.ID)
	done := h.waitState(c.ID, store.StateCompleted)
	if peak := sim.PeakInFlight(); peak > 3 {
		t.Fatalf("peak in flight %d, max_concurrency 3", peak)
	}
	failed := 0
	for _, p := range paths {
		if !p.retried && p.outcome != "answered" {
			failed += 2
		}
	}
	checkCounters(t, done, int64(n), int64(failed), int64(n+retries), int64(n+retries))
	if st := sim.Stats(); st.CallbackErrors != 0 || st.Created != n+retries {
		t.Fatalf("sim stats %+v: callbacks refused or calls missing", st)
	}
	byNumber := map[string][]*store.Attempt{}
	for _, a := range h.attempts(c.ID) {
		byNumber[a.PhoneNumber] = append(byNumber[a.PhoneNumber], a)
	}
	callUUID := map[string]bool{}
	for _, call := range sim.Calls() {
		callUUID[call.CallUUID] = true
	}
	for i := 0; i < n; i++ {
		p, list := paths[i%len(paths)], byNumber[number(i)]
		if len(list) == 0 || deref(list[0].Outcome) != p.outcome || deref(list[0].RawStatus) != p.raw {
			t.Fatalf("%s: first attempt %s (%s), want %s (%s)", number(i), deref(list[0].Outcome), deref(list[0].RawStatus), p.outcome, p.raw)
		}
		if p.retried != (len(list) == 2) || (p.retried && deref(list[1].Outcome) != "answered") {
			t.Fatalf("%s: %d attempts, retried %v", number(i), len(list), p.retried)
		}
		if p.answered && (list[0].DurationSeconds == nil || list[0].AnsweredAt == nil || deref(list[0].AnsweredBy) != map[bool]string{true: p.verdict, false: "<nil>"}[p.verdict != ""]) {
			t.Fatalf("%s: answered attempt %+v (answered_by %s), want a duration, an answer time and answered_by %q",
				number(i), *list[0], deref(list[0].AnsweredBy), p.verdict)
		}
		for _, a := range list {
			if !callUUID[deref(a.ProviderCallID)] {
				t.Fatalf("%s: provider call id %s is not a CallUUID", number(i), deref(a.ProviderCallID))
			}
		}
	}
	if dur := byNumber[number(0)][0].DurationSeconds; dur == nil || *dur != 4 {
		t.Fatalf("duration %v, want the hangup callback's 4 s", dur)
	}
	for _, call := range sim.Calls() {
		i := plivoContact(call.To)
		b := call.Body
		if b["from"] != "14155550100" || strings.HasPrefix(b["to"], "+") || b["answer_method"] != "POST" ||
			!strings.Contains(b["answer_url"], "/api/v1/telephony/"+string(d)+"/answer/") ||
			!strings.Contains(b["hangup_url"], "/api/v1/telephony/"+string(d)+"/status/") || b["ring_url"] != b["hangup_url"] ||
			(b["machine_detection"] == "true") != md || b["ring_timeout"] != fmt.Sprint(int(dialer.RingTimeout/time.Second)) || b["time_limit"] == "" {
			t.Fatalf("create request %v", b)
		}
		if call.AnswerStatus != 0 {
			want := fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?><Response><Speak>Hello P%d</Speak><Hangup/></Response>`, i)
			if call.AnswerStatus != 200 || call.XMLContentType != "text/xml" || call.XML != want {
				t.Fatalf("%s: XML %d %q %q, want %s", call.To, call.AnswerStatus, call.XMLContentType, call.XML, want)
			}
		}
	}
}

func TestPlivoCampaignOutcomes(t *testing.T) { plivoCampaignOutcomes(t, plivosim.Plivo) }

// plivoCampaignConcurrency: many quick calls never exceed max_concurrency,
// and every contact is called once.
func plivoCampaignConcurrency(t *testing.T, d plivosim.Dialect) {
	h, sim := newPlivoHarness(t, d, plivosim.Config{Script: func(plivosim.CallInfo) plivosim.Script {
		return plivosim.Script{RingDelay: time.Millisecond, TalkDuration: 10 * time.Millisecond}
	}}, false)
	c := h.campaign(40, store.Settings{MaxConcurrency: 4}, nil)
	h.do(c.ID, store.OpStart)
	done := h.waitState(c.ID, store.StateCompleted)
	checkCounters(t, done, 40, 0, 40, 40)
	if peak := sim.PeakInFlight(); peak > 4 || peak < 2 {
		t.Fatalf("peak in flight %d, want 2..4 (max_concurrency 4)", peak)
	}
	calledOnce(t, sim.CreatesByTo(), 40, noPlus)
}

func TestPlivoCampaignConcurrency(t *testing.T) { plivoCampaignConcurrency(t, plivosim.Plivo) }

// plivoCampaignLostFinalReconciled: a call whose hangup callback never
// comes is reconciled at its deadline with the provider's CDR (GET
// .../Call/{CallUUID}/ after the live lookup answers 404).
func plivoCampaignLostFinalReconciled(t *testing.T, d plivosim.Dialect) {
	h, sim := newPlivoHarness(t, d, plivosim.Config{Script: func(ci plivosim.CallInfo) plivosim.Script {
		if plivoContact(ci.To) == 0 {
			return plivosim.Script{LoseFinal: true, Duration: 3}
		}
		return plivosim.Script{Outcome: plivosim.Busy, LoseFinal: true}
	}}, false, withMaxCallSeconds(60))
	c := h.campaign(2, store.Settings{MaxConcurrency: 2}, nil)
	h.clock.Set(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	h.do(c.ID, store.OpStart)
	simWait(t, sim, "both calls over", func(s plivosim.Stats) bool { return s.Final == 2 })
	simPoll(t, sim, "both attempts in flight", func() bool { return h.countAttempts(c.ID, store.AttemptInFlight) == 2 })
	h.advance(dialer.RingTimeout+61*time.Second, c.ID)
	done := h.waitState(c.ID, store.StateCompleted)
	checkCounters(t, done, 2, 1, 2, 2)
	if q := sim.Stats().Queries; q != 2 {
		t.Fatalf("%d successful call queries, want 2 (the CDRs)", q)
	}
	for _, a := range h.attempts(c.ID) {
		want := map[string]string{number(0): "answered", number(1): "busy"}[a.PhoneNumber]
		if deref(a.Outcome) != want {
			t.Fatalf("%s: outcome %s, want %s from the CDR", a.PhoneNumber, deref(a.Outcome), want)
		}
	}
}

func TestPlivoCampaignLostFinalReconciled(t *testing.T) {
	plivoCampaignLostFinalReconciled(t, plivosim.Plivo)
}

// plivoPost posts form to the service at path with headers h and returns
// the HTTP status.
func plivoPost(t *testing.T, hs *harness, path string, form url.Values, h http.Header) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, hs.public+path, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range h {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// plivoHangUpAll hangs every simulated call up through the carrier, as an
// operator would.
func plivoHangUpAll(t *testing.T, sim *plivosim.Server) {
	t.Helper()
	p := string(sim.Dialect())
	car, err := carrier.New(p, sim.Credentials(false), carrier.Options{BaseURLs: map[string]string{p: sim.URL()}})
	if err != nil {
		t.Fatal(err)
	}
	for _, call := range sim.Calls() {
		if err := car.HangUp(context.Background(), call.CallUUID); err != nil {
			t.Fatal(err)
		}
	}
}

// plivoForgedAndReplayedWebhooks posts callbacks and answer requests a
// forger could make to the real router: each is 403 and changes nothing. A
// genuine signed callback is applied once; the same request sent again
// (same nonce), and the simulator's own callbacks replayed, are harmless
// 204 no-ops (issue 15 item 7: a provider's retry must not get a 403).
func plivoForgedAndReplayedWebhooks(t *testing.T, d plivosim.Dialect) {
	h, sim := newPlivoHarness(t, d, plivosim.Config{RecordCallbacks: true, Script: func(plivosim.CallInfo) plivosim.Script {
		return plivosim.Script{RingDelay: plivosim.Never}
	}}, false)
	c := h.campaign(2, store.Settings{}, nil)
	h.do(c.ID, store.OpStart)
	// In flight as well as ringing: the ring callback can arrive before
	// the placement is recorded, and the snapshot below must not catch an
	// attempt still dialing (issue 15 item 10).
	simPoll(t, sim, "both calls ringing", func() bool {
		list := h.attempts(c.ID)
		return len(list) == 2 && deref(list[0].RawStatus) == "ringing" && deref(list[1].RawStatus) == "ringing" &&
			list[0].State == store.AttemptInFlight && list[1].State == store.AttemptInFlight
	})
	before, campaignBefore, logsBefore := h.attempts(c.ID), h.get(c.ID), len(h.logs(c.ID, ""))
	a1, a2 := before[0], before[1]
	rec1, ok1 := sim.Call(deref(a1.ProviderCallID))
	rec2, ok2 := sim.Call(deref(a2.ProviderCallID))
	if !ok1 || !ok2 || deref(a1.ProviderCallID) != rec1.CallUUID {
		t.Fatalf("attempts know their calls as %s, %s; want the CallUUIDs", deref(a1.ProviderCallID), deref(a2.ProviderCallID))
	}
	path := func(provider, kind string, id int64, tok string) string {
		return fmt.Sprintf("/api/v1/telephony/%s/%s/%d?t=%s", provider, kind, id, url.QueryEscape(tok))
	}
	final := func(r plivosim.CallRecord, status string) url.Values {
		return url.Values{"CallUUID": {r.CallUUID}, "RequestUUID": {r.RequestUUID}, "CallStatus": {status}, "Event": {"Hangup"},
			"Duration": {"12"}, "BillDuration": {"12"}, "To": {r.To}, "From": {r.From}, "Direction": {"outbound"}}
	}
	sign := func(p string, form url.Values, token string) http.Header {
		return sim.SignHeaders(token, h.public+p, http.MethodPost, form)
	}
	good := path(string(d), "status", a1.ID, h.eng.Token(a1.ID))
	answer := path(string(d), "answer", a1.ID, h.eng.Token(a1.ID))
	// A genuine callback captured on its way; its body tampered with.
	captured := sign(good, final(rec1, "completed"), sim.AuthToken())
	if code := plivoPost(t, h, good, final(rec1, "busy"), captured); code != http.StatusForbidden && d == plivosim.Plivo {
		t.Fatalf("tampered body: status %d, want 403 (Plivo V3 signs the body)", code)
	} else if d == plivosim.Vobiz && code != http.StatusNoContent {
		// Vobiz signs only the URL and nonce: the first use of a nonce is
		// accepted whatever the body (documented); its replay is a no-op.
		t.Fatalf("vobiz first use of a nonce: status %d", code)
	}
	tamperedApplied := d == plivosim.Vobiz
	if tamperedApplied {
		before, campaignBefore, logsBefore = h.attempts(c.ID), h.get(c.ID), len(h.logs(c.ID, ""))
	}
	forgeries := []struct {
		name, path string
		form       url.Values
		header     http.Header
	}{
		{"signed with another auth token", good, final(rec1, "completed"), sign(good, final(rec1, "completed"), "not-the-auth-token")},
		{"unsigned", good, final(rec1, "completed"), nil},
		{"signed for another URL", good, final(rec1, "completed"), sign(path(string(d), "status", a2.ID, h.eng.Token(a2.ID)), final(rec1, "completed"), sim.AuthToken())},
		{"bad URL token", path(string(d), "status", a1.ID, "forged-token"), final(rec1, "completed"),
			sign(path(string(d), "status", a1.ID, "forged-token"), final(rec1, "completed"), sim.AuthToken())},
		{"another attempt's token", path(string(d), "status", a1.ID, h.eng.Token(a2.ID)), final(rec1, "completed"),
			sign(path(string(d), "status", a1.ID, h.eng.Token(a2.ID)), final(rec1, "completed"), sim.AuthToken())},
		{"another attempt's call", good, final(rec2, "completed"), sign(good, final(rec2, "completed"), sim.AuthToken())},
		{"another provider", path("twilio", "status", a1.ID, h.eng.Token(a1.ID)), final(rec1, "completed"),
			sign(path("twilio", "status", a1.ID, h.eng.Token(a1.ID)), final(rec1, "completed"), sim.AuthToken())},
		{"answer signed with another auth token", answer, final(rec1, "in-progress"), sign(answer, final(rec1, "in-progress"), "x")},
		{"answer unsigned", answer, final(rec1, "in-progress"), nil},
	}
	for _, f := range forgeries {
		if got := plivoPost(t, h, f.path, f.form, f.header); got != http.StatusForbidden {
			t.Errorf("%s: status %d, want 403", f.name, got)
		}
	}
	if after := h.attempts(c.ID); !reflect.DeepEqual(after, before) {
		t.Fatal("forged webhooks changed the attempts")
	}
	if after := h.get(c.ID); after.State != campaignBefore.State || after.ProcessedRows != campaignBefore.ProcessedRows ||
		after.FailedRows != campaignBefore.FailedRows || after.ExecutedCount != campaignBefore.ExecutedCount {
		t.Fatalf("forged webhooks changed the campaign: %+v", after)
	}
	if n := len(h.logs(c.ID, "")); n != logsBefore {
		t.Fatalf("forged webhooks logged %d entries", n-logsBefore)
	}
	if tamperedApplied { // the captured request, used once, is spent
		if got := plivoPost(t, h, good, final(rec1, "completed"), captured); got != http.StatusNoContent {
			t.Fatalf("captured request replayed: status %d, want 204 (a no-op)", got)
		}
	}
	// The simulator's own ring callbacks, replayed, are no-ops.
	for _, call := range sim.Calls() {
		for _, cb := range call.Callbacks {
			if code, err := sim.Replay(context.Background(), cb); err != nil || code != http.StatusNoContent {
				t.Fatalf("replay of %s's %s callback: %d %v, want 204", call.To, cb.Kind, code, err)
			}
		}
	}
	if after := h.attempts(c.ID); !reflect.DeepEqual(after, before) {
		t.Fatal("replayed webhooks changed the attempts")
	}

	// A genuine final callback is applied once; sent again it is a replay.
	if !tamperedApplied {
		genuine := sign(good, final(rec1, "completed"), sim.AuthToken())
		if got := plivoPost(t, h, good, final(rec1, "completed"), genuine); got != http.StatusNoContent {
			t.Fatalf("genuine callback: status %d, want 204", got)
		}
		once := h.attempts(c.ID)
		if got := plivoPost(t, h, good, final(rec1, "completed"), genuine); got != http.StatusNoContent {
			t.Fatalf("replayed callback: status %d, want 204 (a no-op)", got)
		}
		if after := h.attempts(c.ID); !reflect.DeepEqual(after, once) {
			t.Fatal("a replayed final callback changed the attempts")
		}
	}
	applied := h.attempts(c.ID)
	want1 := map[bool]string{false: "answered", true: "busy"}[tamperedApplied]
	if deref(applied[0].Outcome) != want1 {
		t.Fatalf("a1 outcome %s, want %s", deref(applied[0].Outcome), want1)
	}

	// The operator hangs both calls up: a2 ends cancelled, a1 was final.
	plivoHangUpAll(t, sim)
	done := h.waitState(c.ID, store.StateCompleted)
	failed := map[bool]int64{false: 1, true: 2}[tamperedApplied]
	checkCounters(t, done, 2, failed, 2, 2)
	outcomes := map[string]string{}
	for _, a := range h.attempts(c.ID) {
		outcomes[a.PhoneNumber] = deref(a.Outcome)
	}
	if outcomes[a1.PhoneNumber] != want1 || outcomes[a2.PhoneNumber] != "canceled" {
		t.Fatalf("outcomes %v, want %s %s and %s canceled (hung up)", outcomes, a1.PhoneNumber, want1, a2.PhoneNumber)
	}
	settled := h.attempts(c.ID)
	for _, call := range sim.Calls() {
		cb := call.Callbacks[len(call.Callbacks)-1]
		if code, err := sim.Replay(context.Background(), cb); err != nil || code != http.StatusNoContent {
			t.Fatalf("replay of %s's %s callback: %d %v, want 204", call.To, cb.Kind, code, err)
		}
	}
	if after := h.attempts(c.ID); !reflect.DeepEqual(after, settled) {
		t.Fatal("replayed final callbacks changed the attempts")
	}
}

func TestPlivoForgedAndReplayedWebhooks(t *testing.T) {
	plivoForgedAndReplayedWebhooks(t, plivosim.Plivo)
}

// plivoCampaignRateLimited: a 429 slows the campaign down and the attempt
// is retried later; it is not the contact's failure.
func plivoCampaignRateLimited(t *testing.T, d plivosim.Dialect) {
	h, sim := newPlivoHarness(t, d, plivosim.Config{Script: func(plivosim.CallInfo) plivosim.Script {
		return plivosim.Script{TalkDuration: 2 * time.Millisecond}
	}}, false)
	sim.TooManyRequestsNext(4)
	c := h.campaign(8, store.Settings{MaxConcurrency: 3}, nil)
	h.clock.Set(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	h.do(c.ID, store.OpStart)
	h.runThroughRateLimits(func() int { return sim.Stats().RateLimited }, c.ID)
	if st := sim.Stats(); st.RateLimited != 4 || st.CreateRequests != 12 {
		t.Fatalf("429s %d of %d create requests, want 4 of 12", st.RateLimited, st.CreateRequests)
	}
	calledOnce(t, sim.CreatesByTo(), 8, noPlus)
	h.checkRateLimitedCampaign(c.ID, 8)
}

func TestPlivoCampaignRateLimited(t *testing.T) { plivoCampaignRateLimited(t, plivosim.Plivo) }

// plivoCampaignAuthFailure: a 401 pauses the campaign with
// provider_auth_failed and loses nothing; resuming calls everyone else
// once.
func plivoCampaignAuthFailure(t *testing.T, d plivosim.Dialect) {
	h, sim := newPlivoHarness(t, d, plivosim.Config{Script: func(plivosim.CallInfo) plivosim.Script {
		return plivosim.Script{TalkDuration: 10 * time.Millisecond}
	}}, false)
	c := h.campaign(12, store.Settings{MaxConcurrency: 2}, nil)
	h.do(c.ID, store.OpStart)
	simWait(t, sim, "some calls placed", func(s plivosim.Stats) bool { return s.Created >= 3 })
	sim.SetUnauthorized(true)
	h.waitState(c.ID, store.StatePaused)
	logs := h.logs(c.ID, "provider_auth_failed")
	if len(logs) != 1 || logs[0].Level != store.LogWarning || logs[0].Details["http_status"] != float64(401) {
		t.Fatalf("provider_auth_failed log %+v, want one warning with http_status 401", logs)
	}
	// Nothing lost: every attempt the provider did not create is queued
	// again. Polled, not read once: a claim the runner made just before
	// the pause may still be on its way back to the queue.
	simPoll(t, sim, "every attempt not created back in the queue", func() bool {
		return h.countAttempts(c.ID, store.AttemptDialing)+h.countAttempts(c.ID, store.AttemptInFlight) == 0 &&
			h.countAttempts(c.ID, store.AttemptQueued) == 12-sim.Stats().Created
	})
	for _, a := range h.attempts(c.ID) {
		if deref(a.Outcome) == "failed" {
			t.Fatalf("attempt %d failed: a 401 is not the contact's failure", a.ID)
		}
	}
	sim.SetUnauthorized(false)
	h.do(c.ID, store.OpResume)
	done := h.waitState(c.ID, store.StateCompleted)
	checkCounters(t, done, 12, 0, 12, 12)
	calledOnce(t, sim.CreatesByTo(), 12, noPlus)
}

func TestPlivoCampaignAuthFailure(t *testing.T) { plivoCampaignAuthFailure(t, plivosim.Plivo) }
