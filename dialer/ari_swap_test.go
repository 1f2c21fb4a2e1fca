package dialer_test

import (
	"context"
	"strings"
	"testing"

	"github.com/outdial/outdial/dialer/carrier/arisim"
	"github.com/outdial/outdial/store"
)

// Issue 15 item 1: updating an ARI configuration (a rename is enough)
// swaps its carrier. The new carrier's events websocket opens at once and
// adopts the calls in flight, so two answered calls hung up after the
// rename end answered, not unknown at their deadline.
func TestARIConfigUpdateKeepsFollowedCalls(t *testing.T) {
	h, sim := newARIHarness(t, arisim.Config{Script: func(ci arisim.CallInfo) arisim.Script {
		return arisim.Script{Outcome: arisim.Answer, TalkDuration: arisim.Never}
	}})
	c := ariAgentCampaign(h, 2, store.Settings{MaxConcurrency: 2})
	h.do(c.ID, store.OpStart)
	simWait(h.t, sim, "two calls bridged to the agent", func(st arisim.Stats) bool { return st.AddChannels == 2 })
	h.waitFor("both in flight", func() bool { return h.countAttempts(c.ID, store.AttemptInFlight) == 2 })
	connects := sim.Stats().Connects

	ctx := context.Background()
	if _, err := h.db.UpdateTelephonyConfig(ctx, h.org, h.cfgID, func(cfg *store.TelephonyConfig) error {
		cfg.Name = "renamed"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	h.eng.ForgetConfig(h.cfgID) // what the API does after an update
	simWait(h.t, sim, "the events websocket opened again", func(st arisim.Stats) bool { return st.Connects > connects && st.Listeners == 1 })

	for _, call := range sim.Calls() {
		sim.HangUp(call.ChannelID)
	}
	done := h.waitState(c.ID, store.StateCompleted)
	checkCounters(t, done, 2, 0, 2, 2)
	for _, a := range h.attempts(c.ID) {
		if deref(a.Outcome) != "answered" || strings.HasPrefix(deref(a.RawStatus), "unknown") {
			t.Fatalf("%s: %s (%s), want answered", a.PhoneNumber, deref(a.Outcome), deref(a.RawStatus))
		}
	}
}
