package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/outdial/outdial/queries"
)

// unqueuedByScan is what campaign_zones stands for, counted the slow way:
// the contacts after the queue cursor, per timezone.
func unqueuedByScan(t *testing.T, raw *sql.DB, id int64) string {
	t.Helper()
	return zoneRows(t, raw, `SELECT c.timezone, count(*) FROM contacts c JOIN campaigns k ON k.id = c.campaign_id
		WHERE c.campaign_id = ? AND c.row_number > k.queued_through_row GROUP BY c.timezone ORDER BY c.timezone`, id)
}

func unqueuedByZones(t *testing.T, raw *sql.DB, id int64) string {
	t.Helper()
	return zoneRows(t, raw, `SELECT timezone, contacts - queued FROM campaign_zones
		WHERE campaign_id = ? AND contacts > queued ORDER BY timezone`, id)
}

func zoneRows(t *testing.T, raw *sql.DB, query string, args ...any) string {
	t.Helper()
	rows, err := raw.Query(query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var tz string
		var n int64
		if err := rows.Scan(&tz, &n); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%q:%d ", tz, n)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// The contacts not queued yet per timezone (the diagnosis reads them) stay
// what a scan of the contacts says, from the import through the lazy
// queueing of every chunk, and for a redial's copy; migration 0011's
// backfill counts the same.
// SQLite-specific: runs SQLite's migration 0011 backfill on the rows.
func TestZoneCountsFollowTheQueue(t *testing.T) {
	db := newSQLiteDB(t)
	ctx := context.Background()
	raw := rawDB(t, db.path)
	org := newOrg(t, db.DB, "acme")
	tzs := []string{"", "America/New_York", "Europe/Paris", "Asia/Tokyo"}
	const n = 3500
	c, err := db.CreateCampaign(ctx, org, newCampaignInput("zones"), feedContacts(n, func(i int) string {
		return tzs[(i*7/3)%len(tzs)]
	}, nil))
	if err != nil {
		t.Fatal(err)
	}
	check := func(when string, id int64) {
		t.Helper()
		want, got := unqueuedByScan(t, raw, id), unqueuedByZones(t, raw, id)
		if got != want {
			t.Fatalf("%s: campaign_zones says %s, the contacts %s", when, got, want)
		}
	}
	check("after the import", c.ID)
	if got := unqueuedByZones(t, raw, c.ID); got == "" {
		t.Fatal("nothing unqueued after the import: the test queues nothing lazily")
	}
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	claimed := 0
	for round := 0; claimed < n; round++ {
		list, err := db.ClaimAttempts(ctx, leaseOf(t, db, c.ID), t0, t0.Add(time.Hour), c.Timezones, 700)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) == 0 {
			t.Fatalf("round %d: nothing claimed with %d of %d claimed", round, claimed, n)
		}
		claimed += len(list)
		check(fmt.Sprintf("after claim round %d (%d claimed)", round, claimed), c.ID)
		groups, err := db.QueueStats(ctx, c.ID, t0)
		if err != nil {
			t.Fatal(err)
		}
		unqueued := 0
		for _, g := range groups {
			if g.Due && g.NextDue.UnixMilli() == 0 {
				unqueued += g.Count
			}
		}
		if want := count(t, raw, `SELECT count(*) FROM contacts c JOIN campaigns k ON k.id = c.campaign_id
			WHERE c.campaign_id = ? AND c.row_number > k.queued_through_row`, c.ID); unqueued < want {
			t.Fatalf("round %d: QueueStats reports %d contacts not queued, the contacts %d", round, unqueued, want)
		}
	}
	if got := unqueuedByZones(t, raw, c.ID); got != "" {
		t.Errorf("every contact queued, campaign_zones still says %s", got)
	}

	// A redial of the even rows.
	if _, err := raw.Exec(`UPDATE contacts SET is_final = 1, outcome = CASE WHEN row_number % 2 = 0 THEN 'busy' ELSE 'answered' END
		WHERE campaign_id = ?`, c.ID); err != nil {
		t.Fatal(err)
	}
	nc := newCampaignInput("redial")
	nc.RedialOf, nc.ParentCampaignID = &c.ID, &c.ID
	rc, err := db.RedialCampaign(ctx, org, nc, []string{"phone_number", "first_name"}, []string{"busy"})
	if err != nil {
		t.Fatal(err)
	}
	check("after a redial", rc.ID)
	if got := count(t, raw, `SELECT sum(contacts) FROM campaign_zones WHERE campaign_id = ?`, rc.ID); got != int(rc.TotalRows) {
		t.Errorf("redial: campaign_zones counts %d contacts, the campaign %d", got, rc.TotalRows)
	}

	// The migration's backfill, run again from scratch, counts the same as
	// the import and the queueing did.
	before := zoneRows(t, raw, `SELECT timezone || '/' || campaign_id, contacts * 100000 + queued FROM campaign_zones ORDER BY 1`)
	body, err := fs.ReadFile(queries.Migrations, "migrations/0011_zone_counts.sql")
	if err != nil {
		t.Fatal(err)
	}
	_, backfill, ok := strings.Cut(string(body), "-- Campaigns from before: counted once from their contacts.")
	if !ok {
		t.Fatal("migration 0011 has no backfill statement")
	}
	if _, err := raw.Exec("DELETE FROM campaign_zones"); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(backfill); err != nil {
		t.Fatal(err)
	}
	if after := zoneRows(t, raw, `SELECT timezone || '/' || campaign_id, contacts * 100000 + queued FROM campaign_zones ORDER BY 1`); after != before {
		t.Errorf("backfill counts\n%s\nthe import and queueing counted\n%s", after, before)
	}
}
