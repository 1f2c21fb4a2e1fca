package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/outdial/outdial/store"
)

// TestCheckSecret: a database with no sealed value passes whatever the
// secret; once a configuration's credentials are sealed, the same secret
// passes and another one is a *WrongSecretError naming the configuration.
func TestCheckSecret(t *testing.T) {
	ctx := context.Background()
	db := newDB(t)
	if err := db.CheckSecret(ctx); err != nil {
		t.Fatalf("empty database: CheckSecret = %v, want nil", err)
	}
	org := newOrg(t, db.DB, "acme")
	first, err := db.CreateTelephonyConfig(ctx, org, store.TelephonyConfig{Name: "main", Provider: "twilio",
		Credentials: store.Credentials{"account_sid": "AC123", "auth_token": "tok"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateTelephonyConfig(ctx, org, store.TelephonyConfig{Name: "second", Provider: "twilio",
		Credentials: store.Credentials{"account_sid": "AC456", "auth_token": "tok2"}}); err != nil {
		t.Fatal(err)
	}
	if err := db.CheckSecret(ctx); err != nil {
		t.Fatalf("same secret: CheckSecret = %v, want nil", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	other := openDB(t, db.path, newKey(t))
	err = other.CheckSecret(ctx)
	var wrong *store.WrongSecretError
	if !errors.As(err, &wrong) || !errors.Is(err, store.ErrWrongSecret) {
		t.Fatalf("another secret: CheckSecret = %v, want a *WrongSecretError", err)
	}
	if wrong.ConfigID != first.ID {
		t.Fatalf("ConfigID = %d, want %d (the oldest configuration)", wrong.ConfigID, first.ID)
	}
}
