package dialer_test

// Full campaigns through the ARI carrier and the Asterisk simulator
// (arisim): REST originates, statuses over the events websocket.

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer/carrier"
	"github.com/outdial/outdial/dialer/carrier/arisim"
	"github.com/outdial/outdial/store"
)

// ariProvider adapts arisim to providerSim: the credentials carry the
// simulator's URL as ari_endpoint.
type ariProvider struct{ *arisim.Server }

func (s ariProvider) Provider() string            { return carrier.ARI }
func (s ariProvider) BaseURL() string             { return "" }
func (s ariProvider) Credentials() map[string]any { return s.Server.Credentials() }

// newARIHarness is a harness dialing through an Asterisk simulator.
func newARIHarness(t *testing.T, cfg arisim.Config, opts ...harnessOption) (*harness, *arisim.Server) {
	t.Helper()
	sim := arisim.Start(cfg)
	return newProviderHarness(t, ariProvider{sim}, opts...), sim
}

// ariChannelID is the channel id the carrier derives for attempt id.
func ariChannelID(id int64) string { return fmt.Sprintf("outdial-%s-%d", arisim.DefaultApp, id) }

// ariCheckOriginatedOnce fails unless every attempt's channel was
// originated exactly once (none of unplaced) and nothing else was.
func ariCheckOriginatedOnce(h *harness, sim *arisim.Server, id int64, unplaced map[int64]bool) {
	h.t.Helper()
	by := sim.OriginatesByID()
	n := 0
	for _, a := range h.attempts(id) {
		want := 1
		if unplaced[a.ID] {
			want = 0
		}
		if got := by[ariChannelID(a.ID)]; got != want {
			h.t.Fatalf("attempt %d (%s): channel originated %d times, want %d", a.ID, a.PhoneNumber, got, want)
		}
		n += want
	}
	if len(by) != n {
		h.t.Fatalf("%d channel ids originated, want %d: %v", len(by), n, by)
	}
	if st := sim.Stats(); st.Conflicts != 0 {
		h.t.Fatalf("%d originates refused as duplicates", st.Conflicts)
	}
}

// ariAgentWorkflow is greetingWorkflow with an agent_url.
const ariAgentWorkflow = `{"agent_url":"wss://agent.example/ws","nodes":[
 {"id":"s","type":"startCall","data":{"name":"Start","prompt":"Greet {{first_name}}","greeting":"Hello {{first_name}}"}},
 {"id":"e","type":"endCall","data":{"name":"End","prompt":"Say goodbye"}}],
 "edges":[{"id":"e1","source":"s","target":"e","data":{"label":"done","condition":"the call is over"}}]}`

// ariAgentCampaign is a campaign of n contacts whose workflow hands
// answered calls to a voice agent.
func ariAgentCampaign(h *harness, n int, s store.Settings) *store.Campaign {
	h.t.Helper()
	return ariAgentCampaignFrom(h, 0, n, s)
}

// ariAgentCampaignFrom is ariAgentCampaign of the numbers number(first) to
// number(first+n-1); its campaign and workflow are named after first.
func ariAgentCampaignFrom(h *harness, first, n int, s store.Settings) *store.Campaign {
	h.t.Helper()
	ctx := context.Background()
	name := "agent"
	if first > 0 {
		name = fmt.Sprintf("agent-%d", first)
	}
	wf, err := h.db.CreateWorkflow(ctx, h.org, name, []byte(ariAgentWorkflow))
	if err != nil {
		h.t.Fatal(err)
	}
	s.Name = name
	if s.RateLimitPerSecond == 0 {
		s.RateLimitPerSecond = 1000
	}
	c, err := h.db.CreateCampaign(ctx, h.org, store.NewCampaign{Settings: s, WorkflowID: wf.ID, WorkflowName: name,
		WorkflowDefinition: []byte(ariAgentWorkflow), TelephonyConfigurationID: h.cfgID, SourceID: "test"},
		func(add func(store.ContactInput) error) ([]string, error) {
			for i := first; i < first+n; i++ {
				if err := add(store.ContactInput{Row: i - first + 2, PhoneNumber: number(i),
					Context: map[string]string{"first_name": fmt.Sprintf("P%d", i)}}); err != nil {
					return nil, err
				}
			}
			return []string{"phone_number", "first_name"}, nil
		})
	if err != nil {
		h.t.Fatal(err)
	}
	return c
}

