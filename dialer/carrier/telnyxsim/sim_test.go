package telnyxsim_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer/carrier/telnyxsim"
)

func TestGreetingCallFlow(t *testing.T) {
	s := telnyxsim.Start(telnyxsim.Config{RecordEvents: true, Script: func(telnyxsim.CallInfo) telnyxsim.Script {
		return telnyxsim.Script{Outcome: telnyxsim.Human, TalkDuration: telnyxsim.Never, SpeakDuration: 5 * time.Millisecond}
	}})
	defer s.Close()
	rc := newReceiver(t, s.PublicKey())
	id := dial(t, s, dialBody(rc, "+14155550123", nil))
	ans := rc.waitFor(t, id, "call.answered")
	if ans.Payload["client_state"] != base64.StdEncoding.EncodeToString([]byte(`{"attempt_id":1}`)) || ans.Payload["to"] != "+14155550123" {
		t.Fatalf("call.answered payload = %v", ans.Payload)
	}
	status, out := api(t, s, http.MethodPost, "/v2/calls/"+id+"/actions/speak", s.APIKey(),
		map[string]any{"payload": "Hello Ann", "voice": "female", "service_level": "basic", "language": "en-US", "payload_type": "text", "command_id": "outdial-greeting"})
	if status != http.StatusOK {
		t.Fatalf("speak = %d %v", status, out)
	}
	rc.waitFor(t, id, "call.speak.ended")
	if st, _ := api(t, s, http.MethodGet, "/v2/calls/"+id, s.APIKey(), nil); st != http.StatusOK {
		t.Fatalf("get = %d", st)
	}
	_, out = api(t, s, http.MethodGet, "/v2/calls/"+id, s.APIKey(), nil)
	if data := out["data"].(map[string]any); data["is_alive"] != true {
		t.Fatalf("get while talking: is_alive = %v", data["is_alive"])
	}
	if status, _ := api(t, s, http.MethodPost, "/v2/calls/"+id+"/actions/hangup", s.APIKey(), map[string]any{}); status != http.StatusOK {
		t.Fatalf("hangup = %d", status)
	}
	h := rc.waitFor(t, id, "call.hangup")
	if h.Payload["hangup_cause"] != "normal_clearing" || h.Payload["hangup_source"] != "caller" || h.Payload["start_time"] == nil || h.Payload["end_time"] == nil {
		t.Fatalf("call.hangup payload = %v", h.Payload)
	}
	if err := s.WaitFinal(ctx5(t), 1); err != nil {
		t.Fatal(err)
	}
	want := []string{"call.initiated", "call.answered", "call.speak.started", "call.speak.ended", "call.hangup"}
	if got := rc.types(id); !equal(got, want) {
		t.Fatalf("events = %v, want %v", got, want)
	}
	rc.allVerified(t)
	status, out = api(t, s, http.MethodPost, "/v2/calls/"+id+"/actions/hangup", s.APIKey(), map[string]any{})
	if status != http.StatusUnprocessableEntity || errCode(out) != "90018" {
		t.Fatalf("hangup of an ended call = %d %v, want 422 90018", status, out)
	}
	_, out = api(t, s, http.MethodGet, "/v2/calls/"+id, s.APIKey(), nil)
	if data := out["data"].(map[string]any); data["is_alive"] != false {
		t.Fatalf("get after hangup: is_alive = %v", data["is_alive"])
	}
	rec, ok := s.Call(id)
	if !ok || len(rec.Commands) != 2 || rec.Commands[0].Name != "speak" || rec.Commands[1].Name != "hangup" || len(rec.Events) != 5 || !rec.Final {
		t.Fatalf("record = %+v", rec)
	}
	st := s.Stats()
	if st.Dialled != 1 || st.Speaks != 1 || st.HangUps != 1 || st.Events != 5 || st.EventErrors != 0 || st.InFlight != 0 || st.PeakInFlight != 1 {
		t.Fatalf("stats = %+v", st)
	}
}

