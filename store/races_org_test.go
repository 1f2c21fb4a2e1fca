package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/outdial/outdial/store"
)

// TestRaceNewOrganization: keys of an organization that does not exist yet,
// created at once on two nodes, all succeed, in one organization.
func TestRaceNewOrganization(t *testing.T) {
	ctx := context.Background()
	_, nodes := twoNodes(t)
	for round := range 4 {
		org := fmt.Sprint("newco ", round)
		keys := make([]*store.APIKey, 12)
		errs := make([]error, len(keys))
		race(len(keys), func(i int) {
			keys[i], _, errs[i] = nodes[i%2].CreateAPIKey(ctx, org, fmt.Sprint("k", i), store.RoleAdmin)
		})
		for i, err := range errs {
			if err != nil {
				t.Fatalf("%s: key %d: %v", org, i, err)
			}
			if keys[i].OrganizationID != keys[0].OrganizationID {
				t.Fatalf("%s: key %d in organization %d, key 0 in %d", org, i, keys[i].OrganizationID, keys[0].OrganizationID)
			}
		}
	}
}

// TestRaceCompliancePolicy: policy changes racing on two nodes each start
// from the policy the one before stored and take the next version: none is
// lost, and the change log has one entry per version.
func TestRaceCompliancePolicy(t *testing.T) {
	ctx := context.Background()
	db, nodes := twoNodes(t)
	org := newOrg(t, db.DB, "acme")
	const changes = 16
	versions := make([]store.VersionedPolicy, changes)
	errs := make([]error, changes)
	race(changes, func(i int) {
		versions[i], errs[i] = nodes[i%2].UpdateCompliancePolicy(ctx, org, 0, func(p *store.Policy) error {
			p.AttemptCap.MaxAttempts++
			return nil
		})
	})
	seen := map[int64]bool{}
	for i, err := range errs {
		if err != nil {
			t.Fatalf("change %d: %v", i, err)
		}
		seen[versions[i].Version] = true
	}
	if len(seen) != changes {
		t.Fatalf("%d changes made %d distinct versions", changes, len(seen))
	}
	p, err := db.CompliancePolicy(ctx, org)
	if err != nil {
		t.Fatal(err)
	}
	if want := store.DefaultPolicy().AttemptCap.MaxAttempts + changes; p.AttemptCap.MaxAttempts != want || p.Version != 1+changes {
		t.Fatalf("policy = max_attempts %d version %d, want %d and %d", p.AttemptCap.MaxAttempts, p.Version, want, 1+changes)
	}
	log, err := db.PolicyChanges(ctx, org, 0, 100)
	if err != nil || len(log) != changes {
		t.Fatalf("change log = %d entries, %v; want %d", len(log), err, changes)
	}
	for i, c := range log {
		if c.Version != int64(1+changes-i) {
			t.Fatalf("change log entry %d is version %d, want %d", i, c.Version, 1+changes-i)
		}
	}
}

// TestRaceSuppressions: the same new numbers added at once on two nodes,
// one add without an expiry and the others with one, are each added once
// (counted once as added) and never expire: the add without expiry wins
// whatever the order.
func TestRaceSuppressions(t *testing.T) {
	ctx := context.Background()
	db, nodes := twoNodes(t)
	org := newOrg(t, db.DB, "acme")
	exp := time.Now().Add(time.Hour)
	for round := range 10 {
		numbers := make([]string, 20)
		for i := range numbers {
			numbers[i] = fmt.Sprintf("+1415%03d%04d", round, i)
		}
		res := make([]store.SuppressResult, 8)
		errs := make([]error, len(res))
		race(len(res), func(i int) {
			ns := store.NewSuppressions{Source: store.SourceAPI}
			if i > 0 {
				ns.ExpiresAt = &exp
			}
			res[i], errs[i] = nodes[i%2].AddSuppressions(ctx, org, ns, numbers)
		})
		added := 0
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d: add %d: %v", round, i, err)
			}
			added += res[i].Added
			if res[i].Added+res[i].AlreadyPresent != len(numbers) {
				t.Fatalf("round %d: add %d = %+v for %d numbers", round, i, res[i], len(numbers))
			}
		}
		if added != len(numbers) {
			t.Fatalf("round %d: %d numbers added, want each of %d once", round, added, len(numbers))
		}
		for _, n := range numbers {
			list, err := db.ListSuppressions(ctx, org, n, 0, 10)
			if err != nil || len(list) != 1 {
				t.Fatalf("round %d: %s listed %d times, %v", round, n, len(list), err)
			}
			if list[0].ExpiresAt != nil {
				t.Fatalf("round %d: %s expires at %v; an add without expiry answered, so it never does", round, n, list[0].ExpiresAt)
			}
		}
	}
}

