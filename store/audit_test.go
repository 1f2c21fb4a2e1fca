package store_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/outdial/outdial/queries"
	"github.com/outdial/outdial/store"
)

func TestAuditTrail(t *testing.T) {
	ctx := context.Background()
	db, clock, p, _ := newSessionDB(t)
	other := newOrg(t, db.DB, "other")
	t0 := clock.t
	c7, c8 := int64(7), int64(8)
	entries := []store.AuditEntry{
		{ActorType: store.AuditActorUser, ActorID: 1, Action: "campaign.start", TargetType: "campaign", TargetID: &c7},
		{ActorType: store.AuditActorAPIKey, ActorID: 2, Action: "campaign.pause", TargetType: "campaign", TargetID: &c7},
		{ActorType: store.AuditActorUser, ActorID: 1, Action: "campaign.pause", TargetType: "campaign", TargetID: &c8},
		{ActorType: store.AuditActorUser, ActorID: 3, Action: "compliance_policy.update", TargetType: "compliance_policy",
			Changes: json.RawMessage(`{"calling_hours.start":{"from":"08:00","to":"09:00"}}`)},
	}
	for i, e := range entries {
		e.OrganizationID, e.ActorName, e.Method, e.Route, e.Status, e.Address = p.OrganizationID, "ada", "POST", "/api/v1/x", 200, "192.0.2.1"
		e.At = t0.Add(time.Duration(i) * time.Hour)
		if err := db.RecordAudit(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.RecordAudit(ctx, store.AuditEntry{OrganizationID: other, ActorType: store.AuditActorUser, Action: "campaign.start"}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []store.AuditEntry{
		{OrganizationID: other, ActorType: "robot"},
		{OrganizationID: other, ActorType: store.AuditActorUser, Changes: json.RawMessage(`{`)},
	} {
		if err := db.RecordAudit(ctx, bad); store.ErrorCode(err) != store.EINVALID {
			t.Fatalf("record %+v: %v", bad, err)
		}
	}
	one := int64(1)
	tests := []struct {
		name string
		f    store.AuditFilter
		want []string // actions, in order
	}{
		{"all", store.AuditFilter{}, []string{"campaign.start", "campaign.pause", "campaign.pause", "compliance_policy.update"}},
		{"limit", store.AuditFilter{Limit: 2}, []string{"campaign.start", "campaign.pause"}},
		{"user 1", store.AuditFilter{ActorType: store.AuditActorUser, ActorID: &one}, []string{"campaign.start", "campaign.pause"}},
		{"keys", store.AuditFilter{ActorType: store.AuditActorAPIKey}, []string{"campaign.pause"}},
		{"action", store.AuditFilter{Action: "campaign.pause"}, []string{"campaign.pause", "campaign.pause"}},
		{"target", store.AuditFilter{TargetType: "campaign", TargetID: &c7}, []string{"campaign.start", "campaign.pause"}},
		{"target type", store.AuditFilter{TargetType: "compliance_policy"}, []string{"compliance_policy.update"}},
		{"none", store.AuditFilter{Action: "user.delete"}, nil},
	}
	for _, tt := range tests {
		got, err := db.ListAudit(ctx, p.OrganizationID, tt.f)
		if err != nil {
			t.Fatal(err)
		}
		var actions []string
		for _, e := range got {
			actions = append(actions, e.Action)
		}
		if len(actions) != len(tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, actions, tt.want)
			continue
		}
		for i := range actions {
			if actions[i] != tt.want[i] {
				t.Errorf("%s: %v, want %v", tt.name, actions, tt.want)
			}
		}
	}
	all, _ := db.ListAudit(ctx, p.OrganizationID, store.AuditFilter{})
	last := all[3]
	if !last.At.Equal(t0.Add(3*time.Hour)) || last.TargetID != nil || last.Status != 200 || last.Address != "192.0.2.1" ||
		string(last.Changes) != `{"calling_hours.start":{"from":"08:00","to":"09:00"}}` || string(all[0].Changes) != "{}" {
		t.Fatalf("entry = %+v", last)
	}
	// Paging: after the second, the rest.
	page, _ := db.ListAudit(ctx, p.OrganizationID, store.AuditFilter{AfterID: all[1].ID})
	if len(page) != 2 || page[0].ID != all[2].ID {
		t.Fatalf("page after %d = %+v", all[1].ID, page)
	}
	var streamed []int64
	if err := db.EachAudit(ctx, p.OrganizationID, store.AuditFilter{Limit: 1}, func(e store.AuditEntry) error {
		streamed = append(streamed, e.ID)
		return nil
	}); err != nil || len(streamed) != 4 || streamed[3] != all[3].ID {
		t.Fatalf("streamed %v, %v", streamed, err)
	}
	// Retention: the entries older than 90 minutes after t0 go, of every
	// organization (the other's, made at t0, too).
	n, err := db.PurgeAudit(ctx, t0.Add(90*time.Minute))
	if err != nil || n != 3 {
		t.Fatalf("purged %d, %v; want 3", n, err)
	}
	if left, _ := db.ListAudit(ctx, p.OrganizationID, store.AuditFilter{}); len(left) != 2 || left[0].ID != all[2].ID {
		t.Fatalf("left = %+v", left)
	}
}

// TestPeopleMigration: a database made before roles keeps its keys as
// admins and its sessions working, and its policy change log starts the
// audit trail.
func TestPeopleMigration(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "outdial.db")
	raw := rawDB(t, path)
	entries, err := fs.ReadDir(queries.Migrations, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	for _, e := range entries {
		if e.Name() >= "0014" {
			break
		}
		body, err := fs.ReadFile(queries.Migrations, "migrations/"+e.Name())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := raw.Exec(string(body)); err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
	}
	for _, q := range []string{
		"PRAGMA user_version = 13",
		`INSERT INTO organizations (id, name, created_at) VALUES (1, 'acme', 0)`,
		`INSERT INTO api_keys (id, organization_id, name, prefix, key_hash, created_at) VALUES (5, 1, 'ci', 'odk_xx', x'01', 0)`,
		`INSERT INTO console_sessions (token_hash, csrf_token, api_key_id, organization_id, created_at, last_seen_at, expires_at)
			VALUES (x'02', 'c', 5, 1, 0, 0, 9999999999999)`,
		`INSERT INTO compliance_policy_changes (organization_id, version, changed_at, api_key_id, changes) VALUES (1, 2, 1000, 5, '{"a":{"from":1,"to":2}}')`,
		`INSERT INTO compliance_policy_changes (organization_id, version, changed_at, api_key_id, changes) VALUES (1, 3, 2000, NULL, '{}')`,
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	raw.Close()
	db := openDB(t, path, newKey(t))
	keys, err := db.ListOrgAPIKeys(ctx, 1)
	if err != nil || len(keys) != 1 || keys[0].Role != store.RoleAdmin || keys[0].LastUsedAt != nil {
		t.Fatalf("keys = %+v, %v", keys, err)
	}
	var role string
	r2 := rawDB(t, path)
	if err := r2.QueryRow(`SELECT api_keys.role FROM console_sessions JOIN api_keys ON api_keys.id = console_sessions.api_key_id`).Scan(&role); err != nil || role != "admin" {
		t.Fatalf("the session kept: role %q, %v", role, err)
	}
	trail, err := db.ListAudit(ctx, 1, store.AuditFilter{})
	if err != nil || len(trail) != 2 {
		t.Fatalf("trail = %+v, %v", trail, err)
	}
	want := []struct {
		id   int64
		name string
		at   int64
	}{{5, "ci", 1000}, {0, "before audit", 2000}}
	for i, w := range want {
		e := trail[i]
		if e.ActorType != store.AuditActorAPIKey || e.ActorID != w.id || e.ActorName != w.name || e.At.UnixMilli() != w.at ||
			e.Action != "compliance_policy.update" || e.TargetType != "compliance_policy" || e.Method != "PUT" {
			t.Fatalf("entry %d = %+v", i, e)
		}
	}
	if string(trail[0].Changes) != `{"a":{"from":1,"to":2}}` {
		t.Fatalf("changes = %s", trail[0].Changes)
	}
}
