package store

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

// Issue 15 item 8: a batch holding a claim commits with synchronous=FULL
// (the WAL synced before the provider is asked to call), and the writer
// goes back to NORMAL after; other small writes stay NORMAL.
// SQLite-specific: switches SQLite's synchronous pragma.
func TestClaimCommitIsSynced(t *testing.T) {
	ctx := context.Background()
	sealer, err := NewSealer(make([]byte, KeySize))
	if err != nil {
		t.Fatal(err)
	}
	db, err := Open(ctx, filepath.Join(t.TempDir(), "outdial.db"), sealer)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var mu sync.Mutex
	var modes []string
	db.syncMode = func(mode string) error {
		mu.Lock()
		modes = append(modes, mode)
		mu.Unlock()
		return db.setSynchronous(mode)
	}
	k, _, err := db.CreateAPIKey(ctx, "acme", "", RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	c, err := db.CreateCampaign(ctx, k.OrganizationID, NewCampaign{Settings: Settings{Name: "c", MaxConcurrency: 1, RateLimitPerSecond: 1},
		WorkflowID: 1, WorkflowName: "w", WorkflowDefinition: []byte("{}"), TelephonyConfigurationID: 1, SourceID: "k"},
		func(add func(ContactInput) error) ([]string, error) {
			return []string{"phone_number"}, add(ContactInput{Row: 2, PhoneNumber: "+14155550100", Context: map[string]string{}})
		})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.PickCallerID(ctx, 1, time.Now()); err != nil { // a plain batched write
		t.Fatal(err)
	}
	if len(modes) != 0 {
		t.Fatalf("a plain batched write switched synchronous: %v", modes)
	}
	list, err := db.ClaimAttempts(ctx, Lease{CampaignID: c.ID, Node: "test-node", Generation: mustLease(t, db, c.ID)}, time.Now(), time.Now().Add(time.Hour), c.Timezones, 1)
	if err != nil || len(list) != 1 {
		t.Fatalf("claim = %d, %v", len(list), err)
	}
	if want := []string{"FULL", "NORMAL"}; !slices.Equal(modes, want) {
		t.Fatalf("synchronous around the claim: %v, want %v", modes, want)
	}
}

// mustLease takes campaign id's lease for the test's node and returns its
// generation.
func mustLease(t *testing.T, db *DB, id int64) int64 {
	t.Helper()
	l, ok, err := db.AcquireLease(context.Background(), id, "test-node", time.Hour)
	if err != nil || !ok {
		t.Fatalf("acquire lease: ok=%v, %v", ok, err)
	}
	return l.Generation
}
