package dialer_test

// Full campaigns dialing through the Cloudonix simulator: the real store,
// engine and web router, the Cloudonix carrier speaking Cloudonix's wire
// format, session updates posted as JSON to the per-attempt status URL and
// the CXML fetched from the per-attempt answer URL.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer"
	"github.com/outdial/outdial/dialer/carrier"
	"github.com/outdial/outdial/dialer/carrier/cloudonixsim"
	"github.com/outdial/outdial/store"
)

// cloudonixHarnessSim adapts cloudonixsim to providerSim.
type cloudonixHarnessSim struct{ *cloudonixsim.Server }

// Provider is carrier.Cloudonix.
func (s cloudonixHarnessSim) Provider() string { return carrier.Cloudonix }

// BaseURL is the simulator's URL.
func (s cloudonixHarnessSim) BaseURL() string { return s.URL() }

// Credentials name an existing application, so nothing is provisioned.
func (s cloudonixHarnessSim) Credentials() map[string]any {
	return s.Server.Credentials("outdial")
}

// cloudonixNewHarness is a harness dialing through a Cloudonix simulator
// started with cfg.
func cloudonixNewHarness(t *testing.T, cfg cloudonixsim.Config, opts ...harnessOption) (*harness, *cloudonixsim.Server) {
	t.Helper()
	sim := cloudonixsim.Start(cfg)
	return newProviderHarness(t, cloudonixHarnessSim{sim}, opts...), sim
}