func TestOutcomes(t *testing.T) {
	tests := []struct {
		outcome telnyxsim.Outcome
		cause   string
		sip     string
	}{
		{telnyxsim.Busy, "user_busy", "486"},
		{telnyxsim.NoAnswer, "timeout", "487"},
		{telnyxsim.Rejected, "call_rejected", "603"},
		{telnyxsim.NotFound, "not_found", "404"},
		{telnyxsim.Failed, "unspecified", "503"},
		{telnyxsim.Canceled, "originator_cancel", "487"},
	}
	for _, tc := range tests {
		t.Run(string(tc.outcome), func(t *testing.T) {
			s := telnyxsim.Start(telnyxsim.Config{Script: func(telnyxsim.CallInfo) telnyxsim.Script {
				return telnyxsim.Script{Outcome: tc.outcome, RingDelay: 2 * time.Millisecond}
			}})
			defer s.Close()
			rc := newReceiver(t, s.PublicKey())
			id := dial(t, s, dialBody(rc, "+14155550123", nil))
			h := rc.waitFor(t, id, "call.hangup")
			if h.Payload["hangup_cause"] != tc.cause || h.Payload["sip_hangup_cause"] != tc.sip {
				t.Fatalf("call.hangup payload = %v", h.Payload)
			}
			if got := rc.types(id); !equal(got, []string{"call.initiated", "call.hangup"}) {
				t.Fatalf("events = %v", got)
			}
			rc.allVerified(t)
		})
	}
	t.Run("callee hangs up after the talk time", func(t *testing.T) {
		s := telnyxsim.Start(telnyxsim.Config{Script: func(telnyxsim.CallInfo) telnyxsim.Script {
			return telnyxsim.Script{TalkDuration: 5 * time.Millisecond}
		}})
		defer s.Close()
		rc := newReceiver(t, s.PublicKey())
		id := dial(t, s, dialBody(rc, "+14155550123", nil))
		h := rc.waitFor(t, id, "call.hangup")
		if h.Payload["hangup_cause"] != "normal_clearing" || h.Payload["hangup_source"] != "callee" {
			t.Fatalf("call.hangup payload = %v", h.Payload)
		}
	})
	t.Run("cause override on a call never answered", func(t *testing.T) {
		s := telnyxsim.Start(telnyxsim.Config{Script: func(telnyxsim.CallInfo) telnyxsim.Script {
			return telnyxsim.Script{Outcome: telnyxsim.NoAnswer, HangupCause: "normal_clearing", SIPHangupCause: "480"}
		}})
		defer s.Close()
		rc := newReceiver(t, s.PublicKey())
		id := dial(t, s, dialBody(rc, "+14155550123", nil))
		h := rc.waitFor(t, id, "call.hangup")
		if h.Payload["hangup_cause"] != "normal_clearing" || h.Payload["sip_hangup_cause"] != "480" {
			t.Fatalf("call.hangup payload = %v", h.Payload)
		}
	})
	t.Run("time limit", func(t *testing.T) {
		s := telnyxsim.Start(telnyxsim.Config{Script: func(telnyxsim.CallInfo) telnyxsim.Script {
			return telnyxsim.Script{TalkDuration: telnyxsim.Never}
		}})
		defer s.Close()
		rc := newReceiver(t, s.PublicKey())
		id := dial(t, s, dialBody(rc, "+14155550123", map[string]any{"time_limit_secs": 1}))
		if h := rc.waitFor(t, id, "call.hangup"); h.Payload["hangup_cause"] != "time_limit" {
			t.Fatalf("call.hangup payload = %v", h.Payload)
		}
	})
}

