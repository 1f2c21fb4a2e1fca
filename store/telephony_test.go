package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/outdial/outdial/store"
)

func TestTelephonyConfigStore(t *testing.T) {
	ctx := context.Background()
	db := newDB(t)
	orgA, orgB := newOrg(t, db.DB, "a"), newOrg(t, db.DB, "b")
	cfgs, _ := secretConfigs(t)
	var ids []int64
	for _, c := range cfgs {
		got, err := db.CreateTelephonyConfig(ctx, orgA, c)
		if err != nil {
			t.Fatalf("create %s: %v", c.Provider, err)
		}
		if got.Name != c.Name || got.Provider != c.Provider || got.OrganizationID != orgA || got.IsDefaultOutbound != c.IsDefaultOutbound {
			t.Fatalf("created = %+v", got)
		}
		for k, v := range c.Credentials {
			if got.Credentials[k] != v {
				t.Fatalf("%s.%s = %v, want %v", c.Provider, k, got.Credentials[k], v)
			}
		}
		ids = append(ids, got.ID)
	}
	if _, err := db.CreateTelephonyConfig(ctx, orgA, cfgs[0]); store.ErrorCode(err) != store.ECONFLICT {
		t.Fatalf("duplicate name: %v, want ECONFLICT", err)
	}
	if _, err := db.CreateTelephonyConfig(ctx, orgB, cfgs[0]); err != nil {
		t.Fatalf("same name in another organization: %v", err)
	}
	if _, err := db.GetTelephonyConfig(ctx, orgB, ids[0]); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("other organization's get: %v, want ENOTFOUND", err)
	}
	if _, err := db.UpdateTelephonyConfig(ctx, orgB, ids[0], func(*store.TelephonyConfig) error { return nil }); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("other organization's update: %v", err)
	}
	if err := db.DeleteTelephonyConfig(ctx, orgB, ids[0]); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("other organization's delete: %v", err)
	}
	list, err := db.ListTelephonyConfigs(ctx, orgA)
	if err != nil || len(list) != len(cfgs) {
		t.Fatalf("list = %d, %v", len(list), err)
	}
	for i, c := range list {
		if c.ID != ids[i] || c.Credentials != nil {
			t.Fatalf("list[%d] = %+v (ordered by id, no credentials)", i, c)
		}
	}

	// Update: an error from apply aborts and is returned as is.
	errStop := errors.New("stop")
	if _, err := db.UpdateTelephonyConfig(ctx, orgA, ids[0], func(c *store.TelephonyConfig) error {
		c.Name = "changed"
		return errStop
	}); !errors.Is(err, errStop) {
		t.Fatalf("apply error = %v", err)
	}
	if c, _ := db.GetTelephonyConfig(ctx, orgA, ids[0]); c.Name != cfgs[0].Name {
		t.Fatalf("aborted update was saved: %q", c.Name)
	}
	if _, err := db.UpdateTelephonyConfig(ctx, orgA, ids[0], func(c *store.TelephonyConfig) error {
		c.Provider = "twilio"
		return nil
	}); store.ErrorCode(err) != store.EINVALID {
		t.Fatalf("provider change: %v, want EINVALID", err)
	}
	if _, err := db.UpdateTelephonyConfig(ctx, orgA, ids[0], func(c *store.TelephonyConfig) error {
		c.Name = cfgs[1].Name
		return nil
	}); store.ErrorCode(err) != store.ECONFLICT {
		t.Fatalf("rename onto a taken name: %v, want ECONFLICT", err)
	}

	// Default outbound.
	def, err := db.DefaultOutboundConfigID(ctx, orgA)
	if err != nil || def != ids[4] {
		t.Fatalf("default = %d, %v; want %d", def, err, ids[4])
	}
	if _, err := db.UpdateTelephonyConfig(ctx, orgA, ids[2], func(c *store.TelephonyConfig) error {
		c.IsDefaultOutbound = true
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if def, _ := db.DefaultOutboundConfigID(ctx, orgA); def != ids[2] {
		t.Fatalf("default = %d, want %d", def, ids[2])
	}
	if c, _ := db.GetTelephonyConfig(ctx, orgA, ids[4]); c.IsDefaultOutbound {
		t.Fatal("previous default still set")
	}
	if _, err := db.DefaultOutboundConfigID(ctx, orgB); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("organization without default: %v", err)
	}

	// Delete takes the phone numbers with it.
	if _, err := db.AddPhoneNumber(ctx, orgA, ids[3], store.PhoneNumber{Address: "+14155552671", AddressNormalized: "+14155552671", AddressType: store.AddressPSTN}); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteTelephonyConfig(ctx, orgA, ids[3]); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteTelephonyConfig(ctx, orgA, ids[3]); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("delete twice: %v", err)
	}
	raw := rawDB(t, db.path)
	var n int
	if err := raw.QueryRow("SELECT count(*) FROM phone_numbers WHERE telephony_configuration_id = $1", ids[3]).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("phone numbers left after delete = %d", n)
	}
}