// TestRaceDefaultCallerID: numbers added or made the default caller id at
// once on two nodes all succeed and leave one default; changes of one
// number's label at once each start from the other's.
func TestRaceDefaultCallerID(t *testing.T) {
	ctx := context.Background()
	db, nodes := twoNodes(t)
	org := newOrg(t, db.DB, "acme")
	cfg, err := db.CreateTelephonyConfig(ctx, org, store.TelephonyConfig{Name: "c", Provider: "twilio", Credentials: store.Credentials{}})
	if err != nil {
		t.Fatal(err)
	}
	added := make([]*store.PhoneNumber, 12)
	errs := make([]error, len(added))
	race(len(added), func(i int) {
		addr := fmt.Sprintf("+1415777%04d", i)
		added[i], errs[i] = nodes[i%2].AddPhoneNumber(ctx, org, cfg.ID, store.PhoneNumber{Address: addr,
			AddressNormalized: addr, AddressType: store.AddressPSTN, IsDefaultCallerID: true})
	})
	checkOneDefault := func(what string) {
		t.Helper()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("%s %d: %v", what, i, err)
			}
		}
		list, err := db.ListPhoneNumbers(ctx, org, cfg.ID)
		if err != nil {
			t.Fatal(err)
		}
		defaults := 0
		for _, p := range list {
			if p.IsDefaultCallerID {
				defaults++
			}
		}
		if defaults != 1 {
			t.Fatalf("after racing %ss: %d default caller ids, want 1", what, defaults)
		}
	}
	checkOneDefault("add")
	race(len(added), func(i int) {
		_, errs[i] = nodes[i%2].UpdatePhoneNumber(ctx, org, cfg.ID, added[i].ID, func(p *store.PhoneNumber) {
			p.IsDefaultCallerID = true
		})
	})
	checkOneDefault("default switch")
	race(len(added), func(i int) {
		_, errs[i] = nodes[i%2].UpdatePhoneNumber(ctx, org, cfg.ID, added[0].ID, func(p *store.PhoneNumber) {
			label := "x"
			if p.Label != nil {
				label = *p.Label + "x"
			}
			p.Label = &label
		})
	})
	checkOneDefault("label change")
	list, err := db.ListPhoneNumbers(ctx, org, cfg.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range list {
		if p.ID != added[0].ID {
			continue
		}
		if p.Label == nil || *p.Label != strings.Repeat("x", len(added)) {
			t.Fatalf("label after %d appends = %v", len(added), p.Label)
		}
		return
	}
	t.Fatalf("number %d not listed", added[0].ID)
}

// TestRaceDefaultOutbound: configurations created or made the default at
// once on two nodes all succeed and leave one default outbound
// configuration.
func TestRaceDefaultOutbound(t *testing.T) {
	ctx := context.Background()
	db, nodes := twoNodes(t)
	org := newOrg(t, db.DB, "acme")
	cfgs := make([]*store.TelephonyConfig, 10)
	errs := make([]error, len(cfgs))
	check := func(what string) {
		t.Helper()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("%s %d: %v", what, i, err)
			}
		}
		list, err := db.ListTelephonyConfigs(ctx, org)
		if err != nil {
			t.Fatal(err)
		}
		defaults := 0
		for _, c := range list {
			if c.IsDefaultOutbound {
				defaults++
			}
		}
		if defaults != 1 {
			t.Fatalf("after racing %ss: %d default configurations, want 1", what, defaults)
		}
	}
	race(len(cfgs), func(i int) {
		cfgs[i], errs[i] = nodes[i%2].CreateTelephonyConfig(ctx, org, store.TelephonyConfig{Name: fmt.Sprint("c", i),
			Provider: "twilio", IsDefaultOutbound: true, Credentials: store.Credentials{}})
	})
	check("create")
	race(len(cfgs), func(i int) {
		_, errs[i] = nodes[i%2].UpdateTelephonyConfig(ctx, org, cfgs[i].ID, func(c *store.TelephonyConfig) error {
			c.IsDefaultOutbound = true
			return nil
		})
	})
	check("update")
}
