package carrier

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer/carrier/arisim"
)

// SharedEventSource: a carrier whose configuration's stream another
// process holds places its calls at once, without a websocket of its own
// and without following them; the holder's stream follows them from their
// events and reports each outcome once.
func TestARICallsFollowedByTheStreamHolder(t *testing.T) {
	sim := arisim.Start(arisim.Config{Script: func(ci arisim.CallInfo) arisim.Script {
		if ci.N%2 == 0 {
			return arisim.Script{Outcome: arisim.Busy, RingDelay: 5 * time.Millisecond}
		}
		return arisim.Script{Outcome: arisim.Answer, RingDelay: 5 * time.Millisecond, TalkDuration: 10 * time.Millisecond}
	}})
	defer sim.Close()
	sink := newARITestSink()
	startARIEvents(t, sim, sink)

	c, err := New(ARI, sim.Credentials(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	other := c.(*ari)
	other.timing = ariTestTiming()
	other.timing.eventsWait = time.Hour // a wait would show

	// A call waiting for a websocket of its own is released once the stream
	// is known to be elsewhere.
	placed := make(chan error, 1)
	go func() {
		_, err := other.Place(context.Background(), Call{AttemptID: 1, To: "+14155550001", RingTimeout: 30 * time.Second})
		placed <- err
	}()
	for deadline := time.Now().Add(5 * time.Second); len(other.kick) == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the first call did not wait for the websocket")
		}
	}
	other.EventsElsewhere(true)
	select {
	case err := <-placed:
		if err != nil {
			t.Fatalf("place 1: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the call waiting for a websocket was not released by EventsElsewhere")
	}
	for id := int64(2); id <= 4; id++ {
		ariPlace(t, other, id, fmt.Sprintf("+1415555000%d", id))
	}
	want := map[int64]string{1: OutcomeAnswered, 2: OutcomeBusy, 3: OutcomeAnswered, 4: OutcomeBusy}
	for id, outcome := range want {
		if st := sink.final(t, id); st.Outcome != outcome || st.ProviderCallID != other.CallID(id) {
			t.Fatalf("attempt %d: final %+v, want %s", id, st, outcome)
		}
	}
	ariWaitSim(t, sim, "every call ended", func(st arisim.Stats) bool { return st.Ended == 4 && st.InFlight == 0 })
	if st := sim.Stats(); st.Connects != 1 || st.Answered != 2 {
		t.Fatalf("sim %+v: want one websocket (the holder's) and 2 calls answered in Stasis", st)
	}
	other.mu.Lock()
	followed, dials := len(other.calls), other.evDials
	other.mu.Unlock()
	if followed != 0 || dials != 0 {
		t.Fatalf("the carrier without the stream follows %d calls and dialed %d websockets; want none", followed, dials)
	}
	// A lookup there does not start following the call either.
	if _, err := other.Query(context.Background(), other.CallID(1)); err != nil {
		t.Fatal(err)
	}
	other.mu.Lock()
	followed = len(other.calls)
	other.mu.Unlock()
	if followed != 0 {
		t.Fatal("Query followed a call while the stream is elsewhere")
	}
}