// ariIndex is the contact index of a number (number(i) ends in i).
func ariIndex(num string) int {
	var i int
	fmt.Sscanf(num[len(num)-4:], "%d", &i)
	return i
}

// TestARICampaignOutcomes: every outcome path, behind Local/ with both
// destroy orders, within max_concurrency; answered calls without an agent
// are hung up at once and recorded answered.
func TestARICampaignOutcomes(t *testing.T) {
	type want struct{ outcome, raw string }
	scripts := []struct {
		script arisim.Script
		want   want
	}{
		{arisim.Script{Outcome: arisim.Answer, RingDelay: 5 * time.Millisecond, TalkDuration: arisim.Never}, want{"answered", "answered cause=16 far_cause=16"}},
		{arisim.Script{Outcome: arisim.Busy, RingDelay: 5 * time.Millisecond}, want{"busy", "dialstatus=BUSY cause=0 far_cause=17"}},
		{arisim.Script{Outcome: arisim.Busy, FarHalfLast: true}, want{"busy", "dialstatus=BUSY cause=0"}},
		{arisim.Script{Outcome: arisim.NoAnswer, RingDelay: 10 * time.Millisecond}, want{"no_answer", "cause=19 far_cause=19"}},
		{arisim.Script{Outcome: arisim.Congestion}, want{"failed", "dialstatus=CONGESTION cause=0 far_cause=34"}},
		{arisim.Script{Outcome: arisim.Unavailable, FarHalfLast: true, FarHalfDelay: 5 * time.Millisecond}, want{"failed", "dialstatus=CHANUNAVAIL cause=0"}},
		{arisim.Script{Outcome: arisim.Rejected}, want{"busy", "cause=0 far_cause=21"}},
		{arisim.Script{Outcome: arisim.Rejected, FarHalfLast: true, FarHalfDelay: 5 * time.Millisecond}, want{"busy", "cause=0 far_cause=21"}},
	}
	const rounds = 3
	h, sim := newARIHarness(t, arisim.Config{Script: func(ci arisim.CallInfo) arisim.Script {
		return scripts[ariIndex(ci.Number)%len(scripts)].script
	}})
	n := rounds * len(scripts)
	c := h.campaign(n, store.Settings{MaxConcurrency: 4}, nil)
	h.do(c.ID, store.OpStart)
	done := h.waitState(c.ID, store.StateCompleted)
	answered := 0
	for _, a := range h.attempts(c.ID) {
		w := scripts[ariIndex(a.PhoneNumber)%len(scripts)].want
		if deref(a.Outcome) != w.outcome || deref(a.RawStatus) != w.raw || deref(a.ProviderCallID) != ariChannelID(a.ID) {
			t.Fatalf("%s: outcome %s raw %q call %s; want %s %q %s", a.PhoneNumber, deref(a.Outcome), deref(a.RawStatus),
				deref(a.ProviderCallID), w.outcome, w.raw, ariChannelID(a.ID))
		}
		if w.outcome == "answered" {
			answered++
		}
	}
	checkCounters(t, done, int64(n), int64(n-answered), int64(n), int64(n))
	ariCheckOriginatedOnce(h, sim, c.ID, nil)
	if st := sim.Stats(); st.PeakInFlight > 4 || st.HangUps != answered {
		t.Fatalf("sim: peak %d (want at most 4), %d hang-ups (want %d)", st.PeakInFlight, st.HangUps, answered)
	}
	for _, r := range sim.Requests() {
		ep := r.Query.Get("endpoint")
		if !strings.HasPrefix(ep, "Local/+1415555") || !strings.HasSuffix(ep, "@outdial") ||
			r.Query.Get("callerId") != "+14155550100" || r.Query.Get("timeout") != "60" || r.Query.Get("app") != arisim.DefaultApp {
			t.Fatalf("originate %v", r.Query)
		}
	}
}

