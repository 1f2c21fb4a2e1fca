package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/outdial/outdial/store"
)

// Concurrency made explicit (issue 21): each test here races writers on two
// stores opened on one location, as two nodes share a database. On
// PostgreSQL those are two pools on one database, whose READ COMMITTED
// transactions run side by side; on SQLite two stores (each its own writer)
// on one file, whose write transactions take turns. The invariants hold on
// both: each operation is correct by construction, not by SQLite's single
// writer (store/locks.go, docs/api.md "Several nodes").

// twoNodes opens a new database and the same location a second time, with
// the same key: two nodes of one cluster.
func twoNodes(t *testing.T) (*testDB, []*store.DB) {
	t.Helper()
	db := newDB(t)
	other := openDB(t, db.path, db.key)
	return db, []*store.DB{db.DB, other}
}

// race runs fn(i) for i in [0, n) at once, released together, and waits
// for every one.
func race(n int, fn func(i int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			fn(i)
		}()
	}
	close(start)
	wg.Wait()
}

// TestRaceAttemptCap: reservations of the attempt cap (API.md 12.3) racing
// on two nodes for the same numbers never let more than max calls of a
// number through, and the count each answers is the count before it.
func TestRaceAttemptCap(t *testing.T) {
	ctx := context.Background()
	db, nodes := twoNodes(t)
	org := newOrg(t, db.DB, "acme")
	now := time.Now()
	const numbers, perNumber, max = 4, 24, 3
	res := make([]store.CapCheck, numbers*perNumber)
	errs := make([]error, len(res))
	race(len(res), func(i int) {
		number := fmt.Sprintf("+1415555%04d", i%numbers)
		node := nodes[i/numbers%2]
		res[i], errs[i] = node.ReserveNumberCall(ctx, org, number, int64(i+1), now, max, time.Hour)
	})
	allowed := make([]int, numbers)
	for i, r := range res {
		if errs[i] != nil {
			t.Fatalf("reserve %d: %v", i, errs[i])
		}
		switch {
		case r.Allowed:
			allowed[i%numbers]++
			if r.InWindow >= max {
				t.Errorf("reservation %d allowed with %d calls in the window", i, r.InWindow)
			}
		case r.InWindow != max:
			t.Errorf("reservation %d refused with %d calls in the window, want %d", i, r.InWindow, max)
		}
	}
	raw := rawDB(t, db.path)
	for n, got := range allowed {
		number := fmt.Sprintf("+1415555%04d", n)
		if got != max {
			t.Errorf("%s: %d calls allowed, want %d", number, got, max)
		}
		if rows := count(t, raw, "SELECT count(*) FROM number_calls WHERE organization_id = $1 AND phone_number = $2", org, number); rows != max {
			t.Errorf("%s: %d placements recorded, want %d", number, rows, max)
		}
	}
}

