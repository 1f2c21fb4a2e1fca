package carrier

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer/carrier/arisim"
)

// TestARIReconnect drops the events websocket while calls are up and
// refuses reconnects for a while: a new call is put off meanwhile
// (Unavailable, nothing originated); the carrier reconnects by itself, and
// its look at every call in flight finishes those that ended meanwhile
// (answered when seen answered, else unknown); the others go on and finish
// by their events. No channel is originated twice.
func TestARIReconnect(t *testing.T) {
	sim := arisim.Start(arisim.Config{Script: func(ci arisim.CallInfo) arisim.Script {
		if strings.HasSuffix(ci.Number, "3") {
			return arisim.Script{Outcome: arisim.NoAnswer, RingDelay: arisim.Never}
		}
		return arisim.Script{Outcome: arisim.Answer, TalkDuration: arisim.Never}
	}})
	defer sim.Close()
	sink := newARITestSink()
	sink.answer = Answer{AgentURL: "wss://agent.example/ws"}
	a := startARIEvents(t, sim, sink)
	for i := int64(1); i <= 3; i++ {
		ariPlace(t, a, i, "+1415555000"+string(rune('0'+i)))
	}
	ariWaitSim(t, sim, "two calls bridged", func(st arisim.Stats) bool { return st.AddChannels == 2 })

	sim.RefuseEvents(true)
	sim.DropEvents()
	sim.HangUp(a.CallID(2)) // ends while we are away: seen answered
	sim.HangUp(a.CallID(3)) // ends while ringing, unseen
	ariWaitSim(t, sim, "two calls over and a reconnect refused", func(st arisim.Stats) bool {
		return st.Ended == 2 && st.Refused >= 1
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	_, err := a.Place(ctx, Call{AttemptID: 4, To: "+14155550004"})
	cancel()
	if KindOf(err) != Unavailable || sim.Stats().Originates != 3 {
		t.Fatalf("place while the websocket is down: %v (originates %d), want Unavailable, nothing sent", err, sim.Stats().Originates)
	}
	sim.RefuseEvents(false)
	ariPlace(t, a, 4, "+14155550004") // waits for the websocket

	if st := sink.final(t, 2); st.Outcome != OutcomeAnswered || !strings.HasPrefix(st.Raw, "channel_gone answered") {
		t.Fatalf("call 2 (ended away, answered) final %+v", st)
	}
	if st := sink.final(t, 3); st.Outcome != OutcomeUnknown || st.Raw != "channel_gone" {
		t.Fatalf("call 3 (ended away, unseen) final %+v", st)
	}
	ariWaitSim(t, sim, "call 4 bridged", func(st arisim.Stats) bool { return st.AddChannels == 3 })
	sim.HangUp(a.CallID(4))
	if st := sink.final(t, 4); st.Outcome != OutcomeAnswered {
		t.Fatalf("call 4 final %+v", st)
	}
	// Call 1 is still up and followed.
	sim.HangUp(a.CallID(1))
	if st := sink.final(t, 1); st.Outcome != OutcomeAnswered || st.Raw != "answered cause=16 far_cause=16" {
		t.Fatalf("call 1 final %+v", st)
	}
	ariWaitSim(t, sim, "media channels removed", func(st arisim.Stats) bool { return st.HangUps >= 3 })
	if st := sim.Stats(); st.Connects != 2 || st.Originated != 4 || st.Conflicts != 0 {
		t.Fatalf("sim %+v", st)
	}
	for id, n := range sim.OriginatesByID() {
		if n != 1 {
			t.Fatalf("%s originated %d times", id, n)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(sim.Live()) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("channels left: %v", sim.Live())
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestARIFollowsCallsOfAnotherCarrier: a carrier (after a restart, or a
// configuration change) follows calls another carrier of the same
// configuration placed: by Query, and by their events alone.
func TestARIFollowsCallsOfAnotherCarrier(t *testing.T) {
	sim := arisim.Start(arisim.Config{Script: func(ci arisim.CallInfo) arisim.Script {
		if ci.Number == "+14155550002" {
			return arisim.Script{Outcome: arisim.Busy, RingDelay: 30 * time.Millisecond}
		}
		return arisim.Script{Outcome: arisim.Answer, RingDelay: 30 * time.Millisecond, TalkDuration: arisim.Never}
	}})
	defer sim.Close()
	sink := newARITestSink()
	sink.answer = Answer{AgentURL: "wss://agent.example/ws"}
	b := startARIEvents(t, sim, sink)
	old, _ := New(ARI, sim.Credentials(), Options{})
	a := old.(*ari)
	a.timing.eventsWait = 0 // its events stream is not running
	ariPlace(t, a, 1, "+14155550001")
	ariPlace(t, a, 2, "+14155550002")
	st, err := b.Query(context.Background(), b.CallID(1))
	if err != nil || st.Final {
		t.Fatalf("query = %+v, %v", st, err)
	}
	if st := sink.final(t, 2); st.Outcome != OutcomeBusy {
		t.Fatalf("call 2 final %+v", st)
	}
	ariWaitSim(t, sim, "call 1 bridged", func(st arisim.Stats) bool { return st.AddChannels == 1 })
	sim.HangUp(b.CallID(1))
	if st := sink.final(t, 1); st.Outcome != OutcomeAnswered || st.DurationSeconds != 0 {
		t.Fatalf("call 1 final %+v", st)
	}
}

// TestARIEventsReconnectBackoff: while Asterisk refuses the websocket the
// carrier keeps trying with its backoff, and connects once it may.
func TestARIEventsReconnectBackoff(t *testing.T) {
	sim := arisim.Start(arisim.Config{})
	defer sim.Close()
	sim.RefuseEvents(true)
	c, _ := New(ARI, sim.Credentials(), Options{})
	a := c.(*ari)
	a.timing = ariTestTiming()
	var calls []int
	a.timing.backoff = func(n int) time.Duration {
		calls = append(calls, n) // only the Events goroutine calls it
		return time.Millisecond
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.Events(ctx, newARITestSink())
	}()
	ariWaitSim(t, sim, "three refusals", func(st arisim.Stats) bool { return st.Refused >= 3 })
	sim.RefuseEvents(false)
	ariWaitSim(t, sim, "connected", func(st arisim.Stats) bool { return st.Listeners == 1 })
	cancel()
	<-done
	if len(calls) < 3 || calls[0] != 0 || calls[1] != 1 || calls[2] != 2 {
		t.Fatalf("backoff attempts %v, want 0, 1, 2, ...", calls)
	}
	ariWaitSim(t, sim, "closed", func(st arisim.Stats) bool { return st.Listeners == 0 })
}

// TestARIEventsUnauthorized: a refused password does not stop the stream;
// it retries until the credentials work.
func TestARIEventsUnauthorized(t *testing.T) {
	sim := arisim.Start(arisim.Config{})
	defer sim.Close()
	sim.SetUnauthorized(true)
	c, _ := New(ARI, sim.Credentials(), Options{})
	a := c.(*ari)
	a.timing = ariTestTiming()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go a.Events(ctx, newARITestSink())
	ariWaitSim(t, sim, "401s", func(st arisim.Stats) bool { return st.Unauthorized >= 2 })
	sim.SetUnauthorized(false)
	ariWaitSim(t, sim, "connected", func(st arisim.Stats) bool { return st.Listeners == 1 })
}

// TestARIRestartKeepsAgent: a carrier taking over a call an earlier one
// bridged with the agent (after a restart) does not answer it again; it
// removes the media channel and bridge when the call ends.
func TestARIRestartKeepsAgent(t *testing.T) {
	sim := arisim.Start(arisim.Config{Script: func(arisim.CallInfo) arisim.Script {
		return arisim.Script{Outcome: arisim.Answer, TalkDuration: arisim.Never}
	}})
	defer sim.Close()
	first := newARITestSink()
	first.answer = Answer{AgentURL: "wss://agent.example/ws"}
	old, _ := New(ARI, sim.Credentials(), Options{})
	a := old.(*ari)
	a.timing = ariTestTiming()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.Events(ctx, first)
	}()
	ariPlace(t, a, 6, "+14155550006")
	ariWaitSim(t, sim, "bridged", func(st arisim.Stats) bool { return st.AddChannels == 1 })
	cancel() // the process stops
	<-done
	ariWaitSim(t, sim, "old websocket closed", func(st arisim.Stats) bool { return st.Listeners == 0 })

	sink := newARITestSink()
	sink.answer = Answer{AgentURL: "wss://agent.example/ws"}
	b := startARIEvents(t, sim, sink)
	st, err := b.Query(context.Background(), b.CallID(6))
	if err != nil || st.Final || !st.Answered {
		t.Fatalf("query = %+v, %v", st, err)
	}
	sim.HangUp(b.CallID(6))
	if st := sink.final(t, 6); st.Outcome != OutcomeAnswered {
		t.Fatalf("final %+v", st)
	}
	ariWaitSim(t, sim, "media removed", func(st arisim.Stats) bool { return st.HangUps == 1 })
	if m := sim.Media(); len(m) != 1 {
		t.Fatalf("%d media channels, want the first one only", len(m))
	}
	deadline := time.Now().Add(5 * time.Second)
	for !sim.Bridges()[0].Deleted {
		if time.Now().After(deadline) {
			t.Fatal("bridge not deleted")
		}
		time.Sleep(2 * time.Millisecond)
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	if len(sink.answers) != 0 {
		t.Fatalf("answered again: %v", sink.answers)
	}
}
