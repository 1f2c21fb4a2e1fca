package store_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/store/internal/testdb"
)

// feedContacts returns a CreateCampaign feed of n contacts on rows 2..n+1
// (timezone tz(i) when tz is not nil), then err.
func feedContacts(n int, tz func(i int) string, err error) func(add func(store.ContactInput) error) ([]string, error) {
	return func(add func(store.ContactInput) error) ([]string, error) {
		for i := range n {
			c := store.ContactInput{Row: i + 2, PhoneNumber: fmt.Sprintf("+1415%07d", i), Context: map[string]string{"first_name": "Ada"}}
			if tz != nil {
				c.Timezone = tz(i)
			}
			if err := add(c); err != nil {
				return nil, err
			}
		}
		return []string{"phone_number", "first_name"}, err
	}
}

func newCampaignInput(name string) store.NewCampaign {
	return store.NewCampaign{Settings: store.Settings{Name: name, MaxConcurrency: 10, RateLimitPerSecond: 1},
		WorkflowID: 1, WorkflowName: "w", WorkflowDefinition: []byte("{}"), TelephonyConfigurationID: 1, SourceID: "k"}
}

// count runs a count(*) query on the raw database.
func count(t *testing.T, raw *sql.DB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := raw.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// waitCount polls a count(*) query until it is want (the purge runs in the
// background).
func waitCount(t *testing.T, raw *sql.DB, want int, query string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		n := count(t, raw, query, args...)
		if n == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s = %d, want %d", query, n, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A failed import stores nothing, however many chunks it had written: the
// campaign is never visible and its rows are purged.
func TestCreateCampaignFailedImportStoresNothing(t *testing.T) {
	db := newDB(t)
	ctx := context.Background()
	org := newOrg(t, db.DB, "acme")
	raw := rawDB(t, db.path)
	wantErr := errors.New("row 5003 is bad")
	var seenHidden bool
	_, err := db.CreateCampaign(ctx, org, newCampaignInput("big"), func(add func(store.ContactInput) error) ([]string, error) {
		if _, err := feedContacts(5000, nil, nil)(add); err != nil {
			return nil, err
		}
		// Two chunks are committed by now, invisible to the API.
		list, err := db.ListCampaigns(ctx, org, 0, 50)
		if err != nil {
			return nil, err
		}
		// The writer commits the two full chunks while the feed goes on.
		deadline := time.Now().Add(10 * time.Second)
		for count(t, raw, "SELECT count(*) FROM contacts") < 4000 && time.Now().Before(deadline) {
			time.Sleep(2 * time.Millisecond)
		}
		seenHidden = len(list) == 0 && count(t, raw, "SELECT count(*) FROM contacts") == 4000
		return nil, wantErr
	})
	if !errors.Is(err, wantErr) {
		t.Fatalf("create = %v, want %v", err, wantErr)
	}
	if !seenHidden {
		t.Fatal("while importing: want chunks committed and the campaign not listed")
	}
	if list, _ := db.ListCampaigns(ctx, org, 0, 50); len(list) != 0 {
		t.Fatalf("campaigns after a failed import: %d, want 0", len(list))
	}
	waitCount(t, raw, 0, "SELECT count(*) FROM campaigns")
	for _, table := range []string{"contacts", "call_attempts", "campaign_logs"} {
		if n := count(t, raw, "SELECT count(*) FROM "+table); n != 0 {
			t.Errorf("%s rows after a failed import: %d, want 0", table, n)
		}
	}
}

// The import never holds the only writer for long: other writes complete
// while it runs (one transaction for the whole import deadlocked here).
func TestCreateCampaignDoesNotHoldTheWriter(t *testing.T) {
	db := newDB(t)
	ctx := context.Background()
	org := newOrg(t, db.DB, "acme")
	c, err := db.CreateCampaign(ctx, org, newCampaignInput("big"), func(add func(store.ContactInput) error) ([]string, error) {
		if _, err := feedContacts(4500, nil, nil)(add); err != nil {
			return nil, err
		}
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if _, err := db.CreateWorkflow(wctx, org, "written meanwhile", []byte(`{}`)); err != nil {
			return nil, fmt.Errorf("write during the import: %w", err)
		}
		return []string{"phone_number", "first_name"}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.TotalRows != 4500 || c.TotalQueuedCount != 4500 || c.State != store.StateDraft {
		t.Fatalf("campaign: total_rows %d, total_queued_count %d, state %s; want 4500, 4500, draft", c.TotalRows, c.TotalQueuedCount, c.State)
	}
}

// First attempts are queued a chunk at a time as claims need them, in CSV
// order; the first chunk is queued at create.
func TestFirstAttemptsQueuedLazily(t *testing.T) {
	db := newDB(t)
	ctx := context.Background()
	org := newOrg(t, db.DB, "acme")
	raw := rawDB(t, db.path)
	c, err := db.CreateCampaign(ctx, org, newCampaignInput("lazy"), feedContacts(2500, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	if n := count(t, raw, "SELECT count(*) FROM call_attempts WHERE campaign_id = $1", c.ID); n != 1000 {
		t.Fatalf("attempts queued at create: %d, want the first chunk (1000)", n)
	}
	q, err := db.QueuedByTimezone(ctx, c.ID, c.Timezones)
	if err != nil || len(q) != 1 || !q[""].Equal(time.UnixMilli(0).UTC()) {
		t.Fatalf("QueuedByTimezone = %v, %v; want the unqueued contacts due at once", q, err)
	}
	now := time.Now()
	var rows []int64
	for _, max := range []int{600, 1500, 1000} {
		list, err := db.ClaimAttempts(ctx, leaseOf(t, db, c.ID), now, now.Add(time.Hour), c.Timezones, max)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range list {
			rows = append(rows, a.ContactRow)
		}
	}
	if len(rows) != 2500 {
		t.Fatalf("claimed %d attempts, want 2500", len(rows))
	}
	for i, r := range rows {
		if r != int64(i+2) {
			t.Fatalf("claim %d is row %d, want %d (CSV order)", i, r, i+2)
		}
	}
	if list, err := db.ClaimAttempts(ctx, leaseOf(t, db, c.ID), now, now.Add(time.Hour), c.Timezones, 10); err != nil || len(list) != 0 {
		t.Fatalf("claim after the last contact = %d, %v; want none", len(list), err)
	}
	if q, err := db.QueuedByTimezone(ctx, c.ID, c.Timezones); err != nil || len(q) != 0 {
		t.Fatalf("QueuedByTimezone after every claim = %v, %v; want empty", q, err)
	}
}

// A claim whose queued contacts are all in closed timezones queues a
// bounded number of chunks, and the claims that follow reach the contacts
// of the open timezone behind them.
func TestLazyQueueSkipsClosedTimezones(t *testing.T) {
	db := newDB(t)
	ctx := context.Background()
	org := newOrg(t, db.DB, "acme")
	raw := rawDB(t, db.path)
	// 9,000 contacts in Asia/Tokyo, then 10 in America/New_York.
	tz := func(i int) string {
		if i < 9000 {
			return "Asia/Tokyo"
		}
		return "America/New_York"
	}
	c, err := db.CreateCampaign(ctx, org, newCampaignInput("tz"), feedContacts(9010, tz, nil))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"America/New_York", "Asia/Tokyo"}; fmt.Sprint(c.Timezones) != fmt.Sprint(want) {
		t.Fatalf("timezones %v, want %v", c.Timezones, want)
	}
	open := []string{"America/New_York"}
	var got []*store.Attempt
	claims := 0
	for len(got) < 10 && claims < 10 {
		claims++
		list, err := db.ClaimAttempts(ctx, leaseOf(t, db, c.ID), time.Now(), time.Now().Add(time.Hour), open, 10)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, list...)
		if claims == 1 {
			if n := count(t, raw, "SELECT count(*) FROM call_attempts WHERE campaign_id = $1", c.ID); n != 5000 {
				t.Fatalf("after one claim %d attempts queued, want 5000 (the first chunk and four more)", n)
			}
		}
	}
	if len(got) != 10 || claims != 3 {
		t.Fatalf("claimed %d in %d claims, want 10 in 3", len(got), claims)
	}
	for _, a := range got {
		if a.Timezone != "America/New_York" {
			t.Fatalf("claimed an attempt in %s, a closed timezone", a.Timezone)
		}
	}
}

// Deleting a campaign: running and paused ones, or one with a call in
// flight, are refused; a finished one disappears and is purged, also after
// a restart in the middle.
func TestDeleteCampaign(t *testing.T) {
	path := testdb.Location(t)
	key := newKey(t)
	sealer, _ := store.NewSealer(key)
	ctx := context.Background()
	db, err := store.Open(ctx, path, sealer)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { db.Close() }()
	org := newOrg(t, db, "acme")
	other := newOrg(t, db, "other")
	raw := rawDB(t, path)
	c, err := db.CreateCampaign(ctx, org, newCampaignInput("del"), feedContacts(3000, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteCampaign(ctx, other, c.ID); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("delete by another organization = %v, want ENOTFOUND", err)
	}
	if _, err := db.TransitionCampaign(ctx, org, c.ID, store.OpStart); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteCampaign(ctx, org, c.ID); store.ErrorCode(err) != store.ECONFLICT {
		t.Fatalf("delete a running campaign = %v, want ECONFLICT", err)
	}
	claimed, err := db.ClaimAttempts(ctx, leaseOf(t, db, c.ID), time.Now(), time.Now().Add(time.Hour), c.Timezones, 1)
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claim = %d, %v", len(claimed), err)
	}
	if _, err := db.TransitionCampaign(ctx, org, c.ID, store.OpCancel); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteCampaign(ctx, org, c.ID); store.ErrorCode(err) != store.ECONFLICT {
		t.Fatalf("delete with a call dialing = %v, want ECONFLICT", err)
	}
	if _, err := db.ApplyStatus(ctx, claimed[0].ID, store.StatusUpdate{At: time.Now(), Raw: "busy", Final: true, Outcome: "busy"},
		func(store.RetryConfig, int64, string) (bool, time.Time) { return false, time.Time{} }); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteCampaign(ctx, org, c.ID); err != nil {
		t.Fatalf("delete a cancelled campaign = %v", err)
	}
	if _, err := db.GetCampaign(ctx, org, c.ID); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("get after delete = %v, want ENOTFOUND", err)
	}
	if err := db.DeleteCampaign(ctx, org, c.ID); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("delete twice = %v, want ENOTFOUND", err)
	}
	// A restart before the purge finished: the hidden campaign is purged
	// when serve resumes purges.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	var crashed int64
	if err := raw.QueryRow(`INSERT INTO campaigns (organization_id, name, workflow_id, workflow_name,
		telephony_configuration_id, source_id, retry_config, circuit_breaker, max_concurrency, rate_limit_per_second,
		created_at, updated_at, visibility) VALUES ($1, 'crashed import', 1, 'w', 1, 'k', '{}', '{}', 1, 1, 0, 0, 'importing')
		RETURNING id`, org).Scan(&crashed); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`INSERT INTO campaign_definitions (campaign_id, definition) VALUES ($1, '{}')`, crashed); err != nil {
		t.Fatal(err)
	}
	if db, err = store.Open(ctx, path, sealer); err != nil {
		t.Fatal(err)
	}
	if err := db.ResumePurges(ctx); err != nil {
		t.Fatal(err)
	}
	waitCount(t, raw, 0, "SELECT count(*) FROM campaigns")
	for _, table := range []string{"contacts", "call_attempts", "campaign_logs", "campaign_definitions"} {
		if n := count(t, raw, "SELECT count(*) FROM "+table); n != 0 {
			t.Errorf("%s rows after the purge: %d, want 0", table, n)
		}
	}
}
