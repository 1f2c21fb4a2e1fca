package dialer_test

// Full campaigns dialing through the Telnyx simulator: the real store,
// engine and web router, the Telnyx carrier dialing with Call Control
// (stream_url at dial, speak and hangup commands after call.answered),
// events posted as JSON to the per-attempt status URL and signed with the
// simulator's Ed25519 key (the configuration's webhook_public_key).

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer"
	"github.com/outdial/outdial/dialer/carrier"
	"github.com/outdial/outdial/dialer/carrier/telnyxsim"
	"github.com/outdial/outdial/store"
)

// telnyxHarnessSim adapts telnyxsim to providerSim.
type telnyxHarnessSim struct {
	*telnyxsim.Server
	signed, machineDetection bool
}

func (s telnyxHarnessSim) Provider() string { return carrier.Telnyx }
func (s telnyxHarnessSim) BaseURL() string  { return s.URL() }
func (s telnyxHarnessSim) Credentials() map[string]any {
	return s.Server.Credentials("", s.signed, s.machineDetection)
}

// newTelnyxHarness is a harness dialing through a Telnyx simulator started
// with cfg; its configuration has the simulator's webhook_public_key when
// signed is set and asks for machine detection when md is set.
func newTelnyxHarness(t *testing.T, cfg telnyxsim.Config, signed, md bool, opts ...harnessOption) (*harness, *telnyxsim.Server) {
	t.Helper()
	sim := telnyxsim.Start(cfg)
	return newProviderHarness(t, telnyxHarnessSim{Server: sim, signed: signed, machineDetection: md}, opts...), sim
}

// telnyxCalledOnce fails unless each of the first n numbers was dialled
// exactly once.
func telnyxCalledOnce(t *testing.T, sim *telnyxsim.Server, n int) {
	t.Helper()
	if got := sim.Stats().Dialled; got != n {
		t.Fatalf("%d calls dialled, want %d", got, n)
	}
	for i := 0; i < n; i++ {
		if got := sim.DialsTo(number(i)); got != 1 {
			t.Fatalf("%s dialled %d times, want 1", number(i), got)
		}
	}
}

// telnyxCallTo returns the simulator's last call to number to.
func telnyxCallTo(t *testing.T, sim *telnyxsim.Server, to string) telnyxsim.CallRecord {
	t.Helper()
	var rec telnyxsim.CallRecord
	found := false
	for _, c := range sim.Calls() {
		if c.To == to {
			rec, found = c, true
		}
	}
	if !found {
		t.Fatalf("no call to %s", to)
	}
	return rec
}

// telnyxCommands returns the names of a call's commands.
func telnyxCommands(rec telnyxsim.CallRecord) []string {
	var out []string
	for _, c := range rec.Commands {
		out = append(out, c.Name)
	}
	return out
}

// telnyxScripts plays a script per contact index, taken from the number.
func telnyxScripts(scripts []telnyxsim.Script) func(telnyxsim.CallInfo) telnyxsim.Script {
	return func(ci telnyxsim.CallInfo) telnyxsim.Script {
		for i, sc := range scripts {
			if ci.To == number(i) {
				return sc
			}
		}
		return telnyxsim.Script{Outcome: telnyxsim.Failed}
	}
}