func TestMachineDetectionAndStream(t *testing.T) {
	tests := []struct {
		name    string
		outcome telnyxsim.Outcome
		amd     string
		result  string
		want    []string
	}{
		{"detect human", telnyxsim.Human, "detect", "", []string{"call.initiated", "call.answered", "call.machine.detection.ended", "call.hangup"}},
		{"detect machine", telnyxsim.Machine, "detect", "", []string{"call.initiated", "call.answered", "call.machine.detection.ended", "call.hangup"}},
		{"greeting_end machine", telnyxsim.Machine, "greeting_end", "", []string{"call.initiated", "call.answered", "call.machine.detection.ended", "call.machine.greeting.ended", "call.hangup"}},
		{"premium fax", telnyxsim.Fax, "premium", "", []string{"call.initiated", "call.answered", "call.machine.premium.detection.ended", "call.hangup"}},
		{"premium machine", telnyxsim.Machine, "premium", "", []string{"call.initiated", "call.answered", "call.machine.premium.detection.ended", "call.machine.premium.greeting.ended", "call.hangup"}},
		{"not sure", telnyxsim.Machine, "detect", "not_sure", []string{"call.initiated", "call.answered", "call.machine.detection.ended", "call.hangup"}},
		{"no detection asked", telnyxsim.Machine, "", "", []string{"call.initiated", "call.answered", "call.hangup"}},
	}
	results := map[string]string{"detect human": "human", "detect machine": "machine", "greeting_end machine": "machine",
		"premium fax": "fax_detected", "premium machine": "machine", "not sure": "not_sure"}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := telnyxsim.Start(telnyxsim.Config{Script: func(telnyxsim.CallInfo) telnyxsim.Script {
				return telnyxsim.Script{Outcome: tc.outcome, TalkDuration: 5 * time.Millisecond, AMDResult: tc.result}
			}})
			defer s.Close()
			rc := newReceiver(t, s.PublicKey())
			extra := map[string]any{}
			if tc.amd != "" {
				extra["answering_machine_detection"] = tc.amd
			}
			id := dial(t, s, dialBody(rc, "+14155550123", extra))
			rc.waitFor(t, id, "call.hangup")
			if err := s.WaitFinal(ctx5(t), 1); err != nil {
				t.Fatal(err)
			}
			if got := rc.types(id); !equal(got, tc.want) {
				t.Fatalf("events = %v, want %v", got, tc.want)
			}
			if want := results[tc.name]; want != "" {
				typ := tc.want[2]
				if e, _ := rc.event(id, typ); e.Payload["result"] != want {
					t.Fatalf("%s result = %v, want %s", typ, e.Payload["result"], want)
				}
			}
		})
	}
	t.Run("stream at dial", func(t *testing.T) {
		s := telnyxsim.Start(telnyxsim.Config{Script: func(telnyxsim.CallInfo) telnyxsim.Script {
			return telnyxsim.Script{TalkDuration: 5 * time.Millisecond}
		}})
		defer s.Close()
		rc := newReceiver(t, s.PublicKey())
		id := dial(t, s, dialBody(rc, "+14155550123", map[string]any{"stream_url": "wss://agent.example/ws?attempt_id=1",
			"stream_track": "inbound_track", "stream_bidirectional_mode": "rtp", "stream_bidirectional_codec": "PCMU"}))
		e := rc.waitFor(t, id, "streaming.started")
		if e.Payload["stream_url"] != "wss://agent.example/ws?attempt_id=1" {
			t.Fatalf("streaming.started payload = %v", e.Payload)
		}
		if rec, _ := s.Call(id); rec.StreamURL != "wss://agent.example/ws?attempt_id=1" {
			t.Fatalf("recorded stream = %q", rec.StreamURL)
		}
	})
}

func TestDialValidation(t *testing.T) {
	s := telnyxsim.Start(telnyxsim.Config{})
	defer s.Close()
	rc := newReceiver(t, s.PublicKey())
	tests := []struct {
		name  string
		patch map[string]any
	}{
		{"no connection", map[string]any{"connection_id": ""}},
		{"unknown connection", map[string]any{"connection_id": "42"}},
		{"to without plus", map[string]any{"to": "14155550123"}},
		{"from not e164", map[string]any{"from": "4155550100"}},
		{"timeout too short", map[string]any{"timeout_secs": 4}},
		{"timeout too long", map[string]any{"timeout_secs": 601}},
		{"time limit too long", map[string]any{"time_limit_secs": 14401}},
		{"webhook url relative", map[string]any{"webhook_url": "/status"}},
		{"webhook method", map[string]any{"webhook_url_method": "PUT"}},
		{"client state not base64", map[string]any{"client_state": "not base64!"}},
		{"amd value", map[string]any{"answering_machine_detection": "yes"}},
		{"stream url http", map[string]any{"stream_url": "http://agent.example"}},
		{"stream track", map[string]any{"stream_track": "both"}},
		{"bidirectional mode", map[string]any{"stream_bidirectional_mode": "pcm"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, out := api(t, s, http.MethodPost, "/v2/calls", s.APIKey(), dialBody(rc, "+14155550123", tc.patch))
			if status != http.StatusUnprocessableEntity || errCode(out) != "10015" {
				t.Fatalf("dial = %d %v, want 422 10015", status, out)
			}
		})
	}
	if st := s.Stats(); st.Dialled != 0 || st.Rejected != len(tests) {
		t.Fatalf("stats = %+v", st)
	}
	if status, _ := api(t, s, http.MethodGet, "/v2/calls/v3:nope", s.APIKey(), nil); status != http.StatusNotFound {
		t.Fatalf("get unknown = %d, want 404", status)
	}
	if status, _ := api(t, s, http.MethodPost, "/v2/nothing", s.APIKey(), nil); status != http.StatusNotFound {
		t.Fatalf("unknown path = %d, want 404", status)
	}
}

