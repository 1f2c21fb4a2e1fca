package cmd

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/outdial/outdial/store"
)

// newSecret returns a random server secret and its OUTDIAL_SECRET_KEY form.
func newSecret(t *testing.T) ([]byte, string) {
	t.Helper()
	key := make([]byte, store.KeySize)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	return key, base64.StdEncoding.EncodeToString(key)
}

// openAt opens the database at location with key beside the commands under
// test (closed when t ends).
func openAt(t *testing.T, location string, key []byte) *store.DB {
	t.Helper()
	sealer, err := store.NewSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(context.Background(), location, sealer)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// sealOne stores organization acme with one Twilio configuration, whose
// credentials db seals with its secret.
func sealOne(t *testing.T, db *store.DB) {
	t.Helper()
	ctx := context.Background()
	k, _, err := db.CreateAPIKey(ctx, "acme", "", store.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateTelephonyConfig(ctx, k.OrganizationID, store.TelephonyConfig{Name: "main", Provider: "twilio",
		Credentials: store.Credentials{"account_sid": "AC0123456789abcdef0123456789abcdef", "auth_token": "tok-not-shown"}}); err != nil {
		t.Fatal(err)
	}
}

// TestServeClusterFlagsRefused: serve refuses, before it creates or opens
// anything, a --database-url that is not PostgreSQL's, the bundled object
// store beside --database-url (flag or OUTDIAL_DATABASE_URL), a --lease-ttl
// under 3 s and a bad --node-name; no message holds the URL's password.
func TestServeClusterFlagsRefused(t *testing.T) {
	clearEnv(t)
	const pgURL = "postgres://outdial:pw-not-shown@127.0.0.1:1/outdial?sslmode=disable"
	cases := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"not a PostgreSQL URL", nil, []string{"--database-url", "mysql://outdial:pw-not-shown@db.example/outdial"},
			"--database-url must be a postgres:// or postgresql:// URL, got mysql://outdial:xxxxx@db.example/outdial"},
		{"the bundled store", nil, []string{"--database-url", pgURL}, errBundledStoreShared.Error()},
		{"the bundled store, URL from the environment", map[string]string{"OUTDIAL_DATABASE_URL": pgURL}, nil, errBundledStoreShared.Error()},
		{"the bundled store, postgresql://", nil, []string{"--database-url", "postgresql://outdial:pw-not-shown@127.0.0.1:1/outdial"},
			errBundledStoreShared.Error()},
		{"a lease TTL of 1s", nil, []string{"--lease-ttl", "1s"}, "--lease-ttl must be at least 3s, got 1s"},
		{"a lease TTL of 0", nil, []string{"--lease-ttl", "0"}, "--lease-ttl must be at least 3s, got 0s"},
		{"a negative lease TTL", map[string]string{"OUTDIAL_LEASE_TTL": "-5s"}, nil, "--lease-ttl must be at least 3s, got -5s"},
		{"a lease TTL that is no duration", nil, []string{"--lease-ttl", "15"}, "lease-ttl"},
		{"an empty node name", nil, []string{"--node-name", " "}, "--node-name must not be empty"},
		{"a node name with a newline", nil, []string{"--node-name", "a\nb"}, "--node-name must not hold control characters"},
		{"a long node name", nil, []string{"--node-name", strings.Repeat("n", 129)}, "--node-name must be at most 128 bytes, got 129"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			dir := filepath.Join(t.TempDir(), "data")
			_, _, err := run(t, append([]string{"serve", "--data", dir, "--addr", "127.0.0.1:0", "--metrics-addr", ""}, tc.args...)...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "pw-not-shown") {
				t.Fatalf("the error shows the password: %v", err)
			}
			if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("the data directory exists after the refusal: %v", err)
			}
		})
	}
}

// TestServeNodeName: --node-name names the node in the start-up log line,
// the health check and the outdial_node_info metric; without it the node is
// hostname:port of the listener. The health check says the database is
// SQLite.
func TestServeNodeName(t *testing.T) {
	clearEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	metricsAddr := freeLoopback(t)
	addr, _, done, logs := startServeArgs(t, ctx, "--data", t.TempDir(), "--addr", "127.0.0.1:0",
		"--metrics-addr", metricsAddr, "--node-name", "node-a", "--lease-ttl", "20s")
	status, body := getJSON(t, "http://"+addr+"/api/v1/health", "")
	if status != http.StatusOK || body["node"] != "node-a" || body["database"] != "sqlite" {
		t.Fatalf("health = %d %v, want node node-a, database sqlite", status, body)
	}
	if !regexp.MustCompile(`msg="outdial listening" .* node=node-a database=sqlite database_location=\S+outdial\.db`).MatchString(logs.String()) {
		t.Errorf("the start-up line does not name the node and the database:\n%s", logs.String())
	}
	res, err := http.Get("http://" + metricsAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(metrics), "\noutdial_node_info{node=\"node-a\"} 1\n") {
		t.Errorf("/metrics lacks outdial_node_info{node=\"node-a\"} 1:\n%s", metrics)
	}
	cancel()
	waitDone(t, done)

	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	addr, _, done, _ = startServeArgs(t, ctx2, "--data", t.TempDir(), "--addr", "127.0.0.1:0", "--metrics-addr", "")
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	port := addr[strings.LastIndex(addr, ":")+1:]
	if _, body := getJSON(t, "http://"+addr+"/api/v1/health", ""); body["node"] != host+":"+port {
		t.Errorf("default node = %v, want %s", body["node"], host+":"+port)
	}
	cancel2()
	waitDone(t, done)
}

