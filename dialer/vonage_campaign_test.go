package dialer_test

// Full campaigns dialing through the Vonage simulator: the real store,
// engine and web router, the Vonage carrier minting RS256 application JWTs,
// events posted as JSON to the per-attempt status URL signed with HS256 JWTs
// (payload_hash), and the NCCO fetched from the per-attempt answer URL.

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
	"github.com/outdial/outdial/dialer/carrier/vonagesim"
	"github.com/outdial/outdial/store"
)

// vonageHarnessSim adapts vonagesim to providerSim.
type vonageHarnessSim struct {
	*vonagesim.Server
	machineDetection bool
}

func (s vonageHarnessSim) Provider() string { return carrier.Vonage }
func (s vonageHarnessSim) BaseURL() string  { return s.URL() }
func (s vonageHarnessSim) Credentials() map[string]any {
	return s.Server.Credentials(s.machineDetection)
}

// newVonageHarness is a harness dialing through a Vonage simulator started
// with cfg, its configuration asking for machine detection when md is set.
func newVonageHarness(t *testing.T, cfg vonagesim.Config, md bool, opts ...harnessOption) (*harness, *vonagesim.Server) {
	t.Helper()
	sim := vonagesim.Start(cfg)
	return newProviderHarness(t, vonageHarnessSim{Server: sim, machineDetection: md}, opts...), sim
}

// vonageContact is the index of the contact a simulated call dials, or -1.
func vonageContact(to string) int {
	i := -1
	if _, err := fmt.Sscanf(strings.TrimPrefix(to, "1415555"), "%d", &i); err != nil {
		return -1
	}
	return i
}

// TestVonageCampaignOutcomes runs every outcome path (machine detection on)
// with duplicated and reordered events and a retry, never above
// max_concurrency, and checks the create requests and the NCCOs.
func TestVonageCampaignOutcomes(t *testing.T) {
	type path struct {
		script                vonagesim.Script
		outcome, raw, verdict string
		retried, answered     bool
	}
	paths := []path{
		{script: vonagesim.Script{TalkDuration: 5 * time.Millisecond, Duration: 4}, outcome: "answered", raw: "completed", verdict: "human", answered: true},
		{script: vonagesim.Script{Outcome: vonagesim.Machine, TalkDuration: 2 * time.Millisecond}, outcome: "voicemail", raw: "completed", verdict: "machine", answered: true},
		{script: vonagesim.Script{Outcome: vonagesim.Busy}, outcome: "busy", raw: "busy", retried: true},
		{script: vonagesim.Script{Outcome: vonagesim.Timeout, RingDelay: 3 * time.Millisecond}, outcome: "no_answer", raw: "timeout"},
		{script: vonagesim.Script{Outcome: vonagesim.Unanswered}, outcome: "no_answer", raw: "unanswered"},
		{script: vonagesim.Script{Outcome: vonagesim.Rejected}, outcome: "failed", raw: "rejected"},
		{script: vonagesim.Script{Outcome: vonagesim.Failed}, outcome: "failed", raw: "failed"},
		{script: vonagesim.Script{Outcome: vonagesim.Cancelled}, outcome: "canceled", raw: "cancelled"},
		{script: vonagesim.Script{TalkDuration: 2 * time.Millisecond, Duplicate: true}, outcome: "answered", raw: "completed", verdict: "human", answered: true},
		// The human event comes after the final one: ignored.
		{script: vonagesim.Script{TalkDuration: 2 * time.Millisecond, OutOfOrder: true, Duplicate: true}, outcome: "answered", raw: "completed", answered: true},
		{script: vonagesim.Script{Outcome: vonagesim.Busy, OutOfOrder: true, CallbackDelay: 2 * time.Millisecond}, outcome: "busy", raw: "busy", retried: true},
	}
	n := 2 * len(paths)
	h, sim := newVonageHarness(t, vonagesim.Config{Script: func(ci vonagesim.CallInfo) vonagesim.Script {
		i := vonageContact(ci.To)
		if i < 0 || i >= n {
			return vonagesim.Script{}
		}
		if ci.Attempt > 1 { // the retry answers
			return vonagesim.Script{TalkDuration: 2 * time.Millisecond}
		}
		return paths[i%len(paths)].script
	}}, true)
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
	if st := sim.Stats(); st.CallbackErrors != 0 || st.AnswerErrors != 0 || st.Created != n+retries {
		t.Fatalf("sim stats %+v: webhooks refused or calls missing", st)
	}
	byNumber := map[string][]*store.Attempt{}
	for _, a := range h.attempts(c.ID) {
		byNumber[a.PhoneNumber] = append(byNumber[a.PhoneNumber], a)
	}
	for i := 0; i < n; i++ {
		p, list := paths[i%len(paths)], byNumber[number(i)]
		if len(list) == 0 || deref(list[0].Outcome) != p.outcome || deref(list[0].RawStatus) != p.raw {
			t.Fatalf("%s: first attempt %s (%s), want %s (%s)", number(i), deref(list[0].Outcome), deref(list[0].RawStatus), p.outcome, p.raw)
		}
		if p.retried != (len(list) == 2) || (p.retried && deref(list[1].Outcome) != "answered") {
			t.Fatalf("%s: %d attempts, retried %v", number(i), len(list), p.retried)
		}
		if p.answered && (list[0].DurationSeconds == nil || list[0].AnsweredAt == nil || strings.TrimPrefix(deref(list[0].AnsweredBy), "<nil>") != p.verdict) {
			t.Fatalf("%s: answered attempt %+v, want a duration, an answer time and answered_by %s", number(i), *list[0], p.verdict)
		}
	}
	if d := byNumber[number(0)][0].DurationSeconds; d == nil || *d != 4 {
		t.Fatalf("duration %v, want the completed event's 4 s", d)
	}
	for _, call := range sim.Calls() {
		i := vonageContact(call.To)
		r := call.Request
		if r.From == nil || r.From.Number != "14155550100" || r.AnswerMethod != "POST" || r.EventMethod != "POST" ||
			len(r.AnswerURL) != 1 || !strings.Contains(r.AnswerURL[0], "/api/v1/telephony/vonage/answer/") ||
			len(r.EventURL) != 1 || !strings.Contains(r.EventURL[0], "/api/v1/telephony/vonage/status/") ||
			r.MachineDetection != "continue" || r.RingingTimer == nil || *r.RingingTimer != int(dialer.RingTimeout/time.Second) || r.LengthTimer == nil {
			t.Fatalf("create request %+v", r)
		}
		if call.AnswerStatus != 0 {
			want := fmt.Sprintf(`[{"action":"talk","text":"Hello P%d"}]`, i)
			if call.AnswerStatus != 200 || call.NCCOContentType != "application/json" || call.NCCO != want {
				t.Fatalf("%s: NCCO %d %q %q, want %s", call.To, call.AnswerStatus, call.NCCOContentType, call.NCCO, want)
			}
		}
	}
}

