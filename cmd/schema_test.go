package cmd_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/outdial/outdial/cmd"
	"github.com/outdial/outdial/store"
)

// fileState is what "writes nothing" compares: a file's bytes and
// modification time, and the names in its directory.
type fileState struct {
	data  []byte
	mtime time.Time
	names string
}

func stateOf(t *testing.T, path string) fileState {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fileState{data: data, mtime: st.ModTime(), names: strings.Join(dirNames(t, filepath.Dir(path)), " ")}
}

// TestNewerSchemaRefused: a database whose schema version is above this
// binary's newest migration is refused by every command that opens a
// database: exit status 1, exactly one line on stderr naming both
// versions, and the database file (bytes, modification time) and its
// directory (no -wal, -shm, secret key or backup created) left as they
// were.
// SQLite-specific: user_version of a file written by a newer version.
func TestNewerSchemaRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real binary; skipped with -short")
	}
	bin := cmd.BuildBinary(t)
	supported := store.SupportedSchemaVersion()
	newer := supported + 3
	want := "database schema version " + strconv.Itoa(newer) + " is newer than this outdial supports (" + strconv.Itoa(supported) + ")\n"

	// A database this binary wrote (an organization and a key), then
	// marked as written by a newer version, closed cleanly (no -wal).
	tmpl := t.TempDir()
	env := append(os.Environ(), "OUTDIAL_SECRET_KEY=")
	if out, err := exec.Command(bin, "apikey", "create", "--org", "acme", "--data", tmpl).CombinedOutput(); err != nil {
		t.Fatalf("apikey create: %v\n%s", err, out)
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(tmpl, "outdial.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("PRAGMA user_version = " + strconv.Itoa(newer)); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name string
		args []string
		// noKey removes secret.key first: the refusal must not create one.
		noKey bool
	}{
		{"serve", []string{"serve", "--addr", "127.0.0.1:0", "--metrics-addr", ""}, false},
		{"serve without a secret key", []string{"serve", "--addr", "127.0.0.1:0", "--metrics-addr", ""}, true},
		{"apikey create", []string{"apikey", "create", "--org", "acme"}, false},
		{"apikey list", []string{"apikey", "list"}, true},
		{"apikey revoke", []string{"apikey", "revoke", "1"}, false},
		{"backup", []string{"backup", "--to", "COPY"}, false},
		{"migrate", []string{"migrate"}, false},
		{"migrate --dry-run", []string{"migrate", "--dry-run"}, false},
		{"demo --data", []string{"demo", "--addr", "127.0.0.1:0"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			dbPath := filepath.Join(dir, "outdial.db")
			copyFile(t, filepath.Join(tmpl, "outdial.db"), dbPath)
			if !tc.noKey {
				copyFile(t, filepath.Join(tmpl, "secret.key"), filepath.Join(dir, "secret.key"))
			}
			// An mtime in the past, so that a write within the same clock
			// tick would still show.
			old := time.Now().Add(-time.Hour).Truncate(time.Second)
			if err := os.Chtimes(dbPath, old, old); err != nil {
				t.Fatal(err)
			}
			before := stateOf(t, dbPath)
			args := append([]string(nil), tc.args...)
			for i, a := range args {
				if a == "COPY" {
					args[i] = filepath.Join(dir, "copy.db")
				}
			}
			// Before the refusal, serve on such a database served it: the
			// deadline ends a run that does not exit by itself.
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			c := exec.CommandContext(ctx, bin, append(args, "--data", dir)...)
			c.Env = env
			var stdout, stderr bytes.Buffer
			c.Stdout, c.Stderr = &stdout, &stderr
			err := c.Run()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Fatalf("exit = %v, want status 1; stderr %q", err, stderr.String())
			}
			if stderr.String() != want {
				t.Fatalf("stderr = %q, want %q", stderr.String(), want)
			}
			after := stateOf(t, dbPath)
			if !bytes.Equal(after.data, before.data) || !after.mtime.Equal(before.mtime) || after.names != before.names {
				t.Fatalf("the database or its directory changed: files %q -> %q, mtime %v -> %v, bytes equal %v",
					before.names, after.names, before.mtime, after.mtime, bytes.Equal(after.data, before.data))
			}
			if _, err := os.Stat(dbPath + "-wal"); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("a -wal file exists: %v", err)
			}
		})
	}
}
