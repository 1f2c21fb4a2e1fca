package store_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/outdial/outdial/store"
)

// dirNames returns the names in dir, sorted.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return names
}

// sourceFiles returns the database file and its WAL as stored: what a
// backup must not change. The -shm file is left out: it is the WAL's
// shared-memory index, where every reader notes its snapshot.
func sourceFiles(t *testing.T, path string) map[string][]byte {
	t.Helper()
	files := dbFiles(t, path)
	delete(files, filepath.Base(path)+"-shm")
	return files
}

// TestBackupCopiesLiveDatabase backs up a database another connection has
// open, with its newest transactions still in the WAL: the copy is a whole
// database (it opens with Open and the same key, the API key
// authenticates, the sealed credentials open) of mode 0600 with the
// source's schema version, alone in its directory (no temporary file left),
// and the source's files are unchanged.
// SQLite-specific: backs up the database file (VACUUM INTO).
func TestBackupCopiesLiveDatabase(t *testing.T) {
	ctx := context.Background()
	src := newSQLiteDB(t)
	k, apiKey, err := src.CreateAPIKey(ctx, "acme", "", store.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	cfgs, _ := secretConfigs(t)
	var twilio store.TelephonyConfig
	for _, c := range cfgs {
		saved, err := src.CreateTelephonyConfig(ctx, k.OrganizationID, c)
		if err != nil {
			t.Fatal(err)
		}
		if c.Provider == "twilio" {
			twilio = *saved
		}
	}
	if len(sourceFiles(t, src.path)[filepath.Base(src.path)+"-wal"]) == 0 {
		t.Fatal("the source's WAL is empty: the test would not cover transactions not yet checkpointed")
	}
	before := sourceFiles(t, src.path)

	dir := t.TempDir()
	to := filepath.Join(dir, "copy.db")
	if err := store.Backup(ctx, src.path, to); err != nil {
		t.Fatalf("Backup: %v", err)
	}

	if got := dirNames(t, dir); !slices.Equal(got, []string{"copy.db"}) {
		t.Errorf("backup directory holds %v, want [copy.db]", got)
	}
	st, err := os.Stat(to)
	if err != nil {
		t.Fatal(err)
	}
	if mode := st.Mode().Perm(); mode != 0o600 {
		t.Errorf("copy mode = %v, want 0600", mode)
	}
	after := sourceFiles(t, src.path)
	for name, data := range before {
		if !bytes.Equal(after[name], data) {
			t.Errorf("the backup changed the source's %s", name)
		}
	}
	for name := range after {
		if _, ok := before[name]; !ok {
			t.Errorf("the backup created %s beside the source", name)
		}
	}

	var srcVersion, copyVersion int
	if err := rawDB(t, src.path).QueryRow("PRAGMA user_version").Scan(&srcVersion); err != nil {
		t.Fatal(err)
	}
	if err := rawDB(t, to).QueryRow("PRAGMA user_version").Scan(&copyVersion); err != nil {
		t.Fatal(err)
	}
	if srcVersion == 0 || copyVersion != srcVersion {
		t.Errorf("copy user_version = %d, source %d; want equal, not 0", copyVersion, srcVersion)
	}

	restored := openDB(t, to, src.key)
	p, err := restored.Authenticate(ctx, apiKey.Reveal())
	if err != nil || p.OrganizationID != k.OrganizationID {
		t.Fatalf("the API key in the copy: %+v, %v; want organization %d", p, err, k.OrganizationID)
	}
	got, err := restored.GetTelephonyConfig(ctx, k.OrganizationID, twilio.ID)
	if err != nil {
		t.Fatalf("credentials in the copy: %v", err)
	}
	if got.Credentials["auth_token"] != "SECRET-twilio-token-55" {
		t.Errorf("auth_token in the copy = %v, want the stored one", got.Credentials["auth_token"])
	}
}

// TestBackupOfClosedDatabase backs up a database nobody has open (closed
// cleanly, so without -wal and -shm files): the copy opens, and the
// database file is unchanged.
// SQLite-specific: backs up the database file (VACUUM INTO).
func TestBackupOfClosedDatabase(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "outdial.db")
	key := newKey(t)
	sealer, err := store.NewSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(ctx, path, sealer)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.CreateAPIKey(ctx, "acme", "", store.RoleAdmin); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	before := dirNames(t, filepath.Dir(path))
	data := dbFiles(t, path)

	to := filepath.Join(t.TempDir(), "copy.db")
	if err := store.Backup(ctx, path, to); err != nil {
		t.Fatalf("Backup: %v", err)
	}
	// A read-only connection to a WAL database creates the WAL and its
	// index when they are missing (SQLite's rule, serve's read pool does
	// the same) and cannot remove them: both may appear, the WAL empty.
	want := append(before, "outdial.db-shm", "outdial.db-wal")
	for _, name := range dirNames(t, filepath.Dir(path)) {
		if !slices.Contains(want, name) {
			t.Errorf("the backup left %s beside the source", name)
		}
	}
	after := dbFiles(t, path)
	if !bytes.Equal(after["outdial.db"], data["outdial.db"]) {
		t.Error("the backup changed the database file")
	}
	if n := len(after["outdial.db-wal"]); n != 0 {
		t.Errorf("the backup wrote %d bytes to the WAL", n)
	}
	if _, err := openDB(t, to, key).ListAPIKeys(ctx); err != nil {
		t.Fatalf("the copy: %v", err)
	}
}

