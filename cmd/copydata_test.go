package cmd

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/store/storetest"
)

// copyRun runs the binary's copy-data with env (and nothing else of the
// test's OUTDIAL_* environment) and returns its stdout, stderr and exit
// status.
func copyRun(t *testing.T, bin string, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"copy-data"}, args...)...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OUTDIAL_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("run copy-data: %v", err)
	}
	return out.String(), errOut.String(), cmd.ProcessState.ExitCode()
}

func randomKeyEnv(t *testing.T) string {
	t.Helper()
	k := make([]byte, store.KeySize)
	if _, err := rand.Read(k); err != nil {
		t.Fatal(err)
	}
	return "OUTDIAL_SECRET_KEY=" + base64.StdEncoding.EncodeToString(k)
}

// TestCopyDataCommand checks copy-data's exit statuses and messages
// through the real binary: 0 for a copy (a line per table, the summary),
// non-zero with a message saying why for a database already holding our
// tables (left unchanged), a key that opens no credentials, no key, no
// URL, no data directory (not created) and a data directory behind this
// binary's schema. The copies need a PostgreSQL server
// (OUTDIAL_TEST_DATABASE_URL; skipped without one, failed without one in
// CI); the refusals before any connection run everywhere.
func TestCopyDataCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real binary; skipped with -short")
	}
	clearEnvKeep(t, "OUTDIAL_TEST_DATABASE_URL")
	bin := BuildBinary(t)
	dir := t.TempDir()
	createKey(t, "--org", "acme", "--data", dir)
	db := openData(t, dir)
	ctx := context.Background()
	if _, err := db.CreateTelephonyConfig(ctx, 1, store.TelephonyConfig{Name: "main", Provider: "twilio",
		Credentials: store.Credentials{"account_sid": "AC1", "auth_token": "SECRET-token"}}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	fileKey, err := os.ReadFile(filepath.Join(dir, "secret.key"))
	if err != nil {
		t.Fatal(err)
	}
	dirKey := "OUTDIAL_SECRET_KEY=" + strings.TrimSpace(string(fileKey))
	const unreachable = "postgres://outdial@127.0.0.1:1/none?sslmode=disable"

	refusals := []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"no key", nil, []string{"--from", dir, "--database-url", unreachable}, "OUTDIAL_SECRET_KEY is not set"},
		{"no url", []string{dirKey}, []string{"--from", dir}, "--database-url"},
		{"not a url", []string{dirKey}, []string{"--from", dir, "--database-url", filepath.Join(dir, "x.db")}, "PostgreSQL URL"},
		{"no from", []string{dirKey}, []string{"--database-url", unreachable}, "--from"},
		{"no data directory", []string{dirKey}, []string{"--from", filepath.Join(dir, "missing"), "--database-url", unreachable}, "no database"},
	}
	for _, tc := range refusals {
		out, errOut, code := copyRun(t, bin, tc.env, tc.args...)
		if code == 0 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s: exit %d, stderr %q, stdout %q; want non-zero and %q", tc.name, code, errOut, out, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("copy-data created the missing data directory: %v", err)
	}

	old := t.TempDir()
	copyDBFile(t, filepath.Join(dir, "outdial.db"), filepath.Join(old, "outdial.db"))
	raw := storetest.Raw(t, filepath.Join(old, "outdial.db"))
	if _, err := raw.Exec(fmt.Sprintf("PRAGMA user_version = %d", store.SupportedSchemaVersion()-1)); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	if _, errOut, code := copyRun(t, bin, []string{dirKey}, "--from", old, "--database-url", unreachable); code == 0 ||
		!strings.Contains(errOut, "outdial migrate --data "+old) {
		t.Errorf("older data directory: exit %d, stderr %q; want non-zero telling to migrate it", code, errOut)
	}

	if os.Getenv("OUTDIAL_TEST_DATABASE_URL") == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("OUTDIAL_TEST_DATABASE_URL is not set: CI runs the copies on PostgreSQL")
		}
		t.Skip("OUTDIAL_TEST_DATABASE_URL is not set: the copies are not run")
	}
	dest := storetest.Location(t)
	keyless := t.TempDir()
	copyDBFile(t, filepath.Join(dir, "outdial.db"), filepath.Join(keyless, "outdial.db"))
	if _, errOut, code := copyRun(t, bin, []string{randomKeyEnv(t)}, "--from", keyless, "--database-url", dest); code == 0 ||
		!strings.Contains(errOut, "do not open with the cluster's key") {
		t.Errorf("a key that opens nothing: exit %d, stderr %q; want non-zero naming the credentials", code, errOut)
	}

	out, errOut, code := copyRun(t, bin, []string{dirKey, "OUTDIAL_DATABASE_URL=" + dest}, "--from", dir)
	if code != 0 {
		t.Fatalf("copy: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	for _, want := range []string{"copied organizations ", "copied contacts ", "copied campaign_leases ", "copied event_stream_leases ", " tables in ",
		"the credentials of 1 telephony configurations open with OUTDIAL_SECRET_KEY"} {
		if !strings.Contains(out, want) {
			t.Errorf("copy output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "SECRET-token") {
		t.Fatalf("copy output shows a credential:\n%s", out)
	}
	if _, errOut, code := copyRun(t, bin, []string{dirKey}, "--from", dir, "--database-url", dest); code == 0 ||
		!strings.Contains(errOut, "copies only into an empty database") {
		t.Errorf("second copy: exit %d, stderr %q; want non-zero refusing a non-empty database", code, errOut)
	}

	sealer, err := store.NewSealer(mustDecode(t, strings.TrimSpace(string(fileKey))))
	if err != nil {
		t.Fatal(err)
	}
	copied, err := store.Open(ctx, dest, sealer)
	if err != nil {
		t.Fatal(err)
	}
	defer copied.Close()
	cfg, err := copied.GetTelephonyConfig(ctx, 1, 1)
	if err != nil || cfg.Credentials.String("auth_token") != "SECRET-token" {
		t.Fatalf("configuration on the copy = %+v, %v", cfg, err)
	}
}

func mustDecode(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// clearEnvKeep is clearEnv, keeping the variables named.
func clearEnvKeep(t *testing.T, keep ...string) {
	t.Helper()
	saved := map[string]string{}
	for _, k := range keep {
		saved[k] = os.Getenv(k)
	}
	clearEnv(t)
	for k, v := range saved {
		if v != "" {
			t.Setenv(k, v)
		}
	}
}

// copyDBFile copies a closed database file.
func copyDBFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