// runningCampaign creates a running campaign of n contacts and claims every
// first attempt of it.
func runningCampaign(t *testing.T, db *store.DB, org int64, n int, at time.Time) (*store.Campaign, []*store.Attempt) {
	t.Helper()
	ctx := context.Background()
	c, err := db.CreateCampaign(ctx, org, newCampaignInput("race"), feedContacts(n, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.TransitionCampaign(ctx, org, c.ID, store.OpStart); err != nil {
		t.Fatal(err)
	}
	list, err := db.ClaimAttempts(ctx, leaseOf(t, db, c.ID), at, at.Add(time.Hour), c.Timezones, n)
	if err != nil || len(list) != n {
		t.Fatalf("claim: %d, %v; want %d", len(list), err, n)
	}
	return c, list
}

// TestRaceStatusAppliedOnce: final statuses of the same calls applied at
// once on two nodes (a webhook on one, reconciliation on the other; the
// provider's retries) end each attempt once: one of them is applied, the
// others are ignored, a busy call is retried once, and the campaign's
// counters count every call and contact exactly; progress reports racing
// them count each call once in executed_count; the campaign completes once,
// whoever applies its last status or checks it.
func TestRaceStatusAppliedOnce(t *testing.T) {
	ctx := context.Background()
	db, nodes := twoNodes(t)
	org := newOrg(t, db.DB, "acme")
	t0 := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	const contacts, perAttempt = 12, 6
	c, list := runningCampaign(t, db.DB, org, contacts, t0)
	retryBusy := func(_ store.RetryConfig, attempt int64, outcome string) (bool, time.Time) {
		return outcome == "busy" && attempt == 1, t0
	}
	outcomes := []string{"answered", "busy", "no_answer"}
	type result struct {
		a   store.Applied
		err error
	}
	res := make([]result, contacts*perAttempt)
	race(len(res), func(i int) {
		a := list[i%contacts]
		k := i / contacts
		node := nodes[k%2]
		if k%3 == 2 {
			// A progress report of the provider's, racing the final ones.
			_, err := node.ApplyStatus(ctx, a.ID, store.StatusUpdate{At: t0, Raw: "ringing", Sequence: 1, FromProvider: true}, nil)
			res[i] = result{a: store.Applied{Ignored: true}, err: err}
			return
		}
		outcome := outcomes[(k+i%contacts)%len(outcomes)]
		applied, err := node.ApplyStatus(ctx, a.ID, store.StatusUpdate{At: t0, Raw: outcome, Final: true, Outcome: outcome,
			Sequence: 2, FromProvider: true}, retryBusy)
		res[i] = result{a: applied, err: err}
	})
	applied := make([]int, contacts)
	var want store.Outcomes
	var processed, failed, retried int64
	completions := 0
	for i, r := range res {
		if r.err != nil {
			t.Fatalf("status %d: %v", i, r.err)
		}
		if r.a.Ignored {
			continue
		}
		if r.a.Completed {
			completions++
		}
		applied[i%contacts]++
		switch r.a.Outcome {
		case "answered":
			want.Answered++
			processed++
		case "no_answer":
			want.NoAnswer++
			processed++
			failed++
		case "busy":
			want.Busy++
			retried++
			if !r.a.Retried {
				t.Errorf("status %d: busy on a first attempt not retried", i)
			}
		}
	}
	for i, n := range applied {
		if n != 1 {
			t.Errorf("attempt %d: %d final statuses applied, want 1", list[i].ID, n)
		}
	}
	got, err := db.CampaignCounters(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Outcomes != want || got.ProcessedRows != processed || got.FailedRows != failed || got.ExecutedCount != contacts {
		t.Fatalf("counters = processed %d failed %d executed %d %+v; want %d %d %d %+v",
			got.ProcessedRows, got.FailedRows, got.ExecutedCount, got.Outcomes, processed, failed, contacts, want)
	}
	raw := rawDB(t, db.path)
	if n := count(t, raw, "SELECT count(*) FROM call_attempts WHERE campaign_id = $1 AND attempt = 2", c.ID); int64(n) != retried {
		t.Fatalf("%d retries queued, want %d", n, retried)
	}
	if n := count(t, raw, "SELECT total_queued_count FROM campaigns WHERE id = $1", c.ID); int64(n) != contacts+retried {
		t.Fatalf("total_queued_count = %d, want %d", n, contacts+retried)
	}

	// The retries end while both nodes check for completion.
	retries, err := db.ClaimAttempts(ctx, leaseOf(t, db, c.ID), t0, t0.Add(time.Hour), c.Timezones, contacts)
	if err != nil || int64(len(retries)) != retried {
		t.Fatalf("claim retries: %d, %v; want %d", len(retries), err, retried)
	}
	completed := make([]bool, 4*len(retries)+8)
	errs := make([]error, len(completed))
	race(len(completed), func(i int) {
		node := nodes[i%2]
		if i >= 4*len(retries) {
			completed[i], errs[i] = node.CompleteIfDone(ctx, c.ID)
			return
		}
		node = nodes[i/len(retries)%2]
		a, errA := node.ApplyStatus(ctx, retries[i%len(retries)].ID, store.StatusUpdate{At: t0, Raw: "completed", Final: true,
			Outcome: "answered", Sequence: 2, FromProvider: true}, retryBusy)
		completed[i], errs[i] = a.Completed, errA
	})
	for i, done := range completed {
		if errs[i] != nil {
			t.Fatalf("%d: %v", i, errs[i])
		}
		if done {
			completions++
		}
	}
	if logs := count(t, raw, "SELECT count(*) FROM campaign_logs WHERE campaign_id = $1 AND event = 'campaign_completed'", c.ID); completions != 1 || logs != 1 {
		t.Fatalf("completed %d times, %d campaign_completed logs; want 1 and 1", completions, logs)
	}
	got, err = db.CampaignCounters(ctx, c.ID)
	if err != nil || got.State != store.StateCompleted || got.ProcessedRows != contacts || got.Outcomes.Answered != want.Answered+retried {
		t.Fatalf("after the retries: %+v, %v", got, err)
	}
}

// TestRaceQueueChunks: claims racing on two nodes for a campaign whose
// first attempts are queued a chunk at a time (queue.go) queue every
// contact's first attempt once and claim each once. The claims carry no
// lease (a lease lets one node claim at a time): the queue must be correct
// by itself, as ClaimAttempts's SKIP LOCKED is.
func TestRaceQueueChunks(t *testing.T) {
	ctx := context.Background()
	db, nodes := twoNodes(t)
	org := newOrg(t, db.DB, "acme")
	const contacts = 4500
	c, err := db.CreateCampaign(ctx, org, newCampaignInput("race"), feedContacts(contacts, func(i int) string {
		return []string{"America/New_York", "Europe/Paris", ""}[i%3]
	}, nil))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.TransitionCampaign(ctx, org, c.ID, store.OpStart); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	var mu sync.Mutex
	claimed := map[int64]int{}
	var claimErr error
	race(16, func(i int) {
		node := nodes[i%2]
		for {
			list, err := node.ClaimAttempts(ctx, store.Lease{CampaignID: c.ID}, now, now.Add(time.Hour), c.Timezones, 150)
			mu.Lock()
			if err != nil && claimErr == nil {
				claimErr = err
			}
			for _, a := range list {
				claimed[a.ContactRow]++
			}
			mu.Unlock()
			if err != nil || len(list) == 0 {
				return
			}
		}
	})
	if claimErr != nil {
		t.Fatalf("claim: %v", claimErr)
	}
	if len(claimed) != contacts {
		t.Fatalf("%d contacts claimed, want %d", len(claimed), contacts)
	}
	for row, n := range claimed {
		if n != 1 {
			t.Fatalf("row %d claimed %d times", row, n)
		}
	}
	raw := rawDB(t, db.path)
	if n := count(t, raw, "SELECT count(*) FROM call_attempts WHERE campaign_id = $1", c.ID); n != contacts {
		t.Fatalf("%d attempts queued, want %d", n, contacts)
	}
	if n := count(t, raw, "SELECT count(*) FROM campaign_zones WHERE campaign_id = $1 AND queued != contacts", c.ID); n != 0 {
		t.Fatalf("%d timezones whose queued count is not their contacts", n)
	}
	if n := count(t, raw, "SELECT count(*) FROM campaigns WHERE id = $1 AND queued_through_row = last_row", c.ID); n != 1 {
		t.Fatal("queued_through_row is not the last row")
	}
}