// TestVonageCampaignConcurrency: many quick calls never exceed
// max_concurrency, and every contact is called once.
func TestVonageCampaignConcurrency(t *testing.T) {
	h, sim := newVonageHarness(t, vonagesim.Config{Script: func(vonagesim.CallInfo) vonagesim.Script {
		return vonagesim.Script{RingDelay: time.Millisecond, TalkDuration: 10 * time.Millisecond}
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

// TestVonageCampaignLostFinalReconciled: a call whose final event never
// comes is reconciled at its deadline with GET /v1/calls/{uuid}.
func TestVonageCampaignLostFinalReconciled(t *testing.T) {
	h, sim := newVonageHarness(t, vonagesim.Config{Script: func(ci vonagesim.CallInfo) vonagesim.Script {
		if vonageContact(ci.To) == 0 {
			return vonagesim.Script{LoseFinal: true}
		}
		return vonagesim.Script{Outcome: vonagesim.Busy, LoseFinal: true}
	}}, false, withMaxCallSeconds(60))
	c := h.campaign(2, store.Settings{MaxConcurrency: 2}, nil)
	h.clock.Set(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	h.do(c.ID, store.OpStart)
	simWait(t, sim, "both calls over", func(s vonagesim.Stats) bool { return s.Final == 2 })
	simPoll(t, sim, "both attempts in flight", func() bool { return h.countAttempts(c.ID, store.AttemptInFlight) == 2 })
	h.advance(dialer.RingTimeout+61*time.Second, c.ID)
	done := h.waitState(c.ID, store.StateCompleted)
	checkCounters(t, done, 2, 1, 2, 2)
	if f := sim.Stats().Fetches; f != 2 {
		t.Fatalf("%d call fetches, want 2", f)
	}
	for _, a := range h.attempts(c.ID) {
		want := map[string]string{number(0): "answered", number(1): "busy"}[a.PhoneNumber]
		if deref(a.Outcome) != want {
			t.Fatalf("%s: outcome %s, want %s from the call fetch", a.PhoneNumber, deref(a.Outcome), want)
		}
	}
}

// vonagePost posts body to the service at path with Authorization auth ("":
// none) and returns the HTTP status.
func vonagePost(t *testing.T, h *harness, path string, body []byte, auth string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, h.public+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// vonageHangUpAll hangs every simulated call up through the carrier, as an
// operator would.
func vonageHangUpAll(t *testing.T, sim *vonagesim.Server) {
	t.Helper()
	car, err := carrier.New(carrier.Vonage, sim.Credentials(false), carrier.Options{BaseURLs: map[string]string{carrier.Vonage: sim.URL()}})
	if err != nil {
		t.Fatal(err)
	}
	for _, call := range sim.Calls() {
		if err := car.HangUp(context.Background(), call.UUID); err != nil {
			t.Fatal(err)
		}
	}
}

// TestVonageForgedAndReplayedWebhooks posts events and answers a forger
// could make to the real router: each is 403 and changes nothing. A genuine
// signed event is applied once; the same request sent again (same JWT, same
// jti), and the simulator's own events replayed, are harmless no-ops.
func TestVonageForgedAndReplayedWebhooks(t *testing.T) {
	h, sim := newVonageHarness(t, vonagesim.Config{RecordCallbacks: true, Script: func(vonagesim.CallInfo) vonagesim.Script {
		return vonagesim.Script{RingDelay: vonagesim.Never}
	}}, false)
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
	path := func(provider, kind string, id int64, tok string) string {
		return fmt.Sprintf("/api/v1/telephony/%s/%s/%d?t=%s", provider, kind, id, url.QueryEscape(tok))
	}
	final, err := sim.EventBody(deref(a1.ProviderCallID), "completed", true)
	if err != nil {
		t.Fatal(err)
	}
	sign := func(body []byte, mod func(*vonagesim.Claims)) string {
		cl := sim.Claims(body)
		secret := sim.SignatureSecret()
		if mod != nil {
			mod(&cl)
		}
		return "Bearer " + vonagesim.Token(secret, cl)
	}
	other := []byte(strings.Replace(string(final), `"completed"`, `"busy"`, 1))
	answer, _ := json.Marshal(map[string]string{"uuid": deref(a1.ProviderCallID), "to": "14155550000", "from": "14155550100"})
	good := path("vonage", "status", a1.ID, h.eng.Token(a1.ID))
	forgeries := []struct {
		name, path string
		body       []byte
		auth       string
	}{
		{"signed with another secret", good, final, "Bearer " + vonagesim.Token("not-the-secret", sim.Claims(final))},
		{"unsigned", good, final, ""},
		{"not a bearer token", good, final, "Basic YTpi"},
		{"stale iat", good, final, sign(final, func(c *vonagesim.Claims) { c.IssuedAt = time.Now().Add(-400 * time.Second) })},
		{"body tampered", good, other, sign(final, nil)},
		{"no payload hash", good, final, sign(final, func(c *vonagesim.Claims) { c.PayloadHash = "" })},
		{"another account", good, final, sign(final, func(c *vonagesim.Claims) { c.APIKey = "other-key" })},
		{"another application", good, final, sign(final, func(c *vonagesim.Claims) { c.ApplicationID = "other-app" })},
		{"no jti", good, final, sign(final, func(c *vonagesim.Claims) { c.JTI = "" })},
		{"bad URL token", path("vonage", "status", a1.ID, "forged-token"), final, sign(final, nil)},
		{"no URL token", fmt.Sprintf("/api/v1/telephony/vonage/status/%d", a1.ID), final, sign(final, nil)},
		{"another attempt's token", path("vonage", "status", a1.ID, h.eng.Token(a2.ID)), final, sign(final, nil)},
		{"another attempt's call", path("vonage", "status", a2.ID, h.eng.Token(a2.ID)), final, sign(final, nil)},
		{"another provider", path("twilio", "status", a1.ID, h.eng.Token(a1.ID)), final, sign(final, nil)},
		{"answer signed with another secret", path("vonage", "answer", a1.ID, h.eng.Token(a1.ID)), answer, "Bearer " + vonagesim.Token("x", sim.Claims(answer))},
		{"answer unsigned", path("vonage", "answer", a1.ID, h.eng.Token(a1.ID)), answer, ""},
		{"answer with another attempt's token", path("vonage", "answer", a1.ID, h.eng.Token(a2.ID)), answer, sign(answer, nil)},
	}
	for _, f := range forgeries {
		if got := vonagePost(t, h, f.path, f.body, f.auth); got != http.StatusForbidden {
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

	// The same event, genuinely signed, is applied once; sent again with
	// the same token it is a harmless no-op (issue 15 item 7).
	genuine := sign(final, nil)
	if got := vonagePost(t, h, good, final, genuine); got != http.StatusNoContent {
		t.Fatalf("genuine event: status %d, want 204", got)
	}
	applied, logsApplied := h.attempts(c.ID), len(h.logs(c.ID, ""))
	if deref(applied[0].Outcome) != "answered" {
		t.Fatalf("genuine final: outcome %s, want answered", deref(applied[0].Outcome))
	}
	if got := vonagePost(t, h, good, final, genuine); got != http.StatusNoContent {
		t.Fatalf("replayed event: status %d, want 204 (a no-op)", got)
	}
	// The simulator's own ringing events, replayed, are no-ops too.
	for _, call := range sim.Calls() {
		if code, err := sim.Replay(context.Background(), call.UUID); err != nil || code != http.StatusNoContent {
			t.Fatalf("replay of %s's last event: %d %v, want 204", call.To, code, err)
		}
	}
	if after := h.attempts(c.ID); !reflect.DeepEqual(after, applied) || len(h.logs(c.ID, "")) != logsApplied {
		t.Fatal("replayed webhooks changed the attempts or the log")
	}

	// The operator hangs both calls up: a2 ends cancelled, a1 was final.
	vonageHangUpAll(t, sim)
	done := h.waitState(c.ID, store.StateCompleted)
	checkCounters(t, done, 2, 1, 2, 2)
	outcomes := map[string]string{}
	for _, a := range h.attempts(c.ID) {
		outcomes[a.PhoneNumber] = deref(a.Outcome)
	}
	if outcomes[a1.PhoneNumber] != "answered" || outcomes[a2.PhoneNumber] != "canceled" {
		t.Fatalf("outcomes %v, want %s answered (genuine event) and %s canceled (hung up)", outcomes, a1.PhoneNumber, a2.PhoneNumber)
	}
	settled := h.attempts(c.ID)
	for _, call := range sim.Calls() {
		if code, err := sim.Replay(context.Background(), call.UUID); err != nil || code != http.StatusNoContent {
			t.Fatalf("replay of %s's final event: %d %v, want 204", call.To, code, err)
		}
	}
	if after := h.attempts(c.ID); !reflect.DeepEqual(after, settled) {
		t.Fatal("replayed final events changed the attempts")
	}
}

// TestVonageCampaignUnsignedWebhooks: without a signature secret the events
// are accepted on the per-attempt URL token alone, and a bad token is still
// 403.
func TestVonageCampaignUnsignedWebhooks(t *testing.T) {
	h, sim := newVonageHarness(t, vonagesim.Config{Unsigned: true}, false)
	c := h.campaign(3, store.Settings{MaxConcurrency: 2}, nil)
	h.do(c.ID, store.OpStart)
	done := h.waitState(c.ID, store.StateCompleted)
	checkCounters(t, done, 3, 0, 3, 3)
	if st := sim.Stats(); st.CallbackErrors != 0 || st.AnswerErrors != 0 {
		t.Fatalf("sim stats %+v", st)
	}
	a := h.attempts(c.ID)[0]
	body, _ := sim.EventBody(deref(a.ProviderCallID), "busy", true)
	if got := vonagePost(t, h, fmt.Sprintf("/api/v1/telephony/vonage/status/%d?t=forged", a.ID), body, ""); got != http.StatusForbidden {
		t.Fatalf("bad token: status %d, want 403", got)
	}
}

// TestVonageCampaignRateLimited: a 429 slows the campaign down and the
// attempt is retried later; it is not the contact's failure.
func TestVonageCampaignRateLimited(t *testing.T) {
	h, sim := newVonageHarness(t, vonagesim.Config{Script: func(vonagesim.CallInfo) vonagesim.Script {
		return vonagesim.Script{TalkDuration: 2 * time.Millisecond}
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

// TestVonageCampaignAuthFailure: a 401 pauses the campaign with
// provider_auth_failed and loses nothing; resuming calls everyone else once.
func TestVonageCampaignAuthFailure(t *testing.T) {
	h, sim := newVonageHarness(t, vonagesim.Config{Script: func(vonagesim.CallInfo) vonagesim.Script {
		return vonagesim.Script{TalkDuration: 10 * time.Millisecond}
	}}, false)
	c := h.campaign(12, store.Settings{MaxConcurrency: 2}, nil)
	h.do(c.ID, store.OpStart)
	simWait(t, sim, "some calls placed", func(s vonagesim.Stats) bool { return s.Created >= 3 })
	sim.SetUnauthorized(true)
	h.waitState(c.ID, store.StatePaused)
	logs := h.logs(c.ID, "provider_auth_failed")
	if len(logs) != 1 || logs[0].Level != store.LogWarning || logs[0].Details["http_status"] != float64(401) {
		t.Fatalf("provider_auth_failed log %+v, want one warning with http_status 401", logs)
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
	calledOnce(t, sim.CreatesByTo(), 12, noPlus)
}