// TestServeWrongSecret: serve refuses a database whose credentials its
// secret cannot decrypt, saying so (here on SQLite, where the check is the
// same): with another OUTDIAL_SECRET_KEY it names that variable; without
// the secret.key that sealed them, it says the file was missing and leaves
// none behind. With the right secret it starts.
func TestServeWrongSecret(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	createKey(t, "--data", dir, "--org", "acme")
	db := openData(t, dir)
	sealOne(t, db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	keyPath := filepath.Join(dir, "secret.key")
	right, err := os.ReadFile(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	serve := func() error {
		_, _, err := run(t, "serve", "--data", dir, "--addr", "127.0.0.1:0", "--metrics-addr", "")
		return err
	}

	_, other := newSecret(t)
	t.Setenv("OUTDIAL_SECRET_KEY", other)
	err = serve()
	if !errors.Is(err, store.ErrWrongSecret) || !strings.Contains(err.Error(), "refusing to start: the server secret cannot decrypt what the database holds") ||
		!strings.Contains(err.Error(), "this node's secret is OUTDIAL_SECRET_KEY") {
		t.Fatalf("serve with another OUTDIAL_SECRET_KEY: %v, want a refusal naming OUTDIAL_SECRET_KEY", err)
	}
	os.Unsetenv("OUTDIAL_SECRET_KEY")

	if err := os.Remove(keyPath); err != nil {
		t.Fatal(err)
	}
	err = serve()
	if !errors.Is(err, store.ErrWrongSecret) || !strings.Contains(err.Error(), keyPath+" was missing") {
		t.Fatalf("serve without the secret.key: %v, want a refusal saying it was missing", err)
	}
	if _, err := os.Stat(keyPath); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a secret.key was left behind by the refusal: %v", err)
	}

	if err := os.WriteFile(keyPath, right, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, _, done, _ := startServeArgs(t, ctx, "--data", dir, "--addr", "127.0.0.1:0", "--metrics-addr", "")
	if status, _ := getJSON(t, "http://"+addr+"/api/v1/health", ""); status != http.StatusOK {
		t.Fatalf("health with the right secret = %d", status)
	}
	cancel()
	waitDone(t, done)
}

// TestBackupDatabaseURL: backup with --database-url (or
// OUTDIAL_DATABASE_URL) copies nothing and says to use pg_dump, exit status
// 2, without --to and without reaching the database; without it, --to is
// required as before.
func TestBackupDatabaseURL(t *testing.T) {
	clearEnv(t)
	dir := filepath.Join(t.TempDir(), "data")
	const pgURL = "postgres://outdial:pw-not-shown@127.0.0.1:1/outdial"
	for _, args := range [][]string{
		{"backup", "--data", dir, "--database-url", pgURL, "--to", filepath.Join(t.TempDir(), "copy.db")},
		{"backup", "--database-url", pgURL},
	} {
		_, _, err := run(t, args...)
		var exit *exitError
		if !errors.As(err, &exit) || exit.code != 2 || exit.msg != pgDumpHint {
			t.Fatalf("%v: err = %#v, want exit status 2 with %q", args, err, pgDumpHint)
		}
	}
	t.Setenv("OUTDIAL_DATABASE_URL", pgURL)
	_, _, err := run(t, "backup", "--data", dir)
	var exit *exitError
	if !errors.As(err, &exit) || exit.code != 2 {
		t.Fatalf("OUTDIAL_DATABASE_URL: err = %v, want exit status 2", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("backup on PostgreSQL created the data directory: %v", err)
	}
	os.Unsetenv("OUTDIAL_DATABASE_URL")
	if _, _, err := run(t, "backup", "--data", dir); err == nil || err.Error() != `required flag(s) "to" not set` {
		t.Fatalf("backup without --to: %v", err)
	}
	if strings.Contains(pgDumpHint, "pw-not-shown") || strings.Count(pgDumpHint, "\n") != 0 {
		t.Fatalf("the hint is not one line without the password: %q", pgDumpHint)
	}
}

// TestRedactURL: a password in the user part or the query is never shown.
func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://outdial:s3cret@db:5432/outdial?sslmode=require":     "postgres://outdial:xxxxx@db:5432/outdial?sslmode=require",
		"postgres://outdial@db/outdial?password=s3cret&sslmode=disable": "postgres://outdial@db/outdial?password=xxxxx&sslmode=disable",
		"postgresql://db/outdial":                                       "postgresql://db/outdial",
		"postgres://outdial:s3cret@db:badport/x":                        "the --database-url (not shown: it does not parse as a URL)",
	} {
		if got := redactURL(in); got != want {
			t.Errorf("redactURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// waitHealth polls url until it answers 200 or 10 s pass.
func waitHealth(t *testing.T, url string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		status, body := getJSON(t, url, "")
		if status == http.StatusOK {
			return body
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s = %d %v after 10 s", url, status, body)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