// TestTelnyxCampaignOutcomes plays every outcome path in one campaign: a
// person hears the greeting and the service hangs up (the script never
// does), an answering machine ends as voicemail, and each hangup cause maps
// to its outcome with the raw cause kept.
func TestTelnyxCampaignOutcomes(t *testing.T) {
	quickSpeak := 5 * time.Millisecond
	cases := []struct {
		script  telnyxsim.Script
		outcome string
		raw     string
		cmds    []string
	}{
		{telnyxsim.Script{Outcome: telnyxsim.Human, TalkDuration: telnyxsim.Never, SpeakDuration: quickSpeak}, "answered", "normal_clearing", []string{"speak", "hangup"}},
		{telnyxsim.Script{Outcome: telnyxsim.Machine, TalkDuration: telnyxsim.Never, SpeakDuration: quickSpeak}, "voicemail", "normal_clearing", []string{"speak", "hangup"}},
		{telnyxsim.Script{Outcome: telnyxsim.Fax, TalkDuration: telnyxsim.Never, SpeakDuration: quickSpeak}, "voicemail", "normal_clearing", []string{"speak", "hangup"}},
		{telnyxsim.Script{Outcome: telnyxsim.Human, TalkDuration: 300 * time.Millisecond, SpeakDuration: telnyxsim.Never}, "answered", "normal_clearing", []string{"speak"}},
		{telnyxsim.Script{Outcome: telnyxsim.Busy, RingDelay: time.Millisecond}, "busy", "user_busy", nil},
		{telnyxsim.Script{Outcome: telnyxsim.NoAnswer, RingDelay: time.Millisecond}, "no_answer", "timeout", nil},
		{telnyxsim.Script{Outcome: telnyxsim.NoAnswer, HangupCause: "no_answer"}, "no_answer", "no_answer", nil},
		{telnyxsim.Script{Outcome: telnyxsim.NoAnswer, HangupCause: "normal_clearing", SIPHangupCause: "480"}, "no_answer", "normal_clearing", nil},
		{telnyxsim.Script{Outcome: telnyxsim.Rejected}, "failed", "call_rejected", nil},
		{telnyxsim.Script{Outcome: telnyxsim.NotFound}, "failed", "not_found", nil},
		{telnyxsim.Script{Outcome: telnyxsim.Failed}, "failed", "unspecified", nil},
		{telnyxsim.Script{Outcome: telnyxsim.Canceled}, "canceled", "originator_cancel", nil},
	}
	scripts := make([]telnyxsim.Script, len(cases))
	for i, c := range cases {
		scripts[i] = c.script
	}
	h, sim := newTelnyxHarness(t, telnyxsim.Config{Script: telnyxScripts(scripts)}, true, true)
	c := h.campaign(len(cases), store.Settings{MaxConcurrency: 3}, nil)
	h.do(c.ID, store.OpStart)
	done := h.waitState(c.ID, store.StateCompleted)
	if peak := sim.PeakInFlight(); peak > 3 {
		t.Fatalf("peak calls in flight %d, want at most 3", peak)
	}
	telnyxCalledOnce(t, sim, len(cases))
	failed := 0
	for _, cs := range cases {
		if cs.outcome != "answered" {
			failed++
		}
	}
	checkCounters(t, done, int64(len(cases)), int64(failed), int64(len(cases)), int64(len(cases)))
	attempts := h.attempts(c.ID)
	for i, cs := range cases {
		var a *store.Attempt
		for _, x := range attempts {
			if x.PhoneNumber == number(i) {
				a = x
			}
		}
		if a == nil || deref(a.Outcome) != cs.outcome || deref(a.RawStatus) != cs.raw {
			t.Errorf("case %d (%s): attempt %+v, want outcome %s raw %s", i, cs.script.Outcome, a, cs.outcome, cs.raw)
			continue
		}
		if machine := carrier.IsMachine(deref(a.AnsweredBy)); machine != (cs.outcome == "voicemail") {
			t.Errorf("case %d (%s): answered_by %s", i, cs.script.Outcome, deref(a.AnsweredBy))
		}
		rec := telnyxCallTo(t, sim, number(i))
		if a.ProviderCallID == nil || *a.ProviderCallID != rec.CallControlID {
			t.Errorf("case %d: provider call id %v, want %s", i, deref(a.ProviderCallID), rec.CallControlID)
		}
		if got := telnyxCommands(rec); !reflect.DeepEqual(got, cs.cmds) {
			t.Errorf("case %d (%s): commands %v, want %v", i, cs.script.Outcome, got, cs.cmds)
		}
		var dial map[string]any
		_ = json.Unmarshal(rec.Dial.Raw, &dial)
		if dial["answering_machine_detection"] != "detect" || dial["webhook_url"] == nil || dial["stream_url"] != nil {
			t.Errorf("case %d: dial %v, want machine detection, a webhook_url and no stream", i, dial)
		}
		if len(cs.cmds) > 0 {
			var speak struct{ Payload, Voice string }
			_ = json.Unmarshal(rec.Commands[0].Body, &speak)
			if speak.Payload != fmt.Sprintf("Hello P%d", i) || speak.Voice == "" {
				t.Errorf("case %d: speak %+v, want the rendered greeting", i, speak)
			}
		}
	}
	if st := sim.Stats(); st.EventErrors != 0 {
		t.Fatalf("%d events refused (stats %+v)", st.EventErrors, st)
	}
}

// telnyxAgentWorkflow is the greeting workflow with an agent_url.
const telnyxAgentWorkflow = `{"agent_url":"wss://agent.example/ws?tenant=acme","nodes":[
 {"id":"s","type":"startCall","data":{"name":"Start","prompt":"Greet {{first_name}}","greeting":"Hello {{first_name}}"}},
 {"id":"e","type":"endCall","data":{"name":"End","prompt":"Say goodbye"}}],
 "edges":[{"id":"e1","source":"s","target":"e","data":{"label":"done","condition":"the call is over"}}]}`

