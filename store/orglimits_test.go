package store_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/outdial/outdial/store"
)

// API.md 19: claims of two campaigns of one organization racing on two
// nodes never put more than the organization's max_concurrent_calls in
// flight together, and each campaign gets its fair share; on both engines.
func TestRaceOrganizationLimit(t *testing.T) {
	db, nodes := twoNodes(t)
	ctx := context.Background()
	org := newOrg(t, db.DB, "acme")
	limit := 5
	if _, after, err := db.SetOrganizationLimits(ctx, org, &limit); err != nil || after == nil || *after != 5 {
		t.Fatalf("set limits: %v, %v", after, err)
	}
	at := time.Now()
	var camps []*store.Campaign
	var leases []store.Lease
	for _, name := range []string{"big", "small"} {
		c, err := db.CreateCampaign(ctx, org, newCampaignInput(name), feedContacts(20, nil, nil))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.TransitionCampaign(ctx, org, c.ID, store.OpStart); err != nil {
			t.Fatal(err)
		}
		camps = append(camps, c)
		leases = append(leases, leaseOf(t, db, c.ID))
	}
	var held atomic.Int32
	race(8, func(i int) {
		c := camps[i%2]
		got, h, err := nodes[i/2%2].ClaimAttemptsShared(ctx, leases[i%2], at, at.Add(time.Hour), c.Timezones, 10,
			store.OrgShare{Organization: org, Limit: limit})
		if err != nil {
			t.Errorf("claim: %v", err)
		}
		if h {
			held.Add(1)
		}
		_ = got
	})
	total := 0
	for _, c := range camps {
		n, err := db.CountActiveAttempts(ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if n < limit/2 {
			t.Errorf("campaign %s has %d in flight, below its fair share %d", c.Name, n, limit/2)
		}
		total += n
	}
	if total != limit {
		t.Fatalf("%d attempts in flight for the organization, want its limit %d", total, limit)
	}
	if held.Load() == 0 {
		t.Fatal("no claim was held by the organization's limit")
	}

	// Unlimited again: a claim takes what it asks for.
	if _, after, err := db.SetOrganizationLimits(ctx, org, nil); err != nil || after != nil {
		t.Fatalf("clear limits: %v, %v", after, err)
	}
	got, h, err := db.ClaimAttemptsShared(ctx, leases[0], at, at.Add(time.Hour), camps[0].Timezones, 3, store.OrgShare{})
	if err != nil || len(got) != 3 || h {
		t.Fatalf("claim without a limit: %d, held %v, %v", len(got), h, err)
	}
}

func TestOrganizationLimitsBounds(t *testing.T) {
	db := newDB(t)
	ctx := context.Background()
	org := newOrg(t, db.DB, "acme")
	if got, err := db.OrganizationLimits(ctx, org); err != nil || got != nil {
		t.Fatalf("default limits: %v, %v; want none", got, err)
	}
	for _, n := range []int{0, -1, store.MaxConcurrentCallsLimit + 1} {
		if _, _, err := db.SetOrganizationLimits(ctx, org, &n); store.ErrorCode(err) != store.EINVALID {
			t.Errorf("limit %d: %v, want EINVALID", n, err)
		}
	}
	n := store.MaxConcurrentCallsLimit
	before, after, err := db.SetOrganizationLimits(ctx, org, &n)
	if err != nil || before != nil || after == nil || *after != n {
		t.Fatalf("set %d: %v → %v, %v", n, before, after, err)
	}
	if _, err := db.OrganizationLimits(ctx, org+1000); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("unknown organization: %v, want ENOTFOUND", err)
	}
}
