package dialer_test

import (
	"context"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer"
	"github.com/outdial/outdial/dialer/carrier/twiliosim"
	"github.com/outdial/outdial/store"
)

// talkingCalls are answered and last long enough for campaigns to overlap.
func talkingCalls(twiliosim.CallInfo) twiliosim.Script {
	return twiliosim.Script{Outcome: twiliosim.Human, TalkDuration: 20 * time.Millisecond}
}

// API.md 19: an organization's max_concurrent_calls, the size of its agent
// fleet, holds across its campaigns: however many campaigns run, no more
// calls are up at the provider at once than the fleet can take; and a
// campaign with few contacts is not starved by one with many that started
// first: it completes while the big one still dials.
func TestOrganizationLimitSharedFairly(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: talkingCalls})
	ctx := context.Background()
	const fleet = 4
	limit := fleet
	if _, _, err := h.db.SetOrganizationLimits(ctx, h.org, &limit); err != nil {
		t.Fatal(err)
	}
	h.eng.LimitsChanged(h.org)
	big := h.campaignFrom(0, 200, store.Settings{MaxConcurrency: 50, RateLimitPerSecond: 1000}, nil)
	small := h.campaignFrom(1000, 10, store.Settings{MaxConcurrency: 50, RateLimitPerSecond: 1000}, nil)
	h.do(big.ID, store.OpStart)
	h.waitSim("the big campaign holds the fleet", func(st twiliosim.Stats) bool { return st.InFlight >= fleet })
	h.waitFor("the big campaign held back by the organization's limit", func() bool {
		d, err := h.eng.Diagnose(ctx, h.org, big.ID)
		return err == nil && hasReason(d, dialer.ReasonOrgConcurrency)
	})
	h.do(small.ID, store.OpStart)
	h.waitState(small.ID, store.StateCompleted)
	if got := h.get(big.ID); got.State != store.StateRunning || got.ProcessedRows >= got.TotalRows {
		t.Fatalf("the big campaign is %s with %d of %d processed when the small one completed: the small one waited for it",
			got.State, got.ProcessedRows, got.TotalRows)
	}
	h.waitState(big.ID, store.StateCompleted)
	if peak := h.sim.PeakInFlight(); peak > fleet {
		t.Fatalf("%d calls up at once at the provider, above the organization's limit %d", peak, fleet)
	}
	creates := h.sim.CreatesByTo()
	if len(creates) != 210 {
		t.Fatalf("%d numbers called, want 210", len(creates))
	}
	for to, n := range creates {
		if n != 1 {
			t.Errorf("%s called %d times", to, n)
		}
	}
}

func hasReason(d *dialer.Diagnosis, code string) bool {
	for _, r := range d.Reasons {
		if r.Code == code {
			return true
		}
	}
	return false
}
