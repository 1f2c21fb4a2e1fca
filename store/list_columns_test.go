package store_test

import (
	"context"
	"database/sql"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/outdial/outdial/queries"
	"github.com/outdial/outdial/store"
)

// TestListsDoNotReadDefinitions: a workflow list is answered from a
// covering index (it never reads a definition), and campaign rows hold no
// workflow definition (it is in campaign_definitions), so that no list
// walks the overflow pages of 1 MiB definitions to reach the columns it
// returns.
// SQLite-specific: reads SQLite's query plan and table_info.
func TestListsDoNotReadDefinitions(t *testing.T) {
	db := newSQLiteDB(t)
	raw := rawDB(t, db.path)
	plan := queryPlan(t, raw, namedQueries(t)["ListWorkflows"], 1)
	if len(plan) != 1 || !strings.Contains(plan[0], "USING COVERING INDEX workflows_list") {
		t.Errorf("ListWorkflows plan = %q, want one search of the covering index workflows_list", plan)
	}
	for _, col := range columnsOf(t, raw, "campaigns") {
		if col == "workflow_definition" {
			t.Errorf("campaigns has a workflow_definition column: a list of campaigns walks it")
		}
	}
}

// TestMigrationMovesCampaignDefinitions opens a database made by the
// migrations before 0006 with a campaign in it: the campaign keeps its
// definition (now in campaign_definitions) and every other value.
// SQLite-specific: builds a database with SQLite's migrations before 0006.
func TestMigrationMovesCampaignDefinitions(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "outdial.db")
	raw := rawDB(t, path)
	if _, err := raw.Exec("PRAGMA journal_mode=WAL"); err != nil {
		t.Fatal(err)
	}
	entries, err := fs.ReadDir(queries.Migrations, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	for _, e := range entries {
		if e.Name() >= "0006" {
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
	const def = `{"nodes":[{"id":"n1","type":"startCall","data":{"name":"G","prompt":"p"}}],"edges":[]}`
	for _, q := range []string{
		"PRAGMA user_version = 5",
		`INSERT INTO organizations (id, name, created_at) VALUES (1, 'acme', 0)`,
		`INSERT INTO workflows (organization_id, name, definition, created_at, updated_at) VALUES (1, 'w', '` + def + `', 0, 0)`,
		`INSERT INTO campaigns (organization_id, name, workflow_id, workflow_name, workflow_definition,
			telephony_configuration_id, source_id, retry_config, circuit_breaker, max_concurrency, rate_limit_per_second,
			total_rows, created_at, updated_at) VALUES (1, 'old', 1, 'w', '` + def + `', 1, 'k', '{}', '{}', 3, 1, 7, 0, 0)`,
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	raw.Close()

	sealer, err := store.NewSealer(newKey(t))
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(ctx, path, sealer)
	if err != nil {
		t.Fatalf("open (migrate): %v", err)
	}
	defer db.Close()
	c, err := db.GetCampaign(ctx, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if string(c.WorkflowDefinition) != def || c.Name != "old" || c.TotalRows != 7 || c.MaxConcurrency != 3 {
		t.Errorf("campaign after the migration: name %q, total_rows %d, max_concurrency %d, definition %s",
			c.Name, c.TotalRows, c.MaxConcurrency, c.WorkflowDefinition)
	}
	if byID, err := db.CampaignByID(ctx, 1); err != nil || string(byID.WorkflowDefinition) != def {
		t.Errorf("CampaignByID definition = %v, %v", byID, err)
	}
	list, err := db.ListCampaigns(ctx, 1, 0, 10)
	if err != nil || len(list) != 1 || list[0].Name != "old" {
		t.Fatalf("ListCampaigns = %v, %v", list, err)
	}
	wfs, err := db.ListWorkflows(ctx, 1)
	if err != nil || len(wfs) != 1 || wfs[0].Name != "w" {
		t.Fatalf("ListWorkflows = %v, %v", wfs, err)
	}
}

// queryPlan returns the details of EXPLAIN QUERY PLAN q.
func queryPlan(t *testing.T, raw *sql.DB, q string, args ...any) []string {
	t.Helper()
	rows, err := raw.Query("EXPLAIN QUERY PLAN "+q, args...)
	if err != nil {
		t.Fatalf("explain: %v", err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	return plan
}

// columnsOf returns the column names of table.
func columnsOf(t *testing.T, raw *sql.DB, table string) []string {
	t.Helper()
	rows, err := raw.Query("SELECT name FROM pragma_table_info(?)", table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var col string
		if err := rows.Scan(&col); err != nil {
			t.Fatal(err)
		}
		out = append(out, col)
	}
	return out
}
