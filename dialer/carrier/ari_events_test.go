package carrier

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer/carrier/arisim"
)

// ariTestSink records what an EventSource reports and answers with answer.
type ariTestSink struct {
	mu       sync.Mutex
	statuses map[int64][]Status
	answers  []int64
	answer   Answer
	err      error
	changed  chan struct{}
	inFlight []FollowedCall // what InFlight answers
}

func newARITestSink() *ariTestSink {
	return &ariTestSink{statuses: map[int64][]Status{}, changed: make(chan struct{}, 1)}
}

func (s *ariTestSink) Status(_ context.Context, attemptID int64, st Status) {
	s.mu.Lock()
	s.statuses[attemptID] = append(s.statuses[attemptID], st)
	s.mu.Unlock()
	s.poke()
}

func (s *ariTestSink) Answer(_ context.Context, attemptID int64) (Answer, error) {
	s.mu.Lock()
	s.answers = append(s.answers, attemptID)
	a, err := s.answer, s.err
	s.mu.Unlock()
	a.AttemptID = attemptID
	return a, err
}

func (s *ariTestSink) InFlight(context.Context) ([]FollowedCall, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inFlight, nil
}

func (s *ariTestSink) poke() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// final waits for attempt id's final status; it fails on a second final.
func (s *ariTestSink) final(t *testing.T, id int64) Status {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		s.mu.Lock()
		var finals []Status
		for _, st := range s.statuses[id] {
			if st.Final {
				finals = append(finals, st)
			}
		}
		all := append([]Status(nil), s.statuses[id]...)
		s.mu.Unlock()
		if len(finals) > 1 {
			t.Fatalf("attempt %d: %d final statuses %+v", id, len(finals), finals)
		}
		if len(finals) == 1 {
			return finals[0]
		}
		select {
		case <-s.changed:
		case <-deadline:
			t.Fatalf("attempt %d: no final status (statuses %+v)", id, all)
		}
	}
}

// raws is attempt id's statuses' Raw values.
func (s *ariTestSink) raws(id int64) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, st := range s.statuses[id] {
		out = append(out, st.Raw)
	}
	return out
}

// ariTestTiming is fast timing for tests.
func ariTestTiming() ariTiming {
	return ariTiming{backoff: func(int) time.Duration { return 5 * time.Millisecond }, sleep: ariSleep, logEvery: time.Minute,
		farGrace: 100 * time.Millisecond, ping: time.Second, dialTimeout: time.Second,
		eventsWait: time.Second, eventsRetry: 50 * time.Millisecond}
}