// TestARICampaignConcurrency: many calls ringing a while never exceed
// max_concurrency at the PBX.
func TestARICampaignConcurrency(t *testing.T) {
	h, sim := newARIHarness(t, arisim.Config{Script: func(ci arisim.CallInfo) arisim.Script {
		return arisim.Script{Outcome: arisim.Answer, RingDelay: time.Duration(30+ci.N%7) * time.Millisecond}
	}})
	c := h.campaign(40, store.Settings{MaxConcurrency: 6}, nil)
	h.do(c.ID, store.OpStart)
	done := h.waitState(c.ID, store.StateCompleted)
	checkCounters(t, done, 40, 0, 40, 40)
	ariCheckOriginatedOnce(h, sim, c.ID, nil)
	if p := sim.Stats().PeakInFlight; p > 6 || p < 2 {
		t.Fatalf("peak channels in flight %d, want 2..6", p)
	}
}

// TestARICampaignRetries: busy and no-answer contacts are retried with a
// new channel id (the attempt's), and answer the second time.
func TestARICampaignRetries(t *testing.T) {
	h, sim := newARIHarness(t, arisim.Config{Script: func(ci arisim.CallInfo) arisim.Script {
		switch {
		case ci.Attempt > 1:
			return arisim.Script{Outcome: arisim.Answer}
		case ariIndex(ci.Number)%2 == 0:
			return arisim.Script{Outcome: arisim.Busy}
		}
		return arisim.Script{Outcome: arisim.NoAnswer, RingDelay: 5 * time.Millisecond}
	}})
	rc := store.RetryConfig{Enabled: true, MaxRetries: 2, RetryDelaySeconds: 30, RetryOnBusy: true, RetryOnNoAnswer: true}
	c := h.campaign(6, store.Settings{MaxConcurrency: 3, RetryConfig: rc}, nil)
	h.clock.Set(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	h.do(c.ID, store.OpStart)
	simPoll(h.t, sim, "six first attempts over", func() bool {
		return h.countAttempts(c.ID, store.AttemptDone) == 6 && h.countAttempts(c.ID, store.AttemptQueued) == 6
	})
	h.advance(31*time.Second, c.ID)
	done := h.waitState(c.ID, store.StateCompleted)
	checkCounters(t, done, 6, 0, 12, 12)
	ariCheckOriginatedOnce(h, sim, c.ID, nil)
	for i := 0; i < 6; i++ {
		if n := sim.OriginatesTo(number(i)); n != 2 {
			t.Fatalf("%s called %d times, want 2", number(i), n)
		}
	}
	for _, a := range h.attempts(c.ID) {
		want := "answered"
		if a.Attempt == 1 {
			want = map[bool]string{true: "busy", false: "no_answer"}[ariIndex(a.PhoneNumber)%2 == 0]
		}
		if deref(a.Outcome) != want {
			t.Fatalf("%s #%d: %s, want %s", a.PhoneNumber, a.Attempt, deref(a.Outcome), want)
		}
	}
}

// TestARICampaignAgent: with an agent URL, answered calls are bridged with
// an externalMedia channel to ws_client_name carrying the attempt id and
// the contact's context; the callee's hang-up ends the call answered and
// the media channel and bridge are removed.
func TestARICampaignAgent(t *testing.T) {
	h, sim := newARIHarness(t, arisim.Config{Script: func(arisim.CallInfo) arisim.Script {
		return arisim.Script{Outcome: arisim.Answer, TalkDuration: arisim.Never}
	}})
	c := ariAgentCampaign(h, 5, store.Settings{MaxConcurrency: 2})
	h.do(c.ID, store.OpStart)
	// The callee hangs up each call once it is bridged with its agent.
	hungUp := map[string]bool{}
	for len(hungUp) < 5 {
		simPoll(h.t, sim, "a call bridged", func() bool {
			for _, b := range sim.Bridges() {
				call := strings.TrimSuffix(b.ID, "-bridge")
				if len(b.Channels) == 2 && !hungUp[call] {
					hungUp[call] = sim.HangUp(call)
					return true
				}
			}
			return false
		})
	}
	done := h.waitState(c.ID, store.StateCompleted)
	checkCounters(t, done, 5, 0, 5, 5)
	simWait(h.t, sim, "media channels removed", func(st arisim.Stats) bool { return st.HangUps == 5 })
	media := map[string]arisim.MediaRecord{}
	for _, m := range sim.Media() {
		media[m.ChannelID] = m
	}
	for _, a := range h.attempts(c.ID) {
		m, ok := media[ariChannelID(a.ID)+"-media"]
		if !ok || deref(a.Outcome) != "answered" {
			t.Fatalf("attempt %d: outcome %s, media %v", a.ID, deref(a.Outcome), ok)
		}
		want := fmt.Sprintf(`{"first_name":"P%d"}`, ariIndex(a.PhoneNumber))
		token := h.eng.Token(a.ID)
		if m.Variables["OUTDIAL_ATTEMPT_ID"] != fmt.Sprint(a.ID) || m.Variables["OUTDIAL_CONTEXT"] != want ||
			m.Variables["OUTDIAL_AGENT_URL"] != "wss://agent.example/ws" || m.Query.Get("external_host") != arisim.DefaultWSClient ||
			m.Variables["OUTDIAL_OPT_OUT_TOKEN"] != token ||
			m.Variables["OUTDIAL_OPT_OUT_URL"] != fmt.Sprintf("%s/api/v1/telephony/opt-out/%d?t=%s", h.public, a.ID, token) {
			t.Fatalf("attempt %d media %+v", a.ID, m)
		}
	}
	for _, b := range sim.Bridges() {
		if len(b.Added) != 2 {
			t.Fatalf("bridge %+v, want the call and its media", b)
		}
	}
	simPoll(h.t, sim, "bridges deleted", func() bool {
		for _, b := range sim.Bridges() {
			if !b.Deleted {
				return false
			}
		}
		return len(sim.Bridges()) == 5
	})
}

// TestARICampaignWebsocketDrop drops the events websocket mid-campaign
// while four calls talk and refuses reconnects for a while; two calls end
// meanwhile (their events lost). The carrier reconnects, finds them gone
// and finishes them answered (they were seen answered), the others go on;
// the campaign completes, nobody is dialled twice and no channel id is
// originated twice.
func TestARICampaignWebsocketDrop(t *testing.T) {
	h, sim := newARIHarness(t, arisim.Config{Script: func(ci arisim.CallInfo) arisim.Script {
		if ci.N <= 4 {
			return arisim.Script{Outcome: arisim.Answer, TalkDuration: arisim.Never}
		}
		return arisim.Script{Outcome: arisim.Answer, TalkDuration: 10 * time.Millisecond}
	}})
	c := ariAgentCampaign(h, 12, store.Settings{MaxConcurrency: 4})
	h.do(c.ID, store.OpStart)
	simWait(h.t, sim, "four calls bridged", func(st arisim.Stats) bool { return st.AddChannels == 4 })
	calls := sim.Calls()

	sim.RefuseEvents(true)
	sim.DropEvents()
	sim.HangUp(calls[0].ChannelID)
	sim.HangUp(calls[1].ChannelID)
	simWait(h.t, sim, "reconnects refused", func(st arisim.Stats) bool { return st.Refused >= 2 && st.Ended == 2 })
	if st := sim.Stats(); st.Originated != 4 {
		t.Fatalf("%d calls placed during the drop, want none (the slots are taken)", st.Originated)
	}
	sim.RefuseEvents(false)
	simWait(h.t, sim, "two more calls", func(st arisim.Stats) bool { return st.Originated >= 6 && st.Connects >= 2 })
	sim.HangUp(calls[2].ChannelID)
	sim.HangUp(calls[3].ChannelID)
	done := h.waitState(c.ID, store.StateCompleted)
	checkCounters(t, done, 12, 0, 12, 12)
	ariCheckOriginatedOnce(h, sim, c.ID, nil)
	gone := 0
	for _, a := range h.attempts(c.ID) {
		if deref(a.Outcome) != "answered" {
			t.Fatalf("%s: %s (%s), want answered", a.PhoneNumber, deref(a.Outcome), deref(a.RawStatus))
		}
		if strings.HasPrefix(deref(a.RawStatus), "channel_gone") {
			gone++
		}
	}
	if gone != 2 {
		t.Fatalf("%d calls finished by the reconciliation, want the 2 that ended during the drop", gone)
	}
	if p := sim.Stats().PeakInFlight; p > 4 {
		t.Fatalf("peak %d > max_concurrency 4", p)
	}
}

// TestARICampaignCrashRestart crashes the engine while two calls ring and
// two originates are under way; one of those reached Asterisk, the other
// did not. After the restart the ringing calls and the one that reached
// Asterisk (found by its derived channel id) are followed to their end;
// the other ends unknown and is never originated; the campaign completes.
func TestARICampaignCrashRestart(t *testing.T) {
	h, sim := newARIHarness(t, arisim.Config{Script: func(ci arisim.CallInfo) arisim.Script {
		if ci.N <= 3 {
			return arisim.Script{Outcome: arisim.Answer, RingDelay: arisim.Never}
		}
		return arisim.Script{Outcome: arisim.Answer}
	}})
	var originates, hanging atomic.Int32
	release := make(chan struct{})
	var mu sync.Mutex
	var reached, lost string
	sim.SetFault(func(r arisim.Request) *arisim.Fault {
		if r.Op != arisim.OpOriginate {
			return nil
		}
		switch originates.Add(1) {
		case 3:
			mu.Lock()
			reached = r.ID
			mu.Unlock()
			hanging.Add(1)
			<-release
			return &arisim.Fault{Status: http.StatusInternalServerError, Message: "Internal Server Error", Originate: true}
		case 4:
			mu.Lock()
			lost = r.ID
			mu.Unlock()
			hanging.Add(1)
			<-release
			return &arisim.Fault{Status: http.StatusInternalServerError, Message: "Internal Server Error"}
		}
		return nil
	})
	c := h.campaign(10, store.Settings{MaxConcurrency: 4}, nil)
	h.do(c.ID, store.OpStart)
	simWait(h.t, sim, "two calls ringing", func(st arisim.Stats) bool { return st.Originated == 2 && st.Events >= 4 })
	simPoll(h.t, sim, "two in flight, two dialing", func() bool {
		return hanging.Load() == 2 && h.countAttempts(c.ID, store.AttemptInFlight) == 2 && h.countAttempts(c.ID, store.AttemptDialing) == 2
	})

	h.crash()
	close(release)
	simWait(h.t, sim, "the third call placed", func(st arisim.Stats) bool { return st.Originated == 3 && st.Listeners == 0 })
	h.startEngine()
	simWait(h.t, sim, "events again", func(st arisim.Stats) bool { return st.Listeners == 1 })
	mu.Lock()
	reachedID, lostID := reached, lost
	mu.Unlock()
	simPoll(h.t, sim, "the reached attempt followed", func() bool {
		for _, a := range h.attempts(c.ID) {
			if ariChannelID(a.ID) == reachedID {
				return a.State == store.AttemptInFlight
			}
		}
		return false
	})
	for _, call := range sim.Calls()[:3] {
		sim.Answer(call.ChannelID)
	}
	done := h.waitState(c.ID, store.StateCompleted)
	checkCounters(t, done, 10, 1, 9, 10)
	var lostAttempt int64
	for _, a := range h.attempts(c.ID) {
		switch ariChannelID(a.ID) {
		case lostID:
			lostAttempt = a.ID
			if deref(a.Outcome) != "unknown" || !strings.Contains(deref(a.Error), "not placed again") {
				t.Fatalf("lost attempt: outcome %s error %q, want unknown, not placed again", deref(a.Outcome), deref(a.Error))
			}
		default:
			if deref(a.Outcome) != "answered" || a.Attempt != 1 {
				t.Fatalf("%s #%d: %s (%s), want answered", a.PhoneNumber, a.Attempt, deref(a.Outcome), deref(a.RawStatus))
			}
		}
	}
	ariCheckOriginatedOnce(h, sim, c.ID, map[int64]bool{lostAttempt: true})
}

// TestARICampaignAuthFailure: Asterisk refusing the ARI password pauses the
// campaign with provider_auth_failed; resuming once it works calls
// everyone once.
func TestARICampaignAuthFailure(t *testing.T) {
	h, sim := newARIHarness(t, arisim.Config{})
	sim.SetUnauthorized(true)
	c := h.campaign(5, store.Settings{MaxConcurrency: 2}, nil)
	h.do(c.ID, store.OpStart)
	h.waitState(c.ID, store.StatePaused)
	if logs := h.logs(c.ID, "provider_auth_failed"); len(logs) != 1 || logs[0].Details["http_status"] != float64(401) {
		t.Fatalf("provider_auth_failed logs %+v", logs)
	}
	sim.SetUnauthorized(false)
	h.do(c.ID, store.OpResume)
	done := h.waitState(c.ID, store.StateCompleted)
	checkCounters(t, done, 5, 0, 5, 5)
	ariCheckOriginatedOnce(h, sim, c.ID, nil)
}

// TestARICampaignRejected: an originate Asterisk refuses (400) fails the
// attempt, logged as call_initiation_failed.
func TestARICampaignRejected(t *testing.T) {
	h, sim := newARIHarness(t, arisim.Config{})
	sim.SetFault(func(r arisim.Request) *arisim.Fault {
		if r.Op == arisim.OpOriginate {
			return &arisim.Fault{Status: http.StatusBadRequest, Message: "Invalid endpoint"}
		}
		return nil
	})
	c := h.campaign(3, store.Settings{MaxConcurrency: 2}, nil)
	h.do(c.ID, store.OpStart)
	done := h.waitState(c.ID, store.StateCompleted)
	checkCounters(t, done, 3, 3, 0, 3)
	if logs := h.logs(c.ID, "call_initiation_failed"); len(logs) != 1 {
		t.Fatalf("call_initiation_failed logs %+v", logs)
	}
	for _, a := range h.attempts(c.ID) {
		if deref(a.Outcome) != "failed" || !strings.Contains(deref(a.Error), "Invalid endpoint") {
			t.Fatalf("attempt %d: %s %q", a.ID, deref(a.Outcome), deref(a.Error))
		}
	}
}

// TestARICampaignWebhooksRefused: ARI sends no webhooks, so anything posted
// to an ARI callback URL, even with the attempt's valid token, is 403 and
// changes nothing.
func TestARICampaignWebhooksRefused(t *testing.T) {
	h, sim := newARIHarness(t, arisim.Config{Script: func(arisim.CallInfo) arisim.Script {
		return arisim.Script{Outcome: arisim.Answer, RingDelay: arisim.Never}
	}})
	c := h.campaign(1, store.Settings{MaxConcurrency: 1}, nil)
	h.do(c.ID, store.OpStart)
	simPoll(h.t, sim, "the call in flight", func() bool { return h.countAttempts(c.ID, store.AttemptInFlight) == 1 })
	a := h.attempts(c.ID)[0]
	for _, kind := range []string{"status", "answer"} {
		u := fmt.Sprintf("%s/api/v1/telephony/ari/%s/%d?t=%s", h.public, kind, a.ID, h.eng.Token(a.ID))
		resp, err := http.Post(u, "application/json", strings.NewReader(`{"type":"ChannelDestroyed","cause":16}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Fatalf("%s webhook: %d, want 403", kind, resp.StatusCode)
		}
	}
	// The refused webhooks did not end the call (its own ringing events may
	// still move raw_status on).
	if b := h.attempts(c.ID)[0]; b.State != store.AttemptInFlight || b.Outcome != nil || b.AnsweredAt != nil {
		t.Fatalf("attempt changed: %s %s outcome %s", b.State, deref(b.RawStatus), deref(b.Outcome))
	}
	sim.Answer(ariChannelID(a.ID))
	h.waitState(c.ID, store.StateCompleted)
}
