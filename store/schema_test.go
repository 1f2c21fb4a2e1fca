package store_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/outdial/outdial/store"
)

// TestSchemaVersions: a new file has every migration pending, Migrate
// applies them alone, and a database marked newer than the binary is
// refused by Open, Backup, PendingMigrations and Migrate with both versions,
// its bytes unchanged and no -wal or -shm file created.
// SQLite-specific: the user_version of files written by a newer version.
func TestSchemaVersions(t *testing.T) {
	ctx := context.Background()
	all, err := store.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	supported := store.SupportedSchemaVersion()
	if len(all) == 0 || all[len(all)-1].Version != supported || all[0].Version != 1 {
		t.Fatalf("migrations %+v, supported %d", all, supported)
	}
	path := filepath.Join(t.TempDir(), "outdial.db")
	current, pending, err := store.PendingMigrations(ctx, path)
	if err != nil || current != 0 || len(pending) != len(all) {
		t.Fatalf("PendingMigrations(missing file) = %d, %d pending, %v; want 0, %d", current, len(pending), err, len(all))
	}
	if _, err := os.Stat(path); err == nil {
		t.Fatal("PendingMigrations created the database")
	}
	applied, err := store.Migrate(ctx, path)
	if err != nil || len(applied) != len(all) {
		t.Fatalf("Migrate = %d applied, %v", len(applied), err)
	}
	if v, err := store.SchemaVersion(ctx, path); err != nil || v != supported {
		t.Fatalf("SchemaVersion after Migrate = %d, %v; want %d", v, err, supported)
	}
	if applied, err := store.Migrate(ctx, path); err != nil || len(applied) != 0 {
		t.Fatalf("Migrate again = %d applied, %v", len(applied), err)
	}

	// Marked as written by a newer version and closed (no -wal left).
	raw, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec("PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	checks := map[string]func() error{
		"Open": func() error {
			sealer, _ := store.NewSealer(newKey(t))
			db, err := store.Open(ctx, path, sealer)
			if err == nil {
				db.Close()
			}
			return err
		},
		"Backup":            func() error { return store.Backup(ctx, path, filepath.Join(t.TempDir(), "copy.db")) },
		"Migrate":           func() error { _, err := store.Migrate(ctx, path); return err },
		"PendingMigrations": func() error { _, _, err := store.PendingMigrations(ctx, path); return err },
	}
	for name, check := range checks {
		err := check()
		var tooNew *store.SchemaTooNewError
		if !errors.Is(err, store.ErrSchemaTooNew) || !errors.As(err, &tooNew) || tooNew.Database != 99 || tooNew.Supported != supported {
			t.Fatalf("%s = %v, want SchemaTooNewError{99, %d}", name, err, supported)
		}
		if want := "database schema version 99 is newer than this outdial supports (" + strconv.Itoa(supported) + ")"; err.Error() != want {
			t.Fatalf("%s error = %q, want %q", name, err, want)
		}
		after, _ := os.ReadFile(path)
		if !bytes.Equal(after, before) {
			t.Fatalf("%s changed the database file", name)
		}
		for _, suffix := range []string{"-wal", "-shm", "-journal"} {
			if _, err := os.Stat(path + suffix); err == nil {
				t.Fatalf("%s created %s", name, suffix)
			}
		}
	}
}