func TestCommandIDDedupe(t *testing.T) {
	s := telnyxsim.Start(telnyxsim.Config{})
	defer s.Close()
	rc := newReceiver(t, s.PublicKey())
	body := dialBody(rc, "+14155550123", map[string]any{"command_id": "outdial-attempt-1"})
	a, b := dial(t, s, body), dial(t, s, body)
	if a != b || s.Stats().Dialled != 1 || s.DialsTo("+14155550123") != 1 {
		t.Fatalf("repeated command_id dialled again: %s %s %+v", a, b, s.Stats())
	}
	body["command_id"] = "outdial-attempt-2"
	if c := dial(t, s, body); c == a || s.Stats().Dialled != 2 {
		t.Fatalf("new command_id did not dial: %+v", s.Stats())
	}
}

func TestEventDeliveryScripts(t *testing.T) {
	run := func(t *testing.T, sc telnyxsim.Script) (*telnyxsim.Server, *receiver, string) {
		s := telnyxsim.Start(telnyxsim.Config{RecordEvents: true, Script: func(telnyxsim.CallInfo) telnyxsim.Script { return sc }})
		t.Cleanup(s.Close)
		rc := newReceiver(t, s.PublicKey())
		id := dial(t, s, dialBody(rc, "+14155550123", nil))
		if err := s.WaitFinal(ctx5(t), 1); err != nil {
			t.Fatal(err)
		}
		return s, rc, id
	}
	t.Run("out of order", func(t *testing.T) {
		_, rc, id := run(t, telnyxsim.Script{Outcome: telnyxsim.Busy, RingDelay: time.Millisecond, OutOfOrder: true})
		if got := rc.types(id); !equal(got, []string{"call.hangup", "call.initiated"}) {
			t.Fatalf("events = %v", got)
		}
	})
	t.Run("lose final", func(t *testing.T) {
		s, rc, id := run(t, telnyxsim.Script{Outcome: telnyxsim.Busy, LoseFinal: true})
		if got := rc.types(id); !equal(got, []string{"call.initiated"}) {
			t.Fatalf("events = %v", got)
		}
		_, out := api(t, s, http.MethodGet, "/v2/calls/"+id, s.APIKey(), nil)
		if data := out["data"].(map[string]any); data["is_alive"] != false {
			t.Fatalf("is_alive = %v", data["is_alive"])
		}
		if s.Stats().InFlight != 0 {
			t.Fatalf("in flight = %d", s.Stats().InFlight)
		}
	})
	t.Run("duplicate", func(t *testing.T) {
		_, rc, id := run(t, telnyxsim.Script{Outcome: telnyxsim.Busy, Duplicate: true})
		if got := rc.types(id); !equal(got, []string{"call.initiated", "call.initiated", "call.hangup", "call.hangup"}) {
			t.Fatalf("events = %v", got)
		}
		rc.allVerified(t)
	})
	t.Run("event errors counted", func(t *testing.T) {
		s := telnyxsim.Start(telnyxsim.Config{Script: func(telnyxsim.CallInfo) telnyxsim.Script {
			return telnyxsim.Script{Outcome: telnyxsim.Busy}
		}})
		defer s.Close()
		rc := newReceiver(t, s.PublicKey())
		rc.status = http.StatusForbidden
		dial(t, s, dialBody(rc, "+14155550123", nil))
		if err := s.WaitFinal(ctx5(t), 1); err != nil {
			t.Fatal(err)
		}
		if st := s.Stats(); st.Events != 2 || st.EventErrors != 2 {
			t.Fatalf("stats = %+v", st)
		}
	})
}