// TestBackupRefusesExisting: a target that exists in any form (a file, a
// directory, a symbolic link, dangling or not) is refused with an error
// wrapping fs.ErrExist, left as it was, and no temporary file remains.
// SQLite-specific: backs up the database file (VACUUM INTO).
func TestBackupRefusesExisting(t *testing.T) {
	src := newSQLiteDB(t)
	if _, _, err := src.CreateAPIKey(context.Background(), "acme", "", store.RoleAdmin); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		setup func(t *testing.T, to string)
	}{
		{"file", func(t *testing.T, to string) {
			if err := os.WriteFile(to, []byte("an older backup"), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"empty file", func(t *testing.T, to string) {
			if err := os.WriteFile(to, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"directory", func(t *testing.T, to string) {
			if err := os.Mkdir(to, 0o700); err != nil {
				t.Fatal(err)
			}
		}},
		{"dangling symlink", func(t *testing.T, to string) {
			if err := os.Symlink(filepath.Join(filepath.Dir(to), "nowhere"), to); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			to := filepath.Join(dir, "copy.db")
			tt.setup(t, to)
			before, _ := os.Lstat(to)
			var content []byte
			if before.Mode().IsRegular() {
				content, _ = os.ReadFile(to)
			}

			err := store.Backup(context.Background(), src.path, to)
			if !errors.Is(err, fs.ErrExist) {
				t.Fatalf("Backup over an existing %s: %v, want an error wrapping fs.ErrExist", tt.name, err)
			}
			after, lerr := os.Lstat(to)
			if lerr != nil || after.Mode() != before.Mode() || after.ModTime() != before.ModTime() {
				t.Errorf("the existing %s changed: %v, %v", tt.name, after, lerr)
			}
			if before.Mode().IsRegular() {
				if got, _ := os.ReadFile(to); !bytes.Equal(got, content) {
					t.Errorf("the existing file now holds %q, want %q", got, content)
				}
			}
			if got := dirNames(t, dir); !slices.Equal(got, []string{"copy.db"}) {
				t.Errorf("directory holds %v, want [copy.db] alone", got)
			}
		})
	}
}

// TestBackupLeavesNothingOnError: a backup that fails before or during the
// copy (cancelled while the temporary file exists, a source that is not a
// database, no source, a missing directory, a target naming no file)
// returns an error and leaves the target's directory as it was: no file
// under the final name, no temporary file.
// SQLite-specific: backs up the database file (VACUUM INTO).
func TestBackupLeavesNothingOnError(t *testing.T) {
	src := newSQLiteDB(t)
	if _, _, err := src.CreateAPIKey(context.Background(), "acme", "", store.RoleAdmin); err != nil {
		t.Fatal(err)
	}
	garbage := filepath.Join(t.TempDir(), "garbage.db")
	if err := os.WriteFile(garbage, bytes.Repeat([]byte("not a database "), 1000), 0o600); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		src  string
		to   func(dir string) string
	}{
		{"cancelled", cancelled, src.path, func(dir string) string { return filepath.Join(dir, "copy.db") }},
		{"not a database", context.Background(), garbage, func(dir string) string { return filepath.Join(dir, "copy.db") }},
		{"no source", context.Background(), filepath.Join(t.TempDir(), "missing.db"), func(dir string) string { return filepath.Join(dir, "copy.db") }},
		{"missing directory", context.Background(), src.path, func(dir string) string { return filepath.Join(dir, "no", "such", "copy.db") }},
		{"trailing slash", context.Background(), src.path, func(dir string) string { return filepath.Join(dir, "copy.db") + "/" }},
		{"empty", context.Background(), src.path, func(string) string { return "" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := store.Backup(tt.ctx, tt.src, tt.to(dir)); err == nil {
				t.Fatal("Backup succeeded, want an error")
			} else {
				t.Logf("error: %v", err)
			}
			if got := dirNames(t, dir); len(got) != 0 {
				t.Errorf("directory holds %v after a failed backup, want nothing", got)
			}
		})
	}
	if errors.Is(store.Backup(cancelled, src.path, filepath.Join(t.TempDir(), "c.db")), context.Canceled) != true {
		t.Error("a cancelled backup's error does not wrap context.Canceled")
	}
}
