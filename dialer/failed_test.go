package dialer_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer/carrier"
	"github.com/outdial/outdial/dialer/carrier/twiliosim"
	"github.com/outdial/outdial/store"
)

// A campaign whose configuration no carrier can dial through (credentials
// that cannot be opened, a provider this build does not know) fails with
// campaign_failed instead of failing each of its contacts.
func TestCampaignFailsWhenNoCarrier(t *testing.T) {
	h := newHarness(t, twiliosim.Config{}, withNewCarrier(func(provider string, creds map[string]any, opts carrier.Options) (carrier.Carrier, error) {
		if provider == carrier.Plivo {
			return nil, errors.New("plivo: credentials cannot be read")
		}
		return carrier.New(provider, creds, opts)
	}))
	ctx := context.Background()
	cfg, err := h.db.CreateTelephonyConfig(ctx, h.org, store.TelephonyConfig{Name: "plivo", Provider: "plivo",
		Credentials: store.Credentials{"auth_id": "MA123", "auth_token": "secret-token", "application_id": "", "machine_detection": false}})
	if err != nil {
		t.Fatal(err)
	}
	h.cfgID = cfg.ID
	c := h.campaign(3, store.Settings{}, nil)
	h.do(c.ID, store.OpStart)
	got := h.waitState(c.ID, store.StateFailed)
	if got.ProcessedRows != 0 || got.ExecutedCount != 0 {
		t.Fatalf("processed %d executed %d, want 0 0: no contact is failed for the configuration's fault", got.ProcessedRows, got.ExecutedCount)
	}
	logs, err := h.db.RecentLogs(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	var failed int
	for _, l := range logs {
		if l.Event == "campaign_failed" {
			failed++
		}
	}
	if failed != 1 {
		t.Fatalf("campaign_failed entries = %d, want 1 (logs %+v)", failed, logs)
	}
	// Dispatches under way when the campaign failed put their attempts back
	// too.
	deadline := time.Now().Add(10 * time.Second)
	for {
		queued, err := h.db.ListAttempts(ctx, c.ID, store.AttemptFilter{State: ptr(store.AttemptQueued), Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(queued) == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("queued attempts = %d, want 3 untouched", len(queued))
		}
		time.Sleep(3 * time.Millisecond)
	}
	if n := h.sim.Stats().CreateRequests; n != 0 {
		t.Fatalf("create requests = %d, want 0", n)
	}
}
