package main

import "testing"

// The benchmark's queries are written with ? placeholders: numbered on
// PostgreSQL, unchanged on SQLite.
func TestRebind(t *testing.T) {
	q := `SELECT count(*) FROM contacts WHERE campaign_id IN (?, ?) AND outcome = ?`
	if got, want := (&reader{pg: true}).rebind(q), `SELECT count(*) FROM contacts WHERE campaign_id IN ($1, $2) AND outcome = $3`; got != want {
		t.Fatalf("rebind on PostgreSQL = %q, want %q", got, want)
	}
	if got := (&reader{}).rebind(q); got != q {
		t.Fatalf("rebind on SQLite = %q, want it unchanged", got)
	}
}