func TestReplayAndForge(t *testing.T) {
	s := telnyxsim.Start(telnyxsim.Config{RecordEvents: true, Script: func(telnyxsim.CallInfo) telnyxsim.Script {
		return telnyxsim.Script{Outcome: telnyxsim.Busy}
	}})
	defer s.Close()
	rc := newReceiver(t, s.PublicKey())
	id := dial(t, s, dialBody(rc, "+14155550123", nil))
	if err := s.WaitFinal(ctx5(t), 1); err != nil {
		t.Fatal(err)
	}
	rec, _ := s.Call(id)
	last := rec.Events[len(rec.Events)-1]
	if last.Type != "call.hangup" || last.Status != http.StatusOK {
		t.Fatalf("last event = %+v", last)
	}
	if status, err := s.Deliver(context.Background(), last); err != nil || status != http.StatusOK {
		t.Fatalf("replay = %d %v", status, err)
	}
	if status, err := s.Deliver(context.Background(), telnyxsim.Forged(last)); err != nil || status != http.StatusOK {
		t.Fatalf("forged = %d %v", status, err)
	}
	rc.mu.Lock()
	n := len(rc.events)
	replayed, forged := rc.events[n-2], rc.events[n-1]
	rc.mu.Unlock()
	if !replayed.Verified || forged.Verified {
		t.Fatalf("replayed verified %v (want true), forged verified %v (want false)", replayed.Verified, forged.Verified)
	}
	hand := s.SignedEvent(rc.URL+"/x", []byte(`{"data":{"record_type":"event","event_type":"call.hangup","payload":{"call_control_id":"v3:hand"}}}`))
	if status, _ := s.Deliver(context.Background(), hand); status != http.StatusOK {
		t.Fatalf("hand-made event = %d", status)
	}
	if e, ok := rc.event("v3:hand", "call.hangup"); !ok || !e.Verified {
		t.Fatalf("hand-made event not verified: %+v", e)
	}
}

func TestSetNowStampsEvents(t *testing.T) {
	s := telnyxsim.Start(telnyxsim.Config{RecordEvents: true, Script: func(telnyxsim.CallInfo) telnyxsim.Script {
		return telnyxsim.Script{Outcome: telnyxsim.Busy}
	}})
	defer s.Close()
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	s.SetNow(func() time.Time { return at })
	rc := newReceiver(t, s.PublicKey())
	id := dial(t, s, dialBody(rc, "+14155550123", nil))
	if err := s.WaitFinal(ctx5(t), 1); err != nil {
		t.Fatal(err)
	}
	rec, _ := s.Call(id)
	for _, e := range rec.Events {
		if e.Timestamp != strconv.FormatInt(at.Unix(), 10) {
			t.Fatalf("telnyx-timestamp = %s, want %d", e.Timestamp, at.Unix())
		}
	}
	if h, _ := rc.event(id, "call.hangup"); h.Payload["end_time"] != "2030-01-02T03:04:05.000000Z" {
		t.Fatalf("end_time = %v", h.Payload["end_time"])
	}
}

func TestCommandIDOfCommandsDedupe(t *testing.T) {
	s := telnyxsim.Start(telnyxsim.Config{Script: func(telnyxsim.CallInfo) telnyxsim.Script {
		return telnyxsim.Script{TalkDuration: telnyxsim.Never, SpeakDuration: telnyxsim.Never}
	}})
	defer s.Close()
	rc := newReceiver(t, s.PublicKey())
	id := dial(t, s, dialBody(rc, "+14155550123", nil))
	rc.waitFor(t, id, "call.answered")
	speak := map[string]any{"payload": "Hi", "voice": "female", "service_level": "basic", "command_id": "outdial-greeting"}
	for i := 0; i < 2; i++ {
		if status, out := api(t, s, http.MethodPost, "/v2/calls/"+id+"/actions/speak", s.APIKey(), speak); status != http.StatusOK {
			t.Fatalf("speak %d = %d %v", i, status, out)
		}
	}
	if rec, _ := s.Call(id); len(rec.Commands) != 1 || s.Stats().Speaks != 1 {
		t.Fatalf("a repeated command_id was played again: %+v", rec.Commands)
	}
}