// startARIEvents builds a carrier on sim, runs its Events with sink until
// the test ends and waits for the websocket.
func startARIEvents(t *testing.T, sim *arisim.Server, sink EventSink) *ari {
	t.Helper()
	c, err := New(ARI, sim.Credentials(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	a := c.(*ari)
	a.timing = ariTestTiming()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.Events(ctx, sink)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	ariWaitSim(t, sim, "events websocket", func(st arisim.Stats) bool { return st.Listeners == 1 })
	return a
}

func ariWaitSim(t *testing.T, sim *arisim.Server, what string, cond func(arisim.Stats) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := sim.Wait(ctx, cond); err != nil {
		t.Fatalf("timed out waiting for %s (sim %+v)", what, sim.Stats())
	}
}

func ariPlace(t *testing.T, a *ari, id int64, to string) {
	t.Helper()
	if _, err := a.Place(context.Background(), Call{AttemptID: id, To: to, RingTimeout: 30 * time.Second}); err != nil {
		t.Fatalf("place %d: %v", id, err)
	}
}

// TestARIEventOutcomes plays every scripted outcome, behind Local/ (both
// destroy orders) and on a single channel, and checks the final status.
func TestARIEventOutcomes(t *testing.T) {
	cases := []struct {
		name     string
		template string
		script   arisim.Script
		outcome  string
		raw      string
	}{
		{"answered", "", arisim.Script{Outcome: arisim.Answer, TalkDuration: arisim.Never}, OutcomeAnswered, "answered cause=16 far_cause=16"},
		{"busy", "", arisim.Script{Outcome: arisim.Busy}, OutcomeBusy, "dialstatus=BUSY cause=0 far_cause=17"},
		{"busy far last", "", arisim.Script{Outcome: arisim.Busy, FarHalfLast: true}, OutcomeBusy, "dialstatus=BUSY cause=0"},
		{"no answer", "", arisim.Script{Outcome: arisim.NoAnswer, RingDelay: 10 * time.Millisecond}, OutcomeNoAnswer, "cause=19 far_cause=19"},
		{"no answer far last", "", arisim.Script{Outcome: arisim.NoAnswer, RingDelay: 10 * time.Millisecond, FarHalfLast: true}, OutcomeNoAnswer, "cause=19 far_cause=19"},
		{"congestion", "", arisim.Script{Outcome: arisim.Congestion}, OutcomeFailed, "dialstatus=CONGESTION cause=0 far_cause=34"},
		{"unavailable", "", arisim.Script{Outcome: arisim.Unavailable}, OutcomeFailed, "dialstatus=CHANUNAVAIL cause=0 far_cause=20"},
		{"rejected", "", arisim.Script{Outcome: arisim.Rejected}, OutcomeBusy, "cause=0 far_cause=21"},
		{"rejected far within grace", "", arisim.Script{Outcome: arisim.Rejected, FarHalfLast: true, FarHalfDelay: 20 * time.Millisecond}, OutcomeBusy, "cause=0 far_cause=21"},
		{"rejected far after grace", "", arisim.Script{Outcome: arisim.Rejected, FarHalfLast: true, FarHalfDelay: time.Second}, OutcomeFailed, "cause=0"},
		{"pjsip busy", "PJSIP/{number}@trunk", arisim.Script{Outcome: arisim.Busy}, OutcomeBusy, "dialstatus=BUSY cause=17"},
		{"pjsip rejected", "PJSIP/{number}@trunk", arisim.Script{Outcome: arisim.Rejected}, OutcomeBusy, "cause=21"},
		{"pjsip no answer", "PJSIP/{number}@trunk", arisim.Script{Outcome: arisim.NoAnswer, RingDelay: 10 * time.Millisecond}, OutcomeNoAnswer, "cause=19"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sim := arisim.Start(arisim.Config{DialTemplate: tc.template, Script: func(arisim.CallInfo) arisim.Script { return tc.script }})
			defer sim.Close()
			sink := newARITestSink()
			a := startARIEvents(t, sim, sink)
			ariPlace(t, a, 1, "+14155550001")
			if tc.outcome == OutcomeAnswered {
				ariWaitSim(t, sim, "answered", func(st arisim.Stats) bool { return st.Answered == 1 && st.HangUps == 1 })
			}
			st := sink.final(t, 1)
			if st.Outcome != tc.outcome || st.Raw != tc.raw || st.ProviderCallID != a.CallID(1) {
				t.Fatalf("final %+v, want %s %q", st, tc.outcome, tc.raw)
			}
			if tc.outcome == OutcomeAnswered {
				// No agent URL: hung up right after the answer.
				if h := sim.HangUps(); len(h) != 1 || h[0] != a.CallID(1) {
					t.Fatalf("hang-ups %v", h)
				}
				if r := sink.raws(1); r[0] != "answered" {
					t.Fatalf("statuses %v", r)
				}
			}
			if tc.script.Outcome == arisim.NoAnswer && sink.raws(1)[0] != "ringing" {
				t.Fatalf("statuses %v, want ringing first", sink.raws(1))
			}
		})
	}
}

// TestARICancel: a call we hang up while it rings ends canceled.
func TestARICancel(t *testing.T) {
	sim := arisim.Start(arisim.Config{Script: func(arisim.CallInfo) arisim.Script {
		return arisim.Script{Outcome: arisim.NoAnswer, RingDelay: arisim.Never}
	}})
	defer sim.Close()
	sink := newARITestSink()
	a := startARIEvents(t, sim, sink)
	ariPlace(t, a, 3, "+14155550003")
	ariWaitSim(t, sim, "ringing", func(st arisim.Stats) bool { return st.Events >= 2 })
	if err := a.HangUp(context.Background(), a.CallID(3)); err != nil {
		t.Fatal(err)
	}
	if st := sink.final(t, 3); st.Outcome != OutcomeCanceled || st.Raw != "dialstatus=CANCEL cause=16 far_cause=16 hung_up" {
		t.Fatalf("final %+v", st)
	}
}

// TestARIAnswerWithAgent: an answered call with an agent URL gets an
// externalMedia channel to ws_client_name and a mixing bridge with both;
// when the callee hangs up both are removed.
func TestARIAnswerWithAgent(t *testing.T) {
	sim := arisim.Start(arisim.Config{Script: func(arisim.CallInfo) arisim.Script {
		return arisim.Script{Outcome: arisim.Answer, RingDelay: 5 * time.Millisecond, TalkDuration: arisim.Never}
	}})
	defer sim.Close()
	sink := newARITestSink()
	sink.answer = Answer{AgentURL: "wss://agent.example/ws", OptOutToken: testOptOutToken, OptOutURL: testOptOutURL, AgentEventsURL: testEventsURL,
		Context: map[string]string{"first_name": "Ann", "opt_out_token": "spoof"}}
	a := startARIEvents(t, sim, sink)
	ariPlace(t, a, 8, "+14155550008")
	ariWaitSim(t, sim, "bridged", func(st arisim.Stats) bool { return st.AddChannels == 1 })
	id := a.CallID(8)
	m := sim.Media()
	if len(m) != 1 {
		t.Fatalf("media %+v", m)
	}
	q := m[0].Query
	for k, want := range map[string]string{"app": "outdial", "channelId": id + "-media", "external_host": arisim.DefaultWSClient,
		"format": "ulaw", "transport": "websocket", "encapsulation": "none", "connection_type": "client", "direction": "both"} {
		if q.Get(k) != want {
			t.Fatalf("externalMedia %s = %q, want %q", k, q.Get(k), want)
		}
	}
	v := m[0].Variables
	var ctxVars map[string]string
	if err := json.Unmarshal([]byte(v["OUTDIAL_CONTEXT"]), &ctxVars); err != nil || ctxVars["first_name"] != "Ann" ||
		v["OUTDIAL_ATTEMPT_ID"] != "8" || v["OUTDIAL_AGENT_URL"] != "wss://agent.example/ws" ||
		v["OUTDIAL_OPT_OUT_TOKEN"] != testOptOutToken || v["OUTDIAL_OPT_OUT_URL"] != testOptOutURL ||
		v["OUTDIAL_TOKEN"] != testOptOutToken || v["OUTDIAL_AGENT_EVENTS_URL"] != testEventsURL {
		t.Fatalf("media variables %v", v)
	}
	b := sim.Bridges()
	if len(b) != 1 || b[0].ID != id+"-bridge" || b[0].Type != "mixing" || strings.Join(b[0].Channels, ",") != id+","+id+"-media" {
		t.Fatalf("bridges %+v", b)
	}
	sim.HangUp(id) // the callee hangs up
	st := sink.final(t, 8)
	if st.Outcome != OutcomeAnswered || !st.Answered {
		t.Fatalf("final %+v", st)
	}
	ariWaitSim(t, sim, "media removed", func(st arisim.Stats) bool { return st.HangUps == 1 })
	if h := sim.HangUps(); len(h) != 1 || h[0] != id+"-media" {
		t.Fatalf("hang-ups %v, want the media channel", h)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !sim.Bridges()[0].Deleted {
		if time.Now().After(deadline) {
			t.Fatal("bridge not deleted")
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestARIMediaVariables: the media channel carries the opt-out token and
// URL as their own variables when the answer has them, and the contact's
// context only inside OUTDIAL_CONTEXT, so a column cannot pose as them.
func TestARIMediaVariables(t *testing.T) {
	spoof := map[string]string{"opt_out_token": "spoof", "OUTDIAL_OPT_OUT_URL": "spoof"}
	tests := []struct {
		name string
		ans  Answer
		want map[string]string
	}{
		{"opt-out", Answer{AgentURL: "wss://a", OptOutToken: testOptOutToken, OptOutURL: testOptOutURL, AgentEventsURL: testEventsURL, Context: spoof},
			map[string]string{"OUTDIAL_ATTEMPT_ID": "42", "OUTDIAL_AGENT_URL": "wss://a",
				"OUTDIAL_CONTEXT":       `{"OUTDIAL_OPT_OUT_URL":"spoof","opt_out_token":"spoof"}`,
				"OUTDIAL_OPT_OUT_TOKEN": testOptOutToken, "OUTDIAL_OPT_OUT_URL": testOptOutURL,
				"OUTDIAL_TOKEN": testOptOutToken, "OUTDIAL_AGENT_EVENTS_URL": testEventsURL}},
		{"no opt-out", Answer{AgentURL: "wss://a", Context: spoof},
			map[string]string{"OUTDIAL_ATTEMPT_ID": "42", "OUTDIAL_AGENT_URL": "wss://a",
				"OUTDIAL_CONTEXT": `{"OUTDIAL_OPT_OUT_URL":"spoof","opt_out_token":"spoof"}`}},
		{"no context", Answer{AgentURL: "wss://a"},
			map[string]string{"OUTDIAL_ATTEMPT_ID": "42", "OUTDIAL_AGENT_URL": "wss://a", "OUTDIAL_CONTEXT": `{}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ariMediaVariables(42, tt.ans); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("ariMediaVariables = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestARIAgentLeaves: when the agent's media channel ends, the call is
// hung up (answered).
func TestARIAgentLeaves(t *testing.T) {
	sim := arisim.Start(arisim.Config{Script: func(arisim.CallInfo) arisim.Script {
		return arisim.Script{Outcome: arisim.Answer, TalkDuration: arisim.Never}
	}})
	defer sim.Close()
	sink := newARITestSink()
	sink.answer = Answer{AgentURL: "wss://agent.example/ws"}
	a := startARIEvents(t, sim, sink)
	ariPlace(t, a, 4, "+14155550004")
	ariWaitSim(t, sim, "bridged", func(st arisim.Stats) bool { return st.AddChannels == 1 })
	sim.HangUp(a.CallID(4) + "-media")
	if st := sink.final(t, 4); st.Outcome != OutcomeAnswered {
		t.Fatalf("final %+v", st)
	}
	if h := sim.HangUps(); len(h) == 0 || h[0] != a.CallID(4) {
		t.Fatalf("hang-ups %v, want the call", h)
	}
}

// TestARIAnswerFails: a failing Answer, or an agent URL without
// ws_client_name, hangs the call up; it ends answered.
func TestARIAnswerFails(t *testing.T) {
	for _, tc := range []struct {
		name string
		ws   string
		err  error
	}{{"answer error", arisim.DefaultWSClient, errors.New("no workflow")}, {"no ws client", "-", nil}} {
		t.Run(tc.name, func(t *testing.T) {
			sim := arisim.Start(arisim.Config{WSClient: tc.ws, Script: func(arisim.CallInfo) arisim.Script {
				return arisim.Script{Outcome: arisim.Answer, TalkDuration: arisim.Never}
			}})
			defer sim.Close()
			sink := newARITestSink()
			sink.answer, sink.err = Answer{AgentURL: "wss://agent"}, tc.err
			creds := sim.Credentials()
			if tc.ws == "-" {
				creds["ws_client_name"] = ""
			}
			c, _ := New(ARI, creds, Options{})
			a := c.(*ari)
			a.timing = ariTestTiming()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go a.Events(ctx, sink)
			ariWaitSim(t, sim, "listener", func(st arisim.Stats) bool { return st.Listeners == 1 })
			ariPlace(t, a, 2, "+14155550002")
			if st := sink.final(t, 2); st.Outcome != OutcomeAnswered {
				t.Fatalf("final %+v", st)
			}
			if len(sim.Media()) != 0 {
				t.Fatalf("media created: %+v", sim.Media())
			}
		})
	}
}