func TestPhoneNumberStore(t *testing.T) {
	ctx := context.Background()
	db := newDB(t)
	orgA, orgB := newOrg(t, db.DB, "a"), newOrg(t, db.DB, "b")
	ca, err := db.CreateTelephonyConfig(ctx, orgA, store.TelephonyConfig{Name: "a", Provider: "twilio", Credentials: store.Credentials{}})
	if err != nil {
		t.Fatal(err)
	}
	cb, err := db.CreateTelephonyConfig(ctx, orgB, store.TelephonyConfig{Name: "b", Provider: "twilio", Credentials: store.Credentials{}})
	if err != nil {
		t.Fatal(err)
	}
	us := "US"
	num := func(addr string, def bool) store.PhoneNumber {
		return store.PhoneNumber{Address: addr, AddressNormalized: addr, AddressType: store.AddressPSTN, CountryCode: &us, IsDefaultCallerID: def}
	}
	p1, err := db.AddPhoneNumber(ctx, orgA, ca.ID, num("+14155552671", true))
	if err != nil {
		t.Fatal(err)
	}
	if !p1.IsActive || !p1.IsDefaultCallerID || p1.CountryCode == nil || *p1.CountryCode != "US" || p1.Label != nil {
		t.Fatalf("added = %+v", p1)
	}
	if _, err := db.AddPhoneNumber(ctx, orgA, ca.ID, num("+14155552671", false)); store.ErrorCode(err) != store.ECONFLICT {
		t.Fatalf("duplicate: %v, want ECONFLICT", err)
	}
	if _, err := db.AddPhoneNumber(ctx, orgB, ca.ID, num("+14155552672", false)); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("add to another organization's configuration: %v", err)
	}
	if _, err := db.AddPhoneNumber(ctx, orgB, cb.ID, num("+14155552671", false)); err != nil {
		t.Fatalf("same number in another organization: %v", err)
	}
	p2, err := db.AddPhoneNumber(ctx, orgA, ca.ID, num("+14155552672", true))
	if err != nil {
		t.Fatal(err)
	}
	list, err := db.ListPhoneNumbers(ctx, orgA, ca.ID)
	if err != nil || len(list) != 2 || list[0].IsDefaultCallerID || !list[1].IsDefaultCallerID {
		t.Fatalf("list = %+v, %v", list, err)
	}
	if _, err := db.ListPhoneNumbers(ctx, orgB, ca.ID); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("list another organization's: %v", err)
	}
	label := "sales"
	up, err := db.UpdatePhoneNumber(ctx, orgA, ca.ID, p1.ID, func(p *store.PhoneNumber) {
		p.Label, p.IsDefaultCallerID = &label, true
	})
	if err != nil || up.Label == nil || *up.Label != "sales" || !up.IsActive || !up.IsDefaultCallerID {
		t.Fatalf("update = %+v, %v", up, err)
	}
	list, _ = db.ListPhoneNumbers(ctx, orgA, ca.ID)
	if !list[0].IsDefaultCallerID || list[1].IsDefaultCallerID {
		t.Fatalf("default not switched: %+v", list)
	}
	// Deactivating the default takes its default flag away.
	up, err = db.UpdatePhoneNumber(ctx, orgA, ca.ID, p1.ID, func(p *store.PhoneNumber) { p.IsActive = false })
	if err != nil || up.IsActive || up.IsDefaultCallerID {
		t.Fatalf("deactivate = %+v, %v", up, err)
	}
	if c, _ := db.GetTelephonyConfig(ctx, orgA, ca.ID); c.PhoneNumberCount != 1 {
		t.Fatalf("phone_number_count = %d, want 1 (one inactive)", c.PhoneNumberCount)
	}
	if _, err := db.UpdatePhoneNumber(ctx, orgB, ca.ID, p1.ID, func(*store.PhoneNumber) {}); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("update another organization's: %v", err)
	}
	if err := db.DeletePhoneNumber(ctx, orgB, ca.ID, p2.ID); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("delete another organization's: %v", err)
	}
	if err := db.DeletePhoneNumber(ctx, orgA, cb.ID, p2.ID); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("delete through the wrong configuration: %v", err)
	}
	if err := db.DeletePhoneNumber(ctx, orgA, ca.ID, p2.ID); err != nil {
		t.Fatal(err)
	}
	if err := db.DeletePhoneNumber(ctx, orgA, ca.ID, p2.ID); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("delete twice: %v", err)
	}
}
