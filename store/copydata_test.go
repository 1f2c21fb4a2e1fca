package store_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/store/internal/testdb"
)

// needPostgres skips t unless the run names a PostgreSQL server
// (OUTDIAL_TEST_DATABASE_URL); in CI (CI set) a missing server fails it.
func needPostgres(t *testing.T) {
	t.Helper()
	if testdb.Postgres() {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is not set: CI runs the copy-data tests on PostgreSQL", testdb.EnvURL)
	}
	t.Skipf("%s is not set", testdb.EnvURL)
}

func sealerOf(t *testing.T, key []byte) *store.Sealer {
	t.Helper()
	s, err := store.NewSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestCopyData copies a populated single-host database into an empty
// PostgreSQL database and checks that every table holds the same rows
// (ids included), that the store opened on it reads the campaign, the
// key and the sealed credentials, that new ids follow the copied ones
// (also past a deleted row's), and that its schema is current.
func TestCopyData(t *testing.T) {
	needPostgres(t)
	ctx := context.Background()
	src := newCopySource(t)
	dest := testdb.Location(t)
	sealer := sealerOf(t, src.key)
	var progress []store.TableCopy
	// The URL as the nodes may give it, with a setting of their pool.
	withPool := dest + "?pool_max_conns=4"
	if strings.Contains(dest, "?") {
		withPool = dest + "&pool_max_conns=4"
	}
	report, err := store.CopyData(ctx, src.path, withPool, store.CopyOptions{Sealer: sealer,
		Progress: func(p store.TableCopy) { progress = append(progress, p) }})
	if err != nil {
		t.Fatalf("copy data: %v", err)
	}

	rawSrc, rawDst := testdb.Raw(t, src.path), testdb.Raw(t, dest)
	tables := sqliteTables(t, rawSrc)
	var copied []string
	for _, tc := range report.Tables {
		copied = append(copied, tc.Table)
	}
	if got := slices.Sorted(slices.Values(copied)); !slices.Equal(got, tables) {
		t.Fatalf("tables copied = %v, want the source's %v", got, tables)
	}
	if i, j := slices.Index(copied, "organizations"), slices.Index(copied, "call_attempts"); i > j ||
		slices.Index(copied, "contacts") > j || slices.Index(copied, "campaigns") > slices.Index(copied, "contacts") {
		t.Fatalf("copy order %v: a table before one it references", copied)
	}
	if want := append(slices.Clone(tables), "outdial_schema"); !slices.Equal(pgTables(t, rawDst), slices.Sorted(slices.Values(want))) {
		t.Fatalf("destination tables = %v, want %v and outdial_schema", pgTables(t, rawDst), tables)
	}
	var total int64
	for i, tc := range report.Tables {
		n := int64(count(t, rawSrc, "SELECT count(*) FROM "+tc.Table))
		if tc.Rows != n || int64(count(t, rawDst, "SELECT count(*) FROM "+tc.Table)) != n {
			t.Errorf("%s: report %d rows, source %d, destination %d", tc.Table, tc.Rows, n,
				count(t, rawDst, "SELECT count(*) FROM "+tc.Table))
		}
		total += n
		if p := progress[i]; p != tc || !p.Done {
			t.Errorf("progress report %d = %+v, want %+v done", i, p, tc)
		}
		cols := queryStrings(t, rawDst, `SELECT column_name::text FROM information_schema.columns
WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`, tc.Table)
		if got, want := tableRows(t, rawDst, tc.Table, cols, ""), tableRows(t, rawSrc, tc.Table, cols, ""); !slices.Equal(got, want) {
			t.Errorf("%s: rows differ\ndestination: %q\nsource:      %q", tc.Table, got, want)
		}
	}
	if report.Rows != total || report.Credentials != len(src.configs)+1 || report.Resealed != 0 ||
		report.UnfinishedAttempts != 1 || report.SchemaVersion != pgVersion(t) {
		t.Errorf("report = %+v, want %d rows, %d credentials none resealed, 1 unfinished attempt", report, total, len(src.configs)+1)
	}

	migrated := testdb.Location(t)
	if _, err := store.Migrate(ctx, migrated); err != nil {
		t.Fatal(err)
	}
	if got, want := pgSchema(t, rawDst), pgSchema(t, testdb.Raw(t, migrated)); !slices.Equal(got, want) {
		t.Errorf("schema of the copy differs from Migrate's\ncopy:    %q\nmigrate: %q", got, want)
	}
	current, pending, err := store.PendingMigrations(ctx, dest)
	if err != nil || current != pgVersion(t) || len(pending) != 0 {
		t.Fatalf("destination schema: version %d, pending %v, %v; want %d and none", current, pending, err, pgVersion(t))
	}
	db, err := store.Open(ctx, dest, sealer)
	if err != nil {
		t.Fatalf("open the copy: %v", err)
	}
	defer db.Close()
	p, err := db.Authenticate(ctx, src.apiKey)
	if err != nil || p.APIKeyID != src.apiKeyID || p.OrganizationID != src.orgA {
		t.Fatalf("authenticate on the copy = %+v, %v; want key %d of organization %d", p, err, src.apiKeyID, src.orgA)
	}
	c, err := db.GetCampaign(ctx, src.orgA, src.campaign)
	if err != nil || c.Name != "Spring drive" || c.TotalRows != int64(src.contacts) || c.RedialedCampaignID == nil || *c.RedialedCampaignID != src.redial {
		t.Fatalf("campaign on the copy = %+v, %v", c, err)
	}
	contacts, err := db.ListContacts(ctx, src.campaign, 0, 100)
	if err != nil || len(contacts) != src.contacts || !strings.Contains(string(contacts[0].Context), `"note":"say \"hi\" 東京"`) {
		t.Fatalf("contacts on the copy: %d, %v", len(contacts), err)
	}
	for _, want := range src.configs {
		got, err := db.GetTelephonyConfig(ctx, src.orgA, want.ID)
		if err != nil {
			t.Fatalf("configuration %d on the copy: %v", want.ID, err)
		}
		if fmt.Sprint(got.Credentials) != fmt.Sprint(want.Credentials) {
			t.Errorf("configuration %d: credentials %v, want %v", want.ID, got.Credentials, want.Credentials)
		}
	}
	w, err := db.CreateWorkflow(ctx, src.orgA, "after the copy", []byte(`{}`))
	if err != nil || w.ID <= src.deletedWorkflow {
		t.Fatalf("new workflow = %+v, %v; want an id above %d (deleted on the single host, never reused)", w, err, src.deletedWorkflow)
	}
	k, _, err := db.CreateAPIKey(ctx, "gamma", "", store.RoleAdmin)
	if err != nil || k.OrganizationID <= src.orgB {
		t.Fatalf("new organization = %+v, %v; want an id above %d", k, err, src.orgB)
	}
}

// A cluster key other than the data directory's: credentials that open
// only with the data directory's key are re-sealed with the cluster's, and
// a copy with neither key that opens them writes nothing.
func TestCopyDataReseals(t *testing.T) {
	needPostgres(t)
	ctx := context.Background()
	src := newCopySource(t)
	clusterKey := newKey(t)

	dest := testdb.Location(t)
	_, err := store.CopyData(ctx, src.path, dest, store.CopyOptions{Sealer: sealerOf(t, clusterKey)})
	if err == nil || !strings.Contains(err.Error(), "telephony configuration") {
		t.Fatalf("copy with a key that opens nothing: %v, want a refusal naming the configuration", err)
	}
	if got := pgTables(t, testdb.Raw(t, dest)); len(got) != 0 {
		t.Fatalf("refused copy left tables %v", got)
	}

	report, err := store.CopyData(ctx, src.path, dest, store.CopyOptions{Sealer: sealerOf(t, clusterKey), SourceSealer: sealerOf(t, src.key)})
	if err != nil {
		t.Fatalf("copy data: %v", err)
	}
	if report.Resealed != len(src.configs)+1 || report.Credentials != report.Resealed {
		t.Fatalf("report = %+v, want all %d credentials resealed", report, len(src.configs)+1)
	}
	rawSrc, rawDst := testdb.Raw(t, src.path), testdb.Raw(t, dest)
	cols := []string{"id", "organization_id", "name", "provider", "is_default_outbound", "credentials", "created_at", "updated_at"}
	if got, want := tableRows(t, rawDst, "telephony_configs", cols, "credentials"), tableRows(t, rawSrc, "telephony_configs", cols, "credentials"); !slices.Equal(got, want) {
		t.Fatalf("configurations differ beside their credentials\n%q\n%q", got, want)
	}
	for _, c := range src.configs {
		var a, b []byte
		if err := rawSrc.QueryRow("SELECT credentials FROM telephony_configs WHERE id = $1", c.ID).Scan(&a); err != nil {
			t.Fatal(err)
		}
		if err := rawDst.QueryRow("SELECT credentials FROM telephony_configs WHERE id = $1", c.ID).Scan(&b); err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(a, b) {
			t.Fatalf("configuration %d: credentials copied as they were, want re-sealed", c.ID)
		}
	}
	for _, tc := range []struct {
		key    []byte
		opens  bool
		reason string
	}{{clusterKey, true, "the cluster's key"}, {src.key, false, "the data directory's key"}} {
		db, err := store.Open(ctx, dest, sealerOf(t, tc.key))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range src.configs {
			got, err := db.GetTelephonyConfig(ctx, src.orgA, want.ID)
			if opened := err == nil && fmt.Sprint(got.Credentials) == fmt.Sprint(want.Credentials); opened != tc.opens {
				t.Errorf("configuration %d with %s: opened %v (%v), want %v", want.ID, tc.reason, opened, err, tc.opens)
			}
		}
		// The users' second-factor secrets are sealed with the key too.
		u, err := db.UserForSignIn(ctx, "ada@example.com")
		if opened := err == nil && u.TOTPSecret.Reveal() == "JBSWY3DPEHPK3PXP"; opened != tc.opens {
			t.Errorf("second-factor secret with %s: opened %v (%v), want %v", tc.reason, opened, err, tc.opens)
		}
		db.Close()
	}
}

// A database holding tables of ours (all of them, migrated; or one) is
// refused and left as it was; a database holding only other tables is
// copied into, its tables kept.
func TestCopyDataRefusesNonEmpty(t *testing.T) {
	needPostgres(t)
	ctx := context.Background()
	src := newCopySource(t)
	opts := store.CopyOptions{Sealer: sealerOf(t, src.key)}

	migrated := testdb.Location(t)
	if _, err := store.Migrate(ctx, migrated); err != nil {
		t.Fatal(err)
	}
	raw := testdb.Raw(t, migrated)
	before := pgTables(t, raw)
	_, err := store.CopyData(ctx, src.path, migrated, opts)
	var ne *store.NotEmptyError
	if !errors.Is(err, store.ErrNotEmpty) || !errors.As(err, &ne) || !slices.Contains(ne.Tables, "organizations") ||
		!slices.Contains(ne.Tables, "outdial_schema") || !strings.Contains(err.Error(), "empty database") {
		t.Fatalf("copy into a migrated database: %v, want a NotEmptyError naming organizations and outdial_schema", err)
	}
	if after := pgTables(t, raw); !slices.Equal(after, before) || count(t, raw, "SELECT count(*) FROM organizations") != 0 {
		t.Fatalf("refused copy changed the database: tables %v, were %v", after, before)
	}

	one := testdb.Location(t)
	raw = testdb.Raw(t, one)
	if _, err := raw.Exec("CREATE TABLE contacts (id BIGINT PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	_, err = store.CopyData(ctx, src.path, one, opts)
	if !errors.As(err, &ne) || !slices.Equal(ne.Tables, []string{"contacts"}) {
		t.Fatalf("copy into a database holding contacts: %v, want a NotEmptyError naming contacts", err)
	}
	if got := pgTables(t, raw); !slices.Equal(got, []string{"contacts"}) {
		t.Fatalf("refused copy changed the tables: %v", got)
	}

	other := testdb.Location(t)
	raw = testdb.Raw(t, other)
	if _, err := raw.Exec("CREATE TABLE billing_things (id BIGINT PRIMARY KEY); INSERT INTO billing_things VALUES (7)"); err != nil {
		t.Fatal(err)
	}
	if _, err := store.CopyData(ctx, src.path, other, opts); err != nil {
		t.Fatalf("copy into a database holding only another application's table: %v", err)
	}
	if count(t, raw, "SELECT count(*) FROM billing_things WHERE id = 7") != 1 || count(t, raw, "SELECT count(*) FROM campaigns") != 2 {
		t.Fatal("the other table or the campaigns are missing after the copy")
	}
}

// A row PostgreSQL refuses, far into the copy (a contact's text holding a
// NUL, which SQLite stores), fails the copy with a message naming it, and
// leaves the database empty: everything is one transaction.
func TestCopyDataRollsBack(t *testing.T) {
	needPostgres(t)
	ctx := context.Background()
	src := newCopySource(t)
	raw := testdb.Raw(t, src.path)
	var id int64
	if err := raw.QueryRow("SELECT max(id) FROM contacts").Scan(&id); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`UPDATE contacts SET context = '{"a":"x' || char(0) || 'y"}' WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	dest := testdb.Location(t)
	var done []string
	_, err := store.CopyData(ctx, src.path, dest, store.CopyOptions{Sealer: sealerOf(t, src.key),
		Progress: func(p store.TableCopy) { done = append(done, p.Table) }})
	if want := fmt.Sprintf("contacts id %d, column context", id); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "NUL") {
		t.Fatalf("copy of a contact holding a NUL: %v, want an error naming %q", err, want)
	}
	if !slices.Contains(done, "campaigns") {
		t.Fatalf("tables copied before the failure: %v, want campaigns among them", done)
	}
	if got := pgTables(t, testdb.Raw(t, dest)); len(got) != 0 {
		t.Fatalf("failed copy left tables %v", got)
	}
}

// A source not at the binary's schema version, a missing one and a
// destination that is not a PostgreSQL URL are refused before anything
// is opened (no server needed: the URL is never dialled).
func TestCopyDataRefusesSource(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	key := newKey(t)
	opts := store.CopyOptions{Sealer: sealerOf(t, key)}
	const nowhere = "postgres://outdial@127.0.0.1:1/none?sslmode=disable"
	path := filepath.Join(dir, "outdial.db")
	db, err := store.Open(ctx, path, opts.Sealer)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	raw := testdb.Raw(t, path)
	supported := store.SupportedSchemaVersion()

	if _, err := raw.Exec(fmt.Sprintf("PRAGMA user_version = %d", supported-1)); err != nil {
		t.Fatal(err)
	}
	_, err = store.CopyData(ctx, path, nowhere, opts)
	var old *store.SourceSchemaError
	if !errors.As(err, &old) || old.Version != supported-1 || old.Supported != supported || !strings.Contains(err.Error(), "outdial migrate") {
		t.Fatalf("older source: %v, want a SourceSchemaError telling to migrate", err)
	}
	if _, err := raw.Exec(fmt.Sprintf("PRAGMA user_version = %d", supported+1)); err != nil {
		t.Fatal(err)
	}
	if _, err := store.CopyData(ctx, path, nowhere, opts); !errors.Is(err, store.ErrSchemaTooNew) {
		t.Fatalf("newer source: %v, want ErrSchemaTooNew", err)
	}
	if _, err := store.CopyData(ctx, filepath.Join(dir, "missing.db"), nowhere, opts); err == nil {
		t.Fatal("missing source: no error")
	}
	if _, err := os.Stat(filepath.Join(dir, "missing.db")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a missing source was created: %v", err)
	}
	if _, err := store.CopyData(ctx, path, filepath.Join(dir, "other.db"), opts); err == nil || !strings.Contains(err.Error(), "PostgreSQL URL") {
		t.Fatalf("destination not a URL: %v", err)
	}
	if _, err := store.CopyData(ctx, path, nowhere, store.CopyOptions{}); err == nil {
		t.Fatal("no key: no error")
	}
}
