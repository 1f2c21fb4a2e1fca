package web_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer/carrier/twiliosim"
)

// dialedByOf returns the dialed_by of every campaign of organization A's
// list: campaign id → the node, or nil.
func (ce *campEnv) dialedByOf() map[int64]any {
	ce.t.Helper()
	r := ce.a(http.MethodGet, campaignsPath, nil)
	wantStatus(ce.t, r, http.StatusOK)
	out := map[int64]any{}
	for _, c := range objects(ce.t, r.obj(ce.t)["campaigns"]) {
		out[id(ce.t, c, "id")] = c["dialed_by"]
	}
	return out
}

// TestCampaignDialedByLease: a campaign's dialed_by is the node holding its
// lease now (API.md 16), in a get, a list and a change's answer, and null
// once the lease is handed back; a campaign without a lease has null.
func TestCampaignDialedByLease(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{})
	s := ce.setup(false)
	leased, other := ce.newCampaign(s, 2), ce.newCampaign(s, 2)
	ctx := context.Background()
	l, ok, err := ce.db.AcquireLease(ctx, leased, "node-b:8080", time.Minute)
	if err != nil || !ok {
		t.Fatalf("AcquireLease = %v, %v", ok, err)
	}
	if got := ce.campaign(leased)["dialed_by"]; got != "node-b:8080" {
		t.Fatalf("GET dialed_by = %v, want node-b:8080", got)
	}
	if got := ce.campaign(other)["dialed_by"]; got != nil {
		t.Fatalf("GET of the campaign without a lease: dialed_by = %v, want null", got)
	}
	if got, want := ce.dialedByOf(), map[int64]any{leased: "node-b:8080", other: nil}; !equalJSON(got, want) {
		t.Fatalf("list dialed_by = %v, want %v", got, want)
	}
	r := ce.a(http.MethodPatch, campaignPath(leased), map[string]any{"max_concurrency": 3})
	wantStatus(t, r, http.StatusOK)
	if got := r.obj(t)["dialed_by"]; got != "node-b:8080" {
		t.Fatalf("PATCH answer dialed_by = %v, want node-b:8080", got)
	}

	if err := ce.db.ReleaseLease(ctx, l); err != nil {
		t.Fatal(err)
	}
	if got := ce.campaign(leased)["dialed_by"]; got != nil {
		t.Fatalf("after the lease is handed back: dialed_by = %v, want null", got)
	}
	if got, want := ce.dialedByOf(), map[int64]any{leased: nil, other: nil}; !equalJSON(got, want) {
		t.Fatalf("list dialed_by after the release = %v, want %v", got, want)
	}
}

// TestCampaignDialedByRunning: a running campaign is dialed by the node
// whose dialer took its lease, and says so under that node's name; a draft
// beside it has null.
func TestCampaignDialedByRunning(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{engine: true, node: "web-node-1:9000", script: func(twiliosim.CallInfo) twiliosim.Script {
		return twiliosim.Script{Outcome: twiliosim.Human, TalkDuration: time.Hour}
	}})
	s := ce.setup(false)
	running, draft := ce.newCampaign(s, 1), ce.newCampaign(s, 1)
	r := ce.a(http.MethodPost, campaignOp(running, "start"), nil)
	wantStatus(t, r, http.StatusOK)
	if got := r.obj(t)["dialed_by"]; got != nil && got != "web-node-1:9000" {
		t.Fatalf("start answer dialed_by = %v, want null or web-node-1:9000", got)
	}
	ce.waitCampaign(running, "dialed by web-node-1:9000", func(c map[string]any) bool {
		return c["dialed_by"] == "web-node-1:9000"
	})
	if got, want := ce.dialedByOf(), map[int64]any{running: "web-node-1:9000", draft: nil}; !equalJSON(got, want) {
		t.Fatalf("list dialed_by = %v, want %v", got, want)
	}
	wantStatus(t, ce.a(http.MethodPost, campaignOp(running, "cancel"), nil), http.StatusOK)
}