// TestTelnyxAgentStream: with an agent_url the dial itself asks for the
// media stream (attempt id and contact context in the stream URL) and no
// command follows the answer.
func TestTelnyxAgentStream(t *testing.T) {
	h, sim := newTelnyxHarness(t, telnyxsim.Config{Script: func(telnyxsim.CallInfo) telnyxsim.Script {
		return telnyxsim.Script{TalkDuration: 5 * time.Millisecond}
	}}, true, false)
	ctx := context.Background()
	wf, err := h.db.CreateWorkflow(ctx, h.org, "agent", []byte(telnyxAgentWorkflow))
	if err != nil {
		t.Fatal(err)
	}
	c, err := h.db.CreateCampaign(ctx, h.org, store.NewCampaign{Settings: store.Settings{Name: "agent", MaxConcurrency: 2, RateLimitPerSecond: 1000},
		WorkflowID: wf.ID, WorkflowName: "agent", WorkflowDefinition: []byte(telnyxAgentWorkflow), TelephonyConfigurationID: h.cfgID, SourceID: "test"},
		func(add func(store.ContactInput) error) ([]string, error) {
			for i := 0; i < 3; i++ {
				if err := add(store.ContactInput{Row: i + 2, PhoneNumber: number(i), Context: map[string]string{"first_name": fmt.Sprintf("Ann %d&", i)}}); err != nil {
					return nil, err
				}
			}
			return []string{"phone_number", "first_name"}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	h.do(c.ID, store.OpStart)
	done := h.waitState(c.ID, store.StateCompleted)
	checkCounters(t, done, 3, 0, 3, 3)
	for _, a := range h.attempts(c.ID) {
		rec := telnyxCallTo(t, sim, a.PhoneNumber)
		u, err := url.Parse(rec.Dial.StreamURL)
		if err != nil || u.Host != "agent.example" || u.Query().Get("attempt_id") != fmt.Sprint(a.ID) ||
			u.Query().Get("tenant") != "acme" || !strings.HasPrefix(u.Query().Get("first_name"), "Ann ") {
			t.Fatalf("stream_url %q for attempt %d", rec.Dial.StreamURL, a.ID)
		}
		// The agent gets the attempt's webhook token and the opt-out URL
		// built on the public URL (API.md 12.4).
		token := h.eng.Token(a.ID)
		if got, want := u.Query().Get("opt_out_token"), token; got != want {
			t.Fatalf("attempt %d: opt_out_token = %q, want %q", a.ID, got, want)
		}
		if got, want := u.Query().Get("opt_out_url"), fmt.Sprintf("%s/api/v1/telephony/opt-out/%d?t=%s", h.public, a.ID, token); got != want {
			t.Fatalf("attempt %d: opt_out_url = %q, want %q", a.ID, got, want)
		}
		if rec.Dial.StreamTrack != "inbound_track" || rec.Dial.StreamBidirectionalMode != "rtp" {
			t.Fatalf("stream options %+v", rec.Dial)
		}
		if len(rec.Commands) != 0 || deref(a.Outcome) != "answered" {
			t.Fatalf("attempt %d: outcome %s, commands %v; want answered without commands", a.ID, deref(a.Outcome), telnyxCommands(rec))
		}
	}
}

// TestTelnyxRetries: busy and no_answer are retried per retry_config; the
// retry of a number is a new attempt, dialled with a new command_id.
func TestTelnyxRetries(t *testing.T) {
	h, sim := newTelnyxHarness(t, telnyxsim.Config{Script: func(ci telnyxsim.CallInfo) telnyxsim.Script {
		switch {
		case ci.To == number(0) && ci.Attempt < 3:
			return telnyxsim.Script{Outcome: telnyxsim.Busy}
		case ci.To == number(1) && ci.Attempt < 2:
			return telnyxsim.Script{Outcome: telnyxsim.NoAnswer}
		}
		return telnyxsim.Script{TalkDuration: telnyxsim.Never, SpeakDuration: time.Millisecond}
	}}, true, false)
	h.clock.Set(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	rc := store.RetryConfig{Enabled: true, MaxRetries: 3, RetryDelaySeconds: 60, RetryOnBusy: true, RetryOnNoAnswer: true}
	c := h.campaign(2, store.Settings{RetryConfig: rc}, nil)
	h.do(c.ID, store.OpStart)
	// Whenever no call is under way the clock jumps past the retry delay.
	simPoll(t, sim, "the campaign completed through its retries", func() bool {
		if h.get(c.ID).State == store.StateCompleted {
			return true
		}
		if h.countAttempts(c.ID, store.AttemptDialing)+h.countAttempts(c.ID, store.AttemptInFlight) == 0 {
			h.advance(61*time.Second, c.ID)
		}
		return false
	})
	if sim.DialsTo(number(0)) != 3 || sim.DialsTo(number(1)) != 2 {
		t.Fatalf("dials %d and %d, want 3 and 2", sim.DialsTo(number(0)), sim.DialsTo(number(1)))
	}
	ids := map[string]bool{}
	for _, call := range sim.Calls() {
		ids[call.Dial.CommandID] = true
	}
	if len(ids) != 5 {
		t.Fatalf("%d distinct command_ids for 5 dials", len(ids))
	}
	for _, ct := range h.contacts(c.ID) {
		if deref(ct.Outcome) != "answered" {
			t.Fatalf("contact %s outcome %s, want answered at the last attempt", ct.PhoneNumber, deref(ct.Outcome))
		}
	}
}

// TestTelnyxConcurrencyAndDeliveryQuirks: a larger campaign whose events
// come late, twice or out of order never exceeds max_concurrency, and each
// call ends with its right outcome.
func TestTelnyxConcurrencyAndDeliveryQuirks(t *testing.T) {
	const n = 40
	h, sim := newTelnyxHarness(t, telnyxsim.Config{Script: func(ci telnyxsim.CallInfo) telnyxsim.Script {
		sc := telnyxsim.Script{TalkDuration: 15 * time.Millisecond, SpeakDuration: 2 * time.Millisecond, EventDelay: time.Millisecond}
		switch ci.N % 4 {
		case 1:
			sc.Duplicate = true
		case 2:
			sc.OutOfOrder = true
		case 3:
			sc.Outcome = telnyxsim.Busy
		}
		return sc
	}}, true, false)
	c := h.campaign(n, store.Settings{MaxConcurrency: 5}, nil)
	h.do(c.ID, store.OpStart)
	done := h.waitState(c.ID, store.StateCompleted)
	if peak := sim.PeakInFlight(); peak > 5 {
		t.Fatalf("peak calls in flight %d, want at most 5", peak)
	}
	telnyxCalledOnce(t, sim, n)
	busy := 0
	for _, a := range h.attempts(c.ID) {
		want := "answered"
		if telnyxCallTo(t, sim, a.PhoneNumber).Script.Outcome == telnyxsim.Busy {
			want, busy = "busy", busy+1
		}
		if deref(a.Outcome) != want {
			t.Fatalf("attempt %d: outcome %s, want %s", a.ID, deref(a.Outcome), want)
		}
	}
	checkCounters(t, done, n, int64(busy), n, n)
	for _, rec := range sim.Calls() {
		speaks := 0
		for _, cmd := range rec.Commands {
			if cmd.Name == "speak" {
				speaks++
			}
		}
		if speaks > 1 {
			t.Fatalf("call to %s got %d speak commands", rec.To, speaks)
		}
	}
}

// TestTelnyxLostHangupReconciled: when call.hangup never arrives, the
// deadline asks Telnyx; a dead call cannot tell its outcome, so the attempt
// ends unknown and its slot is freed.
func TestTelnyxLostHangupReconciled(t *testing.T) {
	h, sim := newTelnyxHarness(t, telnyxsim.Config{Script: func(telnyxsim.CallInfo) telnyxsim.Script {
		return telnyxsim.Script{Outcome: telnyxsim.Busy, LoseFinal: true}
	}}, true, false, withMaxCallSeconds(60))
	c := h.campaign(2, store.Settings{}, nil)
	h.clock.Set(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	h.do(c.ID, store.OpStart)
	simWait(t, sim, "both calls over", func(s telnyxsim.Stats) bool { return s.Final >= 2 })
	simPoll(t, sim, "both placed", func() bool { return h.countAttempts(c.ID, store.AttemptInFlight) == 2 })
	h.advance(dialer.RingTimeout+61*time.Second, c.ID)
	done := h.waitState(c.ID, store.StateCompleted)
	checkCounters(t, done, 2, 2, 2, 2)
	for _, a := range h.attempts(c.ID) {
		if deref(a.Outcome) != "unknown" {
			t.Fatalf("attempt %d: outcome %s, want unknown", a.ID, deref(a.Outcome))
		}
	}
	if sim.Stats().Gets < 2 {
		t.Fatalf("%d call lookups, want the deadline to ask Telnyx about both calls", sim.Stats().Gets)
	}
}
