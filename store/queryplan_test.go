package store_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// namedQueries reads SQLite's named sqlc queries (queries/*.sql and
// queries/sqlite/*.sql), with sqlc's
// parameter syntax (@name, sqlc.arg/narg/slice) turned into plain "?".
func namedQueries(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob("../queries/*.sql")
	dialect, err2 := filepath.Glob("../queries/sqlite/*.sql")
	files = append(files, dialect...)
	if err != nil || err2 != nil || len(files) == 0 {
		t.Fatalf("queries: %v", err)
	}
	name := regexp.MustCompile(`^-- name: (\w+) :\w+`)
	param := regexp.MustCompile(`sqlc\.n?arg\('\w+'\)|sqlc\.slice\('\w+'\)|@\w+`)
	out := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var cur string
		var body strings.Builder
		flush := func() {
			if cur != "" {
				out[cur] = param.ReplaceAllString(body.String(), "?")
			}
			body.Reset()
		}
		for _, line := range strings.Split(string(b), "\n") {
			if m := name.FindStringSubmatch(line); m != nil {
				flush()
				cur = m[1]
				continue
			}
			if strings.HasPrefix(strings.TrimSpace(line), "--") {
				continue
			}
			body.WriteString(line + "\n")
		}
		flush()
	}
	return out
}

// The queries a large campaign runs while dialing, paging or purging are
// index searches: a page of calls at any depth, a claim, a purge chunk and
// the lazy queue never scan a table nor sort it (API.md section 9).
// SQLite-specific: reads SQLite's EXPLAIN QUERY PLAN.
func TestLargeListQueriesUseIndexes(t *testing.T) {
	db := newSQLiteDB(t)
	raw := rawDB(t, db.path)
	all := namedQueries(t)
	for _, name := range []string{
		"ListAttempts", "ListAttemptsByState", "ListAttemptsByOutcome", "ClaimAttempts", "CountActiveAttempts",
		"NextQueuedDue", "MinDeadline", "ExpiredAttempts", "QueueChunkEnd", "QueueFirstAttempts", "ListContacts",
		"CopyRedialContacts", "PurgeAttempts", "PurgeContacts", "PurgeLogs", "LastContactRow",
		"HideCampaign", "ListLogs", "RecentLogsOfCampaigns",
		// Not here: ContactTimezonesAfter (DISTINCT over the one chunk just
		// copied) and RecentLogs (sorts the 50 it reads).
	} {
		q, ok := all[name]
		if !ok {
			t.Errorf("%s: no such query", name)
			continue
		}
		args := make([]any, strings.Count(q, "?"))
		rows, err := raw.Query("EXPLAIN QUERY PLAN "+q, args...)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		var plan []string
		for rows.Next() {
			var id, parent, notused int
			var detail string
			if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		for _, step := range plan {
			scan := strings.HasPrefix(step, "SCAN ") && !strings.Contains(step, "USING") && !strings.Contains(step, "json_each")
			if scan || strings.Contains(step, "TEMP B-TREE") {
				t.Errorf("%s scans or sorts: %q (plan %q)", name, step, plan)
			}
		}
	}
}
