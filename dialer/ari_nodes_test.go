package dialer_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer/carrier/arisim"
	"github.com/outdial/outdial/store"
)

// API.md 16 with ARI: Asterisk hands an application to one websocket
// only, so of two nodes sharing the database and an ARI configuration only
// the holder of the configuration's stream lease opens the events
// websocket; the other places its calls through REST alone and the
// holder's stream follows them (answers them with their agent, applies
// their outcomes). When the holder stops, the other node opens the
// websocket and follows the calls still talking, whichever node placed
// them. Every call's outcome is applied once; at no time are two
// websockets open. PostgreSQL only.
func TestARIOneEventStreamAcrossNodes(t *testing.T) {
	h, sim := newARIHarness(t, arisim.Config{Script: func(ci arisim.CallInfo) arisim.Script {
		if ci.N <= 4 {
			return arisim.Script{Outcome: arisim.Answer, RingDelay: 5 * time.Millisecond, TalkDuration: arisim.Never}
		}
		return arisim.Script{Outcome: arisim.Answer, RingDelay: 5 * time.Millisecond, TalkDuration: 10 * time.Millisecond}
	}}, withLease(time.Hour, nil))
	if !h.db.Shared() {
		t.Skip("two nodes need a database they share (PostgreSQL: OUTDIAL_TEST_DATABASE_URL)")
	}
	ctx := context.Background()
	// Node A dials the first campaign: it builds the configuration's
	// carrier, takes the stream lease and opens the websocket.
	c1 := ariAgentCampaignFrom(h, 0, 6, store.Settings{MaxConcurrency: 2})
	h.do(c1.ID, store.OpStart)
	simWait(h.t, sim, "node A's first calls bridged", func(st arisim.Stats) bool { return st.AddChannels == 2 })

	// Node B dials the second campaign through the same configuration.
	engB := startNode(h, "node-b", 0)
	c2 := ariAgentCampaignFrom(h, 100, 6, store.Settings{MaxConcurrency: 2})
	if _, err := h.db.TransitionCampaign(ctx, h.org, c2.ID, store.OpStart); err != nil {
		t.Fatal(err)
	}
	engB.Wake(c2.ID)
	// Its calls enter Stasis on node A's websocket, which answers them.
	simWait(h.t, sim, "node B's first calls bridged", func(st arisim.Stats) bool { return st.AddChannels == 4 })
	if !engB.HoldsLease(c2.ID) || engB.HoldsLease(c1.ID) || !h.eng.HoldsLease(c1.ID) {
		t.Fatal("each node should dial its own campaign")
	}
	engB.RenewStreamsNow(ctx) // a renewal tick: the lease is held, B must not take it
	if !h.eng.HoldsStream(h.cfgID) || engB.HoldsStream(h.cfgID) {
		t.Fatalf("stream lease: node A %v, node B %v; want node A's alone", h.eng.HoldsStream(h.cfgID), engB.HoldsStream(h.cfgID))
	}
	if st := sim.Stats(); st.Connects != 1 || st.Listeners != 1 {
		t.Fatalf("sim %+v: want one websocket, node A's", st)
	}
	talking := sim.Calls()[:4] // two of each campaign (two slots each)

	// Node A stops (SIGTERM: the requests under way are answered first)
	// and hands both leases back; node B takes the stream at once and
	// opens the websocket, and takes campaign 1 too.
	h.eng.Stop()
	h.waitFor("node B holds the stream", func() bool { return engB.HoldsStream(h.cfgID) })
	h.waitFor("node B dials campaign 1", func() bool { return engB.HoldsLease(c1.ID) })
	simWait(h.t, sim, "node B's websocket", func(st arisim.Stats) bool { return st.Connects == 2 && st.Listeners == 1 })
	// The calls still talking, two placed by each node, end now: node B's
	// stream follows them all.
	for _, call := range talking {
		if !sim.HangUp(call.ChannelID) {
			t.Fatalf("call %s was not talking", call.ChannelID)
		}
	}
	for _, c := range []*store.Campaign{c1, c2} {
		done := h.waitState(c.ID, store.StateCompleted)
		for _, a := range h.attempts(c.ID) {
			// Node B's stream saw the calls ended after it connected end
			// (or node B's takeover of campaign 1 found one gone first,
			// "channel_gone answered": the carrier knew it answered).
			if deref(a.Outcome) != "answered" || !strings.HasSuffix(deref(a.RawStatus), "answered cause=16 far_cause=16") &&
				deref(a.RawStatus) != "channel_gone answered" {
				t.Fatalf("%s: %s (%s), want answered", a.PhoneNumber, deref(a.Outcome), deref(a.RawStatus))
			}
		}
		checkCounters(t, done, 6, 0, 6, 6)
		for _, k := range h.contacts(c.ID) {
			if k.Outcome == nil || *k.Outcome != "answered" {
				t.Fatalf("campaign %d contact row %d: outcome %v", c.ID, k.Row, k.Outcome)
			}
		}
	}
	// Each attempt's channel originated once, whichever node placed it.
	by := sim.OriginatesByID()
	for _, c := range []*store.Campaign{c1, c2} {
		for _, a := range h.attempts(c.ID) {
			if n := by[ariChannelID(a.ID)]; n != 1 {
				t.Fatalf("attempt %d: channel originated %d times", a.ID, n)
			}
		}
	}
	st := sim.Stats()
	if len(by) != 12 || st.Conflicts != 0 {
		t.Fatalf("%d channel ids originated (%d refused as duplicates), want 12", len(by), st.Conflicts)
	}
	if st.PeakListeners != 1 || st.Connects != 2 || st.Answered != 12 || st.ExternalMedia != 12 {
		t.Fatalf("sim %+v: want never two websockets at once, 2 in turn, 12 calls answered and given their agent once each", st)
	}
}
