package arisim

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// testEvent is the part of an event the tests read.
type testEvent struct {
	Type        string       `json:"type"`
	Timestamp   string       `json:"timestamp"`
	Application string       `json:"application"`
	Channel     *ChannelJSON `json:"channel"`
	Peer        *ChannelJSON `json:"peer"`
	DialStatus  string       `json:"dialstatus"`
	Cause       *int         `json:"cause"`
	Args        []string     `json:"args"`
}

// String is "Type id [dialstatus|cause]", compact for comparisons.
func (e testEvent) String() string {
	ch := e.Channel
	if ch == nil {
		ch = e.Peer
	}
	s := e.Type + " " + ch.ID
	switch {
	case e.Type == "Dial":
		s += " " + e.DialStatus
	case e.Type == "ChannelStateChange":
		s += " " + ch.State
	case e.Cause != nil:
		s += fmt.Sprintf(" %d", *e.Cause)
	}
	return s
}

// listen opens the events websocket of app with Basic auth and returns the
// events it reads.
func listen(t *testing.T, s *Server, app string) <-chan testEvent {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	h := http.Header{}
	req, _ := http.NewRequest(http.MethodGet, "http://x", nil)
	req.SetBasicAuth(s.App(), s.Password())
	h.Set("Authorization", req.Header.Get("Authorization"))
	u := "ws" + strings.TrimPrefix(s.URL(), "http") + "/ari/events?app=" + url.QueryEscape(app) + "&subscribeAll=false"
	conn, _, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		cancel()
		t.Fatalf("dial events: %v", err)
	}
	out := make(chan testEvent, 1000)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(out)
		for {
			_, data, err := conn.Read(ctx)
			if err != nil {
				return
			}
			var ev testEvent
			if err := json.Unmarshal(data, &ev); err != nil {
				t.Errorf("event %s: %v", data, err)
				return
			}
			out <- ev
		}
	}()
	t.Cleanup(func() {
		cancel()
		conn.CloseNow()
		<-done
	})
	waitStats(t, s, "listener", func(st Stats) bool { return st.Listeners > 0 })
	return out
}

// next returns the next n events as strings.
func next(t *testing.T, evs <-chan testEvent, n int) []string {
	t.Helper()
	var out []string
	timeout := time.After(5 * time.Second)
	for len(out) < n {
		select {
		case ev, ok := <-evs:
			if !ok {
				t.Fatalf("events closed after %v", out)
			}
			out = append(out, ev.String())
		case <-timeout:
			t.Fatalf("timed out after events %v", out)
		}
	}
	return out
}

func waitStats(t *testing.T, s *Server, what string, cond func(Stats) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Wait(ctx, cond); err != nil {
		t.Fatalf("timed out waiting for %s: %+v", what, s.Stats())
	}
}

