package store_test

// Helpers of the copy-data tests (copydata_test.go): a single host's
// database with rows in every table, and reading tables of both engines.

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/store/internal/testdb"
)

// copySource is a single host's database populated with a row in every
// table, closed.
type copySource struct {
	path             string
	key              []byte
	orgA, orgB       int64
	apiKey           string // orgA's live key
	apiKeyID         int64
	configs          []store.TelephonyConfig // orgA's, with their credentials
	campaign, redial int64
	deletedWorkflow  int64 // the largest workflow id, deleted
	contacts         int
}

// newCopySource writes copySource's database in a new SQLite file through
// the store, as serve would have.
func newCopySource(t *testing.T) *copySource {
	t.Helper()
	ctx := context.Background()
	s := &copySource{path: filepath.Join(t.TempDir(), "outdial.db"), key: newKey(t), contacts: 40}
	db, err := store.Open(ctx, s.path, sealerOf(t, s.key))
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 23, 15, 0, 0, 0, time.UTC)
	db.Now = func() time.Time { return t0 }
	must := func(err error) {
		t.Helper()
		if err != nil {
			db.Close()
			t.Fatal(err)
		}
	}

	k, key, err := db.CreateAPIKey(ctx, "acme", "main", store.RoleAdmin)
	must(err)
	s.orgA, s.apiKey, s.apiKeyID = k.OrganizationID, key.Reveal(), k.ID
	old, _, err := db.CreateAPIKey(ctx, "acme", "old", store.RoleAdmin)
	must(err)
	must(db.RevokeAPIKey(ctx, old.ID))
	kb, _, err := db.CreateAPIKey(ctx, "beta", "", store.RoleAdmin)
	must(err)
	s.orgB = kb.OrganizationID

	cfgs, _ := secretConfigs(t)
	var twilio int64
	for _, c := range cfgs {
		got, err := db.CreateTelephonyConfig(ctx, s.orgA, c)
		must(err)
		c.ID = got.ID
		s.configs = append(s.configs, c)
		if c.Provider == "twilio" {
			twilio = got.ID
		}
	}
	_, err = db.CreateTelephonyConfig(ctx, s.orgB, store.TelephonyConfig{Name: "b", Provider: "twilio",
		Credentials: store.Credentials{"account_sid": "AC2", "auth_token": "beta-token"}})
	must(err)
	// The host's event stream of its Twilio configuration (a lease row).
	if _, ok, err := db.AcquireStreamLease(ctx, twilio, "host-1", time.Hour); err != nil || !ok {
		t.Fatalf("stream lease: ok=%v, %v", ok, err)
	}
	us := "US"
	for i, addr := range []string{"+14155552671", "+14155552672"} {
		_, err := db.AddPhoneNumber(ctx, s.orgA, twilio, store.PhoneNumber{Address: addr, AddressNormalized: addr,
			AddressType: store.AddressPSTN, CountryCode: &us, IsDefaultCallerID: i == 0})
		must(err)
	}

	def := []byte(`{"nodes": [{"id": "n1", "label": "Grüße — 東京"}]}`)
	w, err := db.CreateWorkflow(ctx, s.orgA, "main", def)
	must(err)
	scratch, err := db.CreateWorkflow(ctx, s.orgA, "scratch", def)
	must(err)
	must(db.DeleteWorkflow(ctx, s.orgA, scratch.ID))
	s.deletedWorkflow = scratch.ID

	nc := store.NewCampaign{Settings: store.Settings{Name: "Spring drive", MaxConcurrency: 5, RateLimitPerSecond: 2.5},
		WorkflowID: w.ID, WorkflowName: w.Name, WorkflowDefinition: def, TelephonyConfigurationID: twilio,
		TelephonyConfigurationName: "twilio", SourceID: "uploads/spring.csv"}
	c, err := db.CreateCampaign(ctx, s.orgA, nc, func(add func(store.ContactInput) error) ([]string, error) {
		for i := range s.contacts {
			tz := ""
			if i%2 == 0 {
				tz = "America/Chicago"
			}
			if err := add(store.ContactInput{Row: i + 2, PhoneNumber: fmt.Sprintf("+1415%07d", i), Timezone: tz,
				Context: map[string]string{"first_name": "Zoë", "note": `say "hi" 東京`}}); err != nil {
				return nil, err
			}
		}
		return []string{"phone_number", "first_name", "note"}, nil
	})
	must(err)
	s.campaign = c.ID
	l, ok, err := db.AcquireLease(ctx, c.ID, "host-1", time.Hour)
	must(err)
	if !ok {
		t.Fatal("lease not taken")
	}
	list, err := db.ClaimAttempts(ctx, l, t0, t0.Add(time.Hour), c.Timezones, 3)
	must(err)
	if len(list) != 3 {
		t.Fatalf("claimed %d attempts, want 3", len(list))
	}
	for i, a := range list {
		_, err := db.MarkPlaced(ctx, store.Placement{AttemptID: a.ID, CampaignID: c.ID, OrganizationID: s.orgA,
			PhoneNumber: a.PhoneNumber, ProviderCallID: fmt.Sprintf("CA%d", i), CallerID: "+14155552671",
			At: t0, Deadline: t0.Add(time.Hour), Lease: l})
		must(err)
		if i == 2 {
			continue // left in flight
		}
		// The second is answered and abandoned (no agent audio): a row of
		// abandoned_numbers.
		outcome := map[int]string{0: "busy", 1: "answered"}[i]
		_, err = db.ApplyStatus(ctx, a.ID, store.StatusUpdate{At: t0, Raw: outcome, Final: true, Outcome: outcome,
			ProviderCallID: fmt.Sprintf("CA%d", i), FromProvider: true, Sequence: 1,
			ReplayKeys: []string{fmt.Sprintf("nonce-%d", i)}, ReplayUntil: t0.Add(time.Hour)}, noRetry)
		must(err)
	}
	_, err = db.ReserveNumberCall(ctx, s.orgA, "+14155550199", 999, t0, 3, 24*time.Hour)
	must(err)
	_, err = db.AddLog(ctx, c.ID, "info", "copy_test", "a line with \"quotes\" and ünïcode", map[string]any{"n": 1})
	must(err)
	redialOf := c.ID
	nc.Name, nc.RedialOf = "Spring drive (redial)", &redialOf
	r, err := db.RedialCampaign(ctx, s.orgA, nc, []string{"phone_number", "first_name", "note"}, []string{"busy"})
	must(err)
	s.redial = r.ID

	until := t0.Add(48 * time.Hour)
	_, err = db.AddSuppressions(ctx, s.orgA, store.NewSuppressions{Reason: "asked", Source: store.SourceAPI},
		[]string{"+14155550100", "+14155550101"})
	must(err)
	_, err = db.AddSuppressions(ctx, s.orgB, store.NewSuppressions{Source: store.SourceCSV, ExpiresAt: &until},
		[]string{"+14155550100"})
	must(err)
	_, err = db.UpdateCompliancePolicy(ctx, s.orgA, s.apiKeyID, func(p *store.Policy) error {
		p.AttemptCap.Enabled = true
		return nil
	})
	must(err)
	p, err := db.Authenticate(ctx, s.apiKey)
	must(err)
	_, _, err = db.CreateSession(ctx, p)
	must(err)
	_, err = db.CreateSignInLink(ctx, p, time.Hour)
	must(err)
	// A user with a password, a second factor and a session; a failed
	// sign-in; an audit entry beside the one copied from the policy log.
	u, _, err := db.CreateUserInOrg(ctx, "acme", "ada@example.com", store.RoleOperator)
	must(err)
	must(db.SetPassword(ctx, u.ID, "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA"))
	must(db.EnableTOTP(ctx, u.ID, "JBSWY3DPEHPK3PXP", [][]byte{[]byte("code-1")}))
	_, _, err = db.CreateSession(ctx, store.Principal{UserID: u.ID})
	must(err)
	must(db.RecordSignInFailure(ctx, "ada@example.com", "192.0.2.1", t0))
	must(db.RecordAudit(ctx, store.AuditEntry{OrganizationID: s.orgA, ActorType: store.AuditActorUser, ActorID: u.ID,
		ActorName: u.Email, Action: "campaign.start", Method: "POST", Route: "/api/v1/campaign/{campaign_id}/start",
		TargetType: "campaign", TargetID: &s.campaign, Status: 200, Address: "192.0.2.1"}))
	must(db.Close())

	// Every table holds rows: the copy is checked on each.
	raw := testdb.Raw(t, s.path)
	for _, table := range sqliteTables(t, raw) {
		if count(t, raw, "SELECT count(*) FROM "+table) == 0 {
			t.Fatalf("the source's table %s is empty: populate it", table)
		}
	}
	raw.Close()
	return s
}