// TestCloudonixCampaignOutcomes runs every outcome path with duplicated and
// reordered session updates and a retry, never above max_concurrency.
func TestCloudonixCampaignOutcomes(t *testing.T) {
	type path struct {
		script           cloudonixsim.Script
		outcome, raw     string
		retried, talking bool
	}
	paths := []path{
		{script: cloudonixsim.Script{TalkDuration: 5 * time.Millisecond}, outcome: "answered", raw: "completed", talking: true},
		{script: cloudonixsim.Script{Outcome: cloudonixsim.Busy}, outcome: "busy", raw: "busy", retried: true},
		{script: cloudonixsim.Script{Outcome: cloudonixsim.NoAnswer, RingDelay: 3 * time.Millisecond}, outcome: "no_answer", raw: "noanswer"},
		{script: cloudonixsim.Script{Outcome: cloudonixsim.Failed, FinalStatus: "nocredit"}, outcome: "failed", raw: "nocredit"},
		{script: cloudonixsim.Script{Outcome: cloudonixsim.Canceled}, outcome: "canceled", raw: "cancel"},
		{script: cloudonixsim.Script{TalkDuration: 2 * time.Millisecond, Duplicate: true}, outcome: "answered", raw: "completed", talking: true},
		{script: cloudonixsim.Script{TalkDuration: 2 * time.Millisecond, OutOfOrder: true, Duplicate: true}, outcome: "answered", raw: "completed", talking: true},
		{script: cloudonixsim.Script{Outcome: cloudonixsim.Busy, OutOfOrder: true, CallbackDelay: 2 * time.Millisecond}, outcome: "busy", raw: "busy", retried: true},
	}
	n := 2 * len(paths)
	h, sim := cloudonixNewHarness(t, cloudonixsim.Config{Script: func(ci cloudonixsim.CallInfo) cloudonixsim.Script {
		for i := 0; i < n; i++ {
			if ci.To == number(i) {
				if ci.Attempt > 1 { // the retry answers
					return cloudonixsim.Script{TalkDuration: 2 * time.Millisecond}
				}
				return paths[i%len(paths)].script
			}
		}
		return cloudonixsim.Script{}
	}})
	rc := store.RetryConfig{Enabled: true, MaxRetries: 1, RetryDelaySeconds: 30, RetryOnBusy: true}
	c := h.campaign(n, store.Settings{MaxConcurrency: 3, RetryConfig: rc}, nil)
	h.clock.Set(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	h.do(c.ID, store.OpStart)
	simPoll(t, sim, "first attempts over and retries queued", func() bool {
		return sim.Stats().Final >= n && h.countAttempts(c.ID, store.AttemptQueued) == 4
	})
	h.advance(31*time.Second, c.ID)
	done := h.waitState(c.ID, store.StateCompleted)
	if peak := sim.PeakInFlight(); peak > 3 {
		t.Fatalf("peak in flight %d, max_concurrency 3", peak)
	}
	// 16 contacts; the 4 busy ones retried and answered; no_answer,
	// failed and canceled (6) are final non-answers.
	checkCounters(t, done, int64(n), 6, int64(n+4), int64(n+4))
	if st := sim.Stats(); st.CallbackErrors != 0 || st.Created != n+4 {
		t.Fatalf("sim stats %+v: callbacks refused or calls missing", st)
	}
	byNumber := map[string][]*store.Attempt{}
	for _, a := range h.attempts(c.ID) {
		byNumber[a.PhoneNumber] = append(byNumber[a.PhoneNumber], a)
	}
	for i := 0; i < n; i++ {
		p, list := paths[i%len(paths)], byNumber[number(i)]
		if len(list) == 0 || deref(list[0].Outcome) != p.outcome || deref(list[0].RawStatus) != p.raw {
			t.Fatalf("%s: attempts %v, want first %s (%s)", number(i), list, p.outcome, p.raw)
		}
		if p.retried != (len(list) == 2) || (p.retried && deref(list[1].Outcome) != "answered") {
			t.Fatalf("%s: %d attempts, retried %v", number(i), len(list), p.retried)
		}
		if p.talking && (list[0].DurationSeconds == nil || list[0].AnsweredAt == nil) {
			t.Fatalf("%s: answered attempt without duration or answer time: %+v", number(i), *list[0])
		}
	}
	for _, call := range sim.Calls() {
		i := -1
		fmt.Sscanf(strings.TrimPrefix(call.To, "+1415555"), "%d", &i)
		// Per-attempt URLs, caller id, attempt id in the profile.
		r := call.Request
		if r.Caller() != "+14155550100" || !strings.Contains(r.URL, "/api/v1/telephony/cloudonix/answer/") ||
			!strings.Contains(r.Callback, "/api/v1/telephony/cloudonix/status/") || r.Profile["outdial-attempt-id"] == nil {
			t.Fatalf("create request %+v", r)
		}
		if call.Answered {
			want := fmt.Sprintf("<Say>Hello P%d</Say><Hangup/>", i)
			if call.AnswerStatus != 200 || call.CXMLContentType != "text/xml" || !strings.Contains(call.CXML, want) {
				t.Fatalf("%s: CXML %d %q %q, want %s", call.To, call.AnswerStatus, call.CXMLContentType, call.CXML, want)
			}
		}
	}
}

// TestCloudonixCampaignLostFinalReconciled: a session whose final update
// never comes is reconciled at its deadline with GET .../sessions/{token}.
func TestCloudonixCampaignLostFinalReconciled(t *testing.T) {
	h, sim := cloudonixNewHarness(t, cloudonixsim.Config{Script: func(ci cloudonixsim.CallInfo) cloudonixsim.Script {
		if ci.To == number(0) {
			return cloudonixsim.Script{LoseFinal: true}
		}
		return cloudonixsim.Script{Outcome: cloudonixsim.Busy, LoseFinal: true}
	}}, withMaxCallSeconds(60))
	c := h.campaign(2, store.Settings{MaxConcurrency: 2}, nil)
	h.clock.Set(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	h.do(c.ID, store.OpStart)
	simWait(t, sim, "both calls over", func(s cloudonixsim.Stats) bool { return s.Final == 2 })
	simPoll(t, sim, "both attempts in flight", func() bool { return h.countAttempts(c.ID, store.AttemptInFlight) == 2 })
	h.advance(dialer.RingTimeout+61*time.Second, c.ID)
	done := h.waitState(c.ID, store.StateCompleted)
	checkCounters(t, done, 2, 1, 2, 2)
	if f := sim.Stats().Fetches; f != 2 {
		t.Fatalf("%d session fetches, want 2", f)
	}
	for _, a := range h.attempts(c.ID) {
		want := map[string]string{number(0): "answered", number(1): "busy"}[a.PhoneNumber]
		if deref(a.Outcome) != want {
			t.Fatalf("%s: outcome %s, want %s from the session fetch", a.PhoneNumber, deref(a.Outcome), want)
		}
	}
}

// cloudonixPost posts a JSON body to the service at path and returns the
// HTTP status.
func cloudonixPost(t *testing.T, h *harness, path string, body []byte) int {
	t.Helper()
	resp, err := http.Post(h.public+path, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestCloudonixForgedAndReplayedWebhooks: Cloudonix does not sign, so the
// per-attempt URL token is what stops a forger; a session update with a bad
// or borrowed token, for another session, another domain or no session is
// 403 and changes nothing. A replayed genuine update is accepted and changes
// nothing either: a final status is applied once.
func TestCloudonixForgedAndReplayedWebhooks(t *testing.T) {
	h, sim := cloudonixNewHarness(t, cloudonixsim.Config{Script: func(cloudonixsim.CallInfo) cloudonixsim.Script {
		return cloudonixsim.Script{RingDelay: cloudonixsim.Never}
	}})
	c := h.campaign(2, store.Settings{}, nil)
	h.do(c.ID, store.OpStart)
	// Ringing and their placement recorded (a ringing webhook may come
	// before the answer to the place request is stored).
	simPoll(t, sim, "both calls ringing", func() bool {
		list := h.attempts(c.ID)
		return len(list) == 2 && deref(list[0].RawStatus) == "ringing" && deref(list[1].RawStatus) == "ringing" &&
			list[0].State == store.AttemptInFlight && list[1].State == store.AttemptInFlight
	})
	before, campaignBefore, logsBefore := h.attempts(c.ID), h.get(c.ID), len(h.logs(c.ID, ""))
	a1, a2 := before[0], before[1]
	path := func(kind string, id int64, tok string) string {
		return fmt.Sprintf("/api/v1/telephony/cloudonix/%s/%d?t=%s", kind, id, url.QueryEscape(tok))
	}
	final := func(token, domain string) []byte {
		b, _ := json.Marshal(map[string]any{"token": token, "status": "completed", "domain": domain,
			"callAnswerTime": 1763892000000, "callEndTime": 1763892012000})
		return b
	}
	s1 := deref(a1.ProviderCallID)
	forgeries := []struct {
		name, path string
		body       []byte
	}{
		{"bad token", path("status", a1.ID, "forged-token"), final(s1, sim.Domain())},
		{"no token", fmt.Sprintf("/api/v1/telephony/cloudonix/status/%d", a1.ID), final(s1, sim.Domain())},
		{"another attempt's token", path("status", a1.ID, h.eng.Token(a2.ID)), final(s1, sim.Domain())},
		{"another attempt's session", path("status", a2.ID, h.eng.Token(a2.ID)), final(s1, sim.Domain())},
		{"another domain", path("status", a1.ID, h.eng.Token(a1.ID)), final(s1, "evil.cloudonix.net")},
		{"no session", path("status", a1.ID, h.eng.Token(a1.ID)), []byte(`{"status":"completed"}`)},
		{"another provider", fmt.Sprintf("/api/v1/telephony/twilio/status/%d?t=%s", a1.ID, h.eng.Token(a1.ID)), final(s1, sim.Domain())},
		{"answer with a bad token", path("answer", a1.ID, "forged-token"), []byte(`{"CallSid":"` + s1 + `"}`)},
		{"answer for another domain", path("answer", a1.ID, h.eng.Token(a1.ID)), []byte(`{"CallSid":"` + s1 + `","AccountSid":"evil"}`)},
	}
	for _, f := range forgeries {
		if got := cloudonixPost(t, h, f.path, f.body); got != http.StatusForbidden {
			t.Errorf("%s: status %d, want 403", f.name, got)
		}
	}
	if after := h.attempts(c.ID); !reflect.DeepEqual(after, before) {
		t.Fatal("forged webhooks changed the attempts")
	}
	if after := h.get(c.ID); after.ProcessedRows != campaignBefore.ProcessedRows || after.ExecutedCount != campaignBefore.ExecutedCount {
		t.Fatalf("forged webhooks changed the campaign: %+v", after)
	}
	if n := len(h.logs(c.ID, "")); n != logsBefore {
		t.Fatalf("forged webhooks logged %d entries", n-logsBefore)
	}

	// The operator hangs both calls up: they end "cancel".
	car, err := carrier.New(carrier.Cloudonix, sim.Credentials("outdial"),
		carrier.Options{BaseURLs: map[string]string{carrier.Cloudonix: sim.URL()}})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range before {
		if err := car.HangUp(context.Background(), deref(a.ProviderCallID)); err != nil {
			t.Fatal(err)
		}
	}
	done := h.waitState(c.ID, store.StateCompleted)
	checkCounters(t, done, 2, 2, 2, 2)
	settled, logsSettled := h.attempts(c.ID), len(h.logs(c.ID, ""))
	for _, a := range settled {
		if deref(a.Outcome) != "canceled" || deref(a.RawStatus) != "cancel" {
			t.Fatalf("attempt %d: %s (%s), want canceled (cancel)", a.ID, deref(a.Outcome), deref(a.RawStatus))
		}
	}
	// Replays of every genuine update (ringing and the final cancel) are
	// accepted and change nothing.
	for _, call := range sim.Calls() {
		for _, cb := range call.Callbacks {
			if status, err := sim.Replay(context.Background(), cb); err != nil || status != http.StatusNoContent {
				t.Fatalf("replay: %d, %v", status, err)
			}
		}
	}
	// A genuine-looking final of another outcome, on the right URL, is
	// ignored too: the attempt is final already.
	if got := cloudonixPost(t, h, path("status", a1.ID, h.eng.Token(a1.ID)), final(s1, sim.Domain())); got != http.StatusNoContent {
		t.Fatalf("late final: status %d, want 204", got)
	}
	if after := h.attempts(c.ID); !reflect.DeepEqual(after, settled) {
		t.Fatal("replayed webhooks changed the attempts")
	}
	checkCounters(t, h.get(c.ID), 2, 2, 2, 2)
	if n := len(h.logs(c.ID, "")); n != logsSettled {
		t.Fatalf("replayed webhooks logged %d entries", n-logsSettled)
	}
}

// TestCloudonixCampaignRateLimited: a 429 slows the campaign down and the
// attempt is retried later; it is not the contact's failure.
func TestCloudonixCampaignRateLimited(t *testing.T) {
	h, sim := cloudonixNewHarness(t, cloudonixsim.Config{Script: func(cloudonixsim.CallInfo) cloudonixsim.Script {
		return cloudonixsim.Script{TalkDuration: 2 * time.Millisecond}
	}})
	sim.TooManyRequestsNext(4)
	c := h.campaign(8, store.Settings{MaxConcurrency: 3}, nil)
	h.clock.Set(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	h.do(c.ID, store.OpStart)
	h.runThroughRateLimits(func() int { return sim.Stats().RateLimited }, c.ID)
	if st := sim.Stats(); st.RateLimited != 4 || st.CreateRequests != 12 {
		t.Fatalf("429s %d of %d create requests, want 4 of 12", st.RateLimited, st.CreateRequests)
	}
	calledOnce(t, sim.CreatesByTo(), 8, e164)
	h.checkRateLimitedCampaign(c.ID, 8)
}

// TestCloudonixCampaignAuthFailure: a 401 pauses the campaign with
// provider_auth_failed and loses nothing; resuming calls everyone else once.
func TestCloudonixCampaignAuthFailure(t *testing.T) {
	h, sim := cloudonixNewHarness(t, cloudonixsim.Config{Script: func(cloudonixsim.CallInfo) cloudonixsim.Script {
		return cloudonixsim.Script{TalkDuration: 10 * time.Millisecond}
	}})
	c := h.campaign(12, store.Settings{MaxConcurrency: 2}, nil)
	h.do(c.ID, store.OpStart)
	simWait(t, sim, "some calls placed", func(s cloudonixsim.Stats) bool { return s.Created >= 3 })
	sim.SetUnauthorized(true)
	h.waitState(c.ID, store.StatePaused)
	logs := h.logs(c.ID, "provider_auth_failed")
	if len(logs) != 1 || logs[0].Level != store.LogWarning {
		t.Fatalf("provider_auth_failed log %+v, want one warning", logs)
	}
	simPoll(t, sim, "calls in flight recorded", func() bool {
		return h.countAttempts(c.ID, store.AttemptDialing)+h.countAttempts(c.ID, store.AttemptInFlight) == 0
	})
	placed := sim.Stats().Created
	if q := h.countAttempts(c.ID, store.AttemptQueued); q != 12-placed {
		t.Fatalf("%d attempts queued after the 401, want %d (nothing lost)", q, 12-placed)
	}
	for _, a := range h.attempts(c.ID) {
		if deref(a.Outcome) == "failed" {
			t.Fatalf("attempt %d failed: a 401 is not the contact's failure", a.ID)
		}
	}
	sim.SetUnauthorized(false)
	h.do(c.ID, store.OpResume)
	done := h.waitState(c.ID, store.StateCompleted)
	checkCounters(t, done, 12, 0, 12, 12)
	calledOnce(t, sim.CreatesByTo(), 12, e164)
}

// TestCloudonixCampaignAnswerByGet: a voice application requested with GET
// (parameters in the query string, after our own token) is answered too.
func TestCloudonixCampaignAnswerByGet(t *testing.T) {
	h, sim := cloudonixNewHarness(t, cloudonixsim.Config{AnswerMethod: http.MethodGet})
	c := h.campaign(2, store.Settings{MaxConcurrency: 1}, nil)
	h.do(c.ID, store.OpStart)
	done := h.waitState(c.ID, store.StateCompleted)
	checkCounters(t, done, 2, 0, 2, 2)
	for i, call := range sim.Calls() {
		if want := fmt.Sprintf("<Say>Hello P%d</Say><Hangup/>", i); call.AnswerStatus != 200 || !strings.Contains(call.CXML, want) {
			t.Fatalf("%s: CXML %d %q, want %s", call.To, call.AnswerStatus, call.CXML, want)
		}
	}
	if peak := sim.PeakInFlight(); peak != 1 {
		t.Fatalf("peak in flight %d, want 1", peak)
	}
}