// do sends an authenticated request and returns the status and body.
func do(t *testing.T, s *Server, method, path string, q url.Values, body string) (int, string) {
	t.Helper()
	u := s.URL() + "/ari/" + path
	if q != nil {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(s.App(), s.Password())
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

func originate(t *testing.T, s *Server, id, endpoint string) (int, string) {
	t.Helper()
	q := url.Values{"endpoint": {endpoint}, "app": {s.App()}, "appArgs": {"attempt_id=1"}, "otherChannelId": {id + "-far"}, "timeout": {"30"}}
	return do(t, s, http.MethodPost, "channels/"+id, q, `{"variables":{"OUTDIAL_ATTEMPT_ID":"1"}}`)
}

func TestAuth(t *testing.T) {
	s := Start(Config{})
	defer s.Close()
	req, _ := http.NewRequest(http.MethodGet, s.URL()+"/ari/channels/x", nil)
	req.SetBasicAuth(s.App(), "wrong")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 401 || !strings.Contains(string(body), "Authentication required") || resp.Header.Get("WWW-Authenticate") == "" {
		t.Fatalf("wrong password: %d %s %v", resp.StatusCode, body, resp.Header)
	}
	// api_key works as well as Basic auth.
	resp, err = http.Get(s.URL() + "/ari/channels/x?api_key=" + url.QueryEscape(s.App()+":"+s.Password()))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Fatalf("api_key: status %d, want 404 (authenticated, no channel)", resp.StatusCode)
	}
	s.SetUnauthorized(true)
	if st, _ := do(t, s, http.MethodGet, "channels/x", nil, ""); st != 401 {
		t.Fatalf("unauthorized mode: %d", st)
	}
}

// TestOutcomeEvents checks each outcome's event sequence behind Local/
// (two halves) and on a single channel.
func TestOutcomeEvents(t *testing.T) {
	cases := []struct {
		script   Script
		endpoint string
		want     []string
	}{
		{Script{Outcome: Answer, TalkDuration: time.Millisecond}, "Local/+14155550001@ctx", []string{
			"ChannelStateChange c1-far Up", "ChannelStateChange c1 Up", "Dial c1 ANSWER", "StasisStart c1",
			"ChannelHangupRequest c1 16", "StasisEnd c1", "ChannelDestroyed c1-far 16", "ChannelDestroyed c1 16"}},
		{Script{Outcome: Busy}, "Local/+14155550001@ctx", []string{
			"Dial c1 BUSY", "ChannelDestroyed c1-far 17", "ChannelDestroyed c1 0"}},
		{Script{Outcome: Busy, FarHalfLast: true}, "Local/+14155550001@ctx", []string{
			"Dial c1 BUSY", "ChannelDestroyed c1 0", "ChannelDestroyed c1-far 17"}},
		{Script{Outcome: NoAnswer, RingDelay: time.Millisecond}, "Local/+14155550001@ctx", []string{
			"ChannelStateChange c1 Ringing", "Dial c1 RINGING", "ChannelDestroyed c1-far 19", "ChannelDestroyed c1 19"}},
		{Script{Outcome: Congestion}, "Local/+14155550001@ctx", []string{
			"Dial c1 CONGESTION", "ChannelDestroyed c1-far 34", "ChannelDestroyed c1 0"}},
		{Script{Outcome: Unavailable}, "Local/+14155550001@ctx", []string{
			"Dial c1 CHANUNAVAIL", "ChannelDestroyed c1-far 20", "ChannelDestroyed c1 0"}},
		{Script{Outcome: Rejected}, "Local/+14155550001@ctx", []string{
			"ChannelDestroyed c1-far 21", "ChannelDestroyed c1 0"}},
		{Script{Outcome: Busy}, "PJSIP/+14155550001@trunk", []string{"Dial c1 BUSY", "ChannelDestroyed c1 17"}},
		{Script{Outcome: Answer, TalkDuration: time.Millisecond}, "PJSIP/+14155550001@trunk", []string{
			"ChannelStateChange c1 Up", "Dial c1 ANSWER", "StasisStart c1", "ChannelHangupRequest c1 16", "StasisEnd c1", "ChannelDestroyed c1 16"}},
	}
	for i, tc := range cases {
		t.Run(fmt.Sprintf("%d-%s", i, tc.script.Outcome), func(t *testing.T) {
			s := Start(Config{Script: func(CallInfo) Script { return tc.script }})
			defer s.Close()
			evs := listen(t, s, s.App())
			if st, body := originate(t, s, "c1", tc.endpoint); st != 200 || !strings.Contains(body, `"state":"Down"`) {
				t.Fatalf("originate: %d %s", st, body)
			}
			got := next(t, evs, len(tc.want))
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			waitStats(t, s, "ended", func(st Stats) bool { return st.Ended == 1 && st.InFlight == 0 })
		})
	}
}

// TestChannelIDReuse: 409 while the channel lives, accepted again once it
// is destroyed (§1g).
func TestChannelIDReuse(t *testing.T) {
	s := Start(Config{Script: func(CallInfo) Script { return Script{Outcome: Answer, TalkDuration: Never} }})
	defer s.Close()
	listen(t, s, s.App())
	if st, _ := originate(t, s, "c1", "Local/+14155550001@ctx"); st != 200 {
		t.Fatalf("first originate %d", st)
	}
	if st, body := originate(t, s, "c1", "Local/+14155550001@ctx"); st != 409 || !strings.Contains(body, "already exists") {
		t.Fatalf("second originate: %d %s, want 409", st, body)
	}
	if st, _ := do(t, s, http.MethodGet, "channels/c1", nil, ""); st != 200 {
		t.Fatalf("get live channel: %d", st)
	}
	if st, _ := do(t, s, http.MethodDelete, "channels/c1", url.Values{"reason": {"normal"}}, ""); st != 204 {
		t.Fatalf("delete: %d", st)
	}
	waitStats(t, s, "ended", func(st Stats) bool { return st.Ended == 1 })
	if st, _ := do(t, s, http.MethodGet, "channels/c1", nil, ""); st != 404 {
		t.Fatalf("get destroyed channel: %d", st)
	}
	if st, _ := do(t, s, http.MethodDelete, "channels/c1", nil, ""); st != 404 {
		t.Fatalf("delete destroyed channel: %d", st)
	}
	if st, _ := originate(t, s, "c1", "Local/+14155550001@ctx"); st != 200 {
		t.Fatalf("originate after destroy: %d, want 200", st)
	}
	if n := s.OriginatesOf("c1"); n != 2 {
		t.Fatalf("originates of c1: %d", n)
	}
	st := s.Stats()
	if st.Conflicts != 1 || st.Originated != 2 || st.PeakInFlight != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestOriginateValidation(t *testing.T) {
	s := Start(Config{})
	defer s.Close()
	for _, q := range []url.Values{
		{"app": {"outdial"}},
		{"endpoint": {"Local/+14155550001@ctx"}},
		{"endpoint": {"nonsense"}, "app": {"outdial"}},
		{"endpoint": {"PJSIP/abc@trunk"}, "app": {"outdial"}},
		{"endpoint": {"PJSIP/+14155550001@trunk"}, "app": {"outdial"}, "timeout": {"x"}},
	} {
		if st, _ := do(t, s, http.MethodPost, "channels/c1", q, ""); st != 400 {
			t.Fatalf("%v: status %d, want 400", q, st)
		}
	}
	if st, _ := do(t, s, http.MethodPost, "channels/c1", url.Values{"endpoint": {"PJSIP/+1415555@t"}, "app": {"a"}}, "{bad"); st != 400 {
		t.Fatalf("bad body: %d", st)
	}
}

// TestAnswerNow: Answer ends a ring that would last forever.
func TestAnswerNow(t *testing.T) {
	s := Start(Config{Script: func(CallInfo) Script { return Script{Outcome: Answer, RingDelay: Never, TalkDuration: Never} }})
	defer s.Close()
	evs := listen(t, s, s.App())
	originate(t, s, "c1", "PJSIP/+14155550001@t")
	if got := strings.Join(next(t, evs, 2), ","); got != "ChannelStateChange c1 Ringing,Dial c1 RINGING" {
		t.Fatalf("ringing: %s", got)
	}
	if !s.Answer("c1") || s.Answer("nope") {
		t.Fatal("Answer")
	}
	if got := strings.Join(next(t, evs, 3), ","); got != "ChannelStateChange c1 Up,Dial c1 ANSWER,StasisStart c1" {
		t.Fatalf("answered: %s", got)
	}
	s.HangUp("c1")
	waitStats(t, s, "ended", func(st Stats) bool { return st.Ended == 1 })
}

// TestCancelWhileRinging: a DELETE of a ringing call cancels it.
func TestCancelWhileRinging(t *testing.T) {
	s := Start(Config{Script: func(CallInfo) Script { return Script{Outcome: NoAnswer, RingDelay: Never} }})
	defer s.Close()
	evs := listen(t, s, s.App())
	originate(t, s, "c1", "Local/+14155550001@ctx")
	next(t, evs, 2) // ringing
	do(t, s, http.MethodDelete, "channels/c1", nil, "")
	got := strings.Join(next(t, evs, 4), ",")
	want := "ChannelHangupRequest c1 16,Dial c1 CANCEL,ChannelDestroyed c1-far 16,ChannelDestroyed c1 16"
	if got != want {
		t.Fatalf("events %s, want %s", got, want)
	}
	if c := s.Calls()[0]; !c.Canceled || !c.HungUp || c.Answered {
		t.Fatalf("record %+v", c)
	}
}

// TestMediaAndBridge covers externalMedia, bridges and a media channel
// ending when the agent leaves.
func TestMediaAndBridge(t *testing.T) {
	s := Start(Config{Script: func(CallInfo) Script { return Script{Outcome: Answer, TalkDuration: Never} }})
	defer s.Close()
	evs := listen(t, s, s.App())
	originate(t, s, "c1", "Local/+14155550001@ctx")
	next(t, evs, 4) // answered, in Stasis
	mq := url.Values{"app": {s.App()}, "channelId": {"c1-media"}, "external_host": {"agent"}, "format": {"ulaw"},
		"transport": {"websocket"}, "encapsulation": {"rtp"}}
	if st, _ := do(t, s, http.MethodPost, "channels/externalMedia", mq, ""); st != 400 {
		t.Fatalf("websocket with rtp: %d, want 400", st)
	}
	mq.Set("encapsulation", "none")
	if st, body := do(t, s, http.MethodPost, "channels/externalMedia", mq, `{"variables":{"OUTDIAL_ATTEMPT_ID":"1"}}`); st != 200 || !strings.Contains(body, `"id":"c1-media"`) {
		t.Fatalf("externalMedia: %d %s", st, body)
	}
	if got := next(t, evs, 1)[0]; got != "StasisStart c1-media" {
		t.Fatalf("media event %s", got)
	}
	if st, _ := do(t, s, http.MethodPost, "bridges/b1/addChannel", url.Values{"channel": {"c1"}}, ""); st != 404 {
		t.Fatalf("add to a missing bridge: %d", st)
	}
	if st, _ := do(t, s, http.MethodPost, "bridges", url.Values{"type": {"mixing"}, "bridgeId": {"b1"}}, ""); st != 200 {
		t.Fatalf("create bridge: %d", st)
	}
	if st, _ := do(t, s, http.MethodPost, "bridges/b1/addChannel", url.Values{"channel": {"c1-far"}}, ""); st != 422 {
		t.Fatalf("add a channel not in Stasis: %d, want 422", st)
	}
	if st, _ := do(t, s, http.MethodPost, "bridges/b1/addChannel", url.Values{"channel": {"c1,c1-media"}}, ""); st != 204 {
		t.Fatalf("addChannel: %d", st)
	}
	if b := s.Bridges()[0]; b.ID != "b1" || b.Type != "mixing" || strings.Join(b.Channels, ",") != "c1,c1-media" {
		t.Fatalf("bridge %+v", b)
	}
	if m := s.Media()[0]; m.Variables["OUTDIAL_ATTEMPT_ID"] != "1" || m.Query.Get("external_host") != "agent" {
		t.Fatalf("media %+v", m)
	}
	// The agent leaves: the media channel ends.
	if !s.HangUp("c1-media") {
		t.Fatal("HangUp of the media channel")
	}
	if got := strings.Join(next(t, evs, 2), ","); got != "StasisEnd c1-media,ChannelDestroyed c1-media 16" {
		t.Fatalf("media end: %s", got)
	}
	// The callee hangs up.
	s.HangUp("c1")
	next(t, evs, 4)
	if b := s.Bridges()[0]; len(b.Channels) != 0 {
		t.Fatalf("bridge after hang-ups %+v", b)
	}
	if st, _ := do(t, s, http.MethodDelete, "bridges/b1", nil, ""); st != 204 {
		t.Fatalf("delete bridge: %d", st)
	}
	if st, _ := do(t, s, http.MethodDelete, "bridges/b1", nil, ""); st != 404 {
		t.Fatalf("delete bridge twice: %d", st)
	}
}

// TestDropAndRefuse: dropped websockets lose the events; refused
// reconnects are 503; an answer with nobody listening is hung up.
func TestDropAndRefuse(t *testing.T) {
	s := Start(Config{Script: func(CallInfo) Script {
		return Script{Outcome: Answer, RingDelay: 20 * time.Millisecond, TalkDuration: Never}
	}})
	defer s.Close()
	evs := listen(t, s, s.App())
	s.RefuseEventsFor(time.Hour)
	if n := s.DropEvents(); n != 1 {
		t.Fatalf("dropped %d", n)
	}
	for range evs { //nolint:revive // drain until closed
	}
	u := "ws" + strings.TrimPrefix(s.URL(), "http") + "/ari/events?app=" + s.App() + "&api_key=" + s.App() + ":" + s.Password()
	if _, resp, err := websocket.Dial(context.Background(), u, nil); err == nil || resp == nil || resp.StatusCode != 503 {
		t.Fatalf("refused dial: %v %v", err, resp)
	}
	originate(t, s, "c1", "Local/+14155550001@ctx")
	waitStats(t, s, "hung up at answer", func(st Stats) bool { return st.Ended == 1 })
	if c := s.Calls()[0]; !c.Answered || c.OwnCause != 16 {
		t.Fatalf("call %+v", c)
	}
	st := s.Stats()
	if st.Refused != 1 || st.Dropped == 0 || st.Listeners != 0 {
		t.Fatalf("stats %+v", st)
	}
	s.RefuseEvents(false)
	s.RefuseEventsFor(0)
	listen(t, s, s.App())
}

// TestFaults: an injected fault is answered; one with Originate places the
// call all the same.
func TestFaults(t *testing.T) {
	s := Start(Config{Script: func(CallInfo) Script { return Script{Outcome: Busy} }})
	defer s.Close()
	s.SetFault(func(r Request) *Fault {
		if r.Op == OpOriginate {
			return &Fault{Status: 500, Message: "boom", Originate: r.ID == "c2"}
		}
		return nil
	})
	if st, body := originate(t, s, "c1", "PJSIP/+14155550001@t"); st != 500 || !strings.Contains(body, "boom") {
		t.Fatalf("fault: %d %s", st, body)
	}
	if st, _ := originate(t, s, "c2", "PJSIP/+14155550002@t"); st != 500 {
		t.Fatalf("fault with originate: %d", st)
	}
	waitStats(t, s, "placed anyway", func(st Stats) bool { return st.Originated == 1 && st.Faults == 2 })
	if s.OriginatesOf("c2") != 1 || s.OriginatesTo("+14155550002") != 1 || s.OriginatesOf("c1") != 0 {
		t.Fatalf("originates %v", s.OriginatesByID())
	}
}