// pgVersion is the last PostgreSQL migration's version.
func pgVersion(t *testing.T) int {
	t.Helper()
	all, err := store.PostgresMigrations()
	if err != nil || len(all) == 0 {
		t.Fatalf("postgres migrations: %v, %v", all, err)
	}
	return all[len(all)-1].Version
}

// sqliteTables lists a SQLite database's tables of ours.
func sqliteTables(t *testing.T, raw *sql.DB) []string {
	t.Helper()
	return queryStrings(t, raw, `SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY name`)
}

// pgTables lists the tables of the destination's current schema.
func pgTables(t *testing.T, raw *sql.DB) []string {
	t.Helper()
	return queryStrings(t, raw, `SELECT tablename::text FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename`)
}

// pgSchema describes the destination's tables, columns, indexes and
// constraints.
func pgSchema(t *testing.T, raw *sql.DB) []string {
	t.Helper()
	return queryStrings(t, raw, `SELECT table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' ||
       COALESCE(column_default, '') || ' ' || is_identity FROM information_schema.columns WHERE table_schema = current_schema()
UNION ALL SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema()
UNION ALL SELECT t.relname || ' ' || k.conname || ' ' || pg_get_constraintdef(k.oid) || ' ' || k.convalidated
  FROM pg_constraint k JOIN pg_class t ON t.oid = k.conrelid JOIN pg_namespace n ON n.oid = t.relnamespace
  WHERE n.nspname = current_schema() ORDER BY 1`)
}

func queryStrings(t *testing.T, raw *sql.DB, query string, args ...any) []string {
	t.Helper()
	rows, err := raw.Query(query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// tableRows returns every row of table, each printed as its values with
// their Go types (column order cols), sorted: two databases hold the same
// rows when tableRows are equal. skip names a column left out.
func tableRows(t *testing.T, raw *sql.DB, table string, cols []string, skip string) []string {
	t.Helper()
	cols = slices.DeleteFunc(slices.Clone(cols), func(c string) bool { return c == skip })
	quoted := make([]string, len(cols))
	for i, c := range cols {
		quoted[i] = `"` + c + `"`
	}
	rows, err := raw.Query("SELECT " + strings.Join(quoted, ", ") + " FROM " + table)
	if err != nil {
		t.Fatalf("read %s: %v", table, err)
	}
	defer rows.Close()
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var out []string
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for i, v := range vals {
			fmt.Fprintf(&b, "%s=%T:%#v ", cols[i], v, v)
		}
		out = append(out, b.String())
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}
