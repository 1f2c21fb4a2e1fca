package dialer_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer/carrier/twiliosim"
	"github.com/outdial/outdial/store"
)

// API.md 12.1 and 16: a number added through a node that dials none of the
// organization's campaigns is never called after the add answered by the
// node that does. SuppressionsAdded on node B returns only once node A's
// requests that checked the list before the addition have been answered,
// and node A's later checks see the addition. PostgreSQL only: two engines
// share one database as two nodes do.
func TestSuppressionsAddedWaitsForOtherNodes(t *testing.T) {
	hc := &holdCreates{next: &http.Transport{}, release: make(chan struct{})}
	h := newHarness(t, twiliosim.Config{Script: quickCalls}, withProviderClient(&http.Client{Transport: hc}))
	if !h.db.Shared() {
		t.Skip("two nodes need a database they share (PostgreSQL: OUTDIAL_TEST_DATABASE_URL)")
	}
	t.Cleanup(hc.open)
	c := h.campaign(3, store.Settings{MaxConcurrency: 2}, nil)
	hc.on.Store(true)
	h.do(c.ID, store.OpStart)
	h.waitFor("two create requests held after their checks", func() bool { return hc.waiting.Load() == 2 })
	engB := startNodeRouted(h, "node-b", 0, false)
	if engB.HoldsLease(c.ID) || !h.eng.HoldsLease(c.ID) {
		t.Fatal("node A does not hold the campaign's lease")
	}

	// number(0) is being requested on node A; number(2) waits for a slot.
	ctx := context.Background()
	if _, err := h.db.AddSuppressions(ctx, h.org, store.NewSuppressions{Source: store.SourceAPI},
		[]string{number(0), number(2)}); err != nil {
		t.Fatal(err)
	}
	added := make(chan struct{})
	go func() { engB.SuppressionsAdded(ctx, h.org); close(added) }()
	h.steady("node B's SuppressionsAdded waiting for node A's requests under way", func() bool {
		select {
		case <-added:
			return false
		default:
			return true
		}
	})
	hc.open()
	select {
	case <-added:
	case <-time.After(waitTimeout):
		t.Fatal("node B's SuppressionsAdded did not return once node A's requests were answered")
	}
	if got := h.sim.Stats().CreateRequests; got != 2 {
		t.Fatalf("SuppressionsAdded returned with %d create requests answered, want 2", got)
	}
	h.waitState(c.ID, store.StateCompleted)
	if got := h.sim.CreatesByTo(); len(got) != 2 || got[number(0)] != 1 || got[number(1)] != 1 {
		t.Fatalf("creates by number %v, want %s and %s once, %s never", got, number(0), number(1), number(2))
	}
}

// With no other node dialing the organization's campaigns, an addition
// waits for nobody else.
func TestSuppressionsAddedWithoutOtherNodes(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: quickCalls})
	if !h.db.Shared() {
		t.Skip("two nodes need a database they share (PostgreSQL: OUTDIAL_TEST_DATABASE_URL)")
	}
	engB := startNodeRouted(h, "node-b", 0, false)
	added := make(chan struct{})
	go func() { engB.SuppressionsAdded(context.Background(), h.org); close(added) }()
	select {
	case <-added:
	case <-time.After(waitTimeout):
		t.Fatal("SuppressionsAdded waited with no node dialing the organization's calls")
	}
}

// API.md 4.4 and 16: a pause answered by a node that does not dial the
// campaign waits for the requests under way on the node that does, and
// after it nothing more is requested.
func TestPauseOnAnotherNodeWaitsForRequests(t *testing.T) {
	hc := &holdCreates{next: &http.Transport{}, release: make(chan struct{})}
	h := newHarness(t, twiliosim.Config{Script: quickCalls}, withProviderClient(&http.Client{Transport: hc}))
	if !h.db.Shared() {
		t.Skip("two nodes need a database they share (PostgreSQL: OUTDIAL_TEST_DATABASE_URL)")
	}
	t.Cleanup(hc.open)
	c := h.campaign(8, store.Settings{MaxConcurrency: 2}, nil)
	hc.on.Store(true)
	h.do(c.ID, store.OpStart)
	h.waitFor("two create requests held", func() bool { return hc.waiting.Load() == 2 })
	engB := startNodeRouted(h, "node-b", 0, false)

	ctx := context.Background()
	if _, err := h.db.TransitionCampaign(ctx, h.org, c.ID, store.OpPause); err != nil {
		t.Fatal(err)
	}
	halted := make(chan struct{})
	go func() { engB.Halt(ctx, c.ID); close(halted) }()
	h.steady("node B's pause waiting for node A's requests under way", func() bool {
		select {
		case <-halted:
			return false
		default:
			return true
		}
	})
	hc.open()
	select {
	case <-halted:
	case <-time.After(waitTimeout):
		t.Fatal("node B's Halt did not return once node A's requests were answered")
	}
	sent := h.sim.Stats().CreateRequests
	if sent != 2 {
		t.Fatalf("the pause was answered with %d create requests answered, want 2", sent)
	}
	h.steady("no request after the pause answered", func() bool { return h.sim.Stats().CreateRequests == sent })
	if got := h.get(c.ID); got.State != store.StatePaused {
		t.Fatalf("state %s, want paused", got.State)
	}
}
