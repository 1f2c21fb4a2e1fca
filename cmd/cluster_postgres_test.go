package cmd

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/store/objstore"
	"github.com/outdial/outdial/store/storetest"
)

// The commands on PostgreSQL (API.md 16). These tests need a server: they
// run with OUTDIAL_TEST_DATABASE_URL set (an admin URL, as .ci/postgres.sh
// prints; each test gets a new database on it) and are skipped without it,
// except under CI, where they must run. Their names end in OnPostgres.

// pgLocation returns the URL of a new, empty database for t, dropped when t
// ends. Call it before clearEnv, which unsets OUTDIAL_TEST_DATABASE_URL.
func pgLocation(t *testing.T) string {
	t.Helper()
	if os.Getenv("OUTDIAL_TEST_DATABASE_URL") == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("OUTDIAL_TEST_DATABASE_URL is not set under CI: the PostgreSQL tests of the commands must run")
		}
		t.Skip("OUTDIAL_TEST_DATABASE_URL is not set: no PostgreSQL server to run on")
	}
	u := storetest.Location(t)
	if !store.IsDatabaseURL(u) {
		t.Fatalf("storetest.Location = %q, want a PostgreSQL URL", u)
	}
	return u
}

// withPassword returns u and its password, giving it one when it has none
// (a server that trusts the test's role never asks for it; one that does
// not has it in the URL already), so that every test can show the
// password is never printed.
func withPassword(t *testing.T, u string) (string, string) {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	if pw, ok := p.User.Password(); ok && pw != "" {
		return u, pw
	}
	const pw = "pw-not-shown-0123"
	p.User = url.UserPassword(p.User.Username(), pw)
	return p.String(), pw
}

// noPassword fails t when out holds pw.
func noPassword(t *testing.T, pw, out string) {
	t.Helper()
	if pw != "" && strings.Contains(out, pw) {
		t.Fatalf("the output shows the database URL's password:\n%s", out)
	}
}

// s3Server serves an S3 endpoint (the bundled store's handler) standing in
// for a remote S3 service, and returns serve's flags for it.
func s3Server(t *testing.T) []string {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	access, secretBytes := "AKTEST"+hex.EncodeToString(randomBytes(t, 4)), hex.EncodeToString(randomBytes(t, 16))
	_, h, err := objstore.NewBundled(objstore.BundledConfig{Dir: t.TempDir(), Endpoint: srv.Listener.Addr().String(),
		Insecure: true, AccessKey: access, SecretKey: secretBytes})
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = h
	srv.Start()
	t.Cleanup(srv.Close)
	return []string{"--s3-endpoint", srv.Listener.Addr().String(), "--s3-bucket", objstore.BundledBucket,
		"--s3-access-key", access, "--s3-secret-key", secretBytes, "--s3-insecure"}
}

func randomBytes(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAPIKeyOnPostgres: apikey create, list and revoke work on the
// database of --database-url (or OUTDIAL_DATABASE_URL), create no data
// directory and make up no secret.key, and never print the URL's password.
func TestAPIKeyOnPostgres(t *testing.T) {
	u, pw := withPassword(t, pgLocation(t))
	clearEnv(t)
	dir := filepath.Join(t.TempDir(), "data")
	key := createKey(t, "--data", dir, "--database-url", u, "--org", "acme", "--name", "ops")
	t.Setenv("OUTDIAL_DATABASE_URL", u)
	other := createKey(t, "--data", dir, "--org", "other")
	out, errOut, err := run(t, "apikey", "list", "--data", dir)
	if err != nil || !strings.Contains(out, "acme") || !strings.Contains(out, "other") || !strings.Contains(out, key[:10]) {
		t.Fatalf("apikey list = %v:\n%s", err, out)
	}
	noPassword(t, pw, out+errOut)
	db := openAt(t, u, randomBytes(t, store.KeySize))
	p, err := db.Authenticate(context.Background(), key)
	if err != nil {
		t.Fatalf("the key created on PostgreSQL does not authenticate there: %v", err)
	}
	if out, _, err := run(t, "apikey", "revoke", "1", "--data", dir); err != nil || strings.TrimSpace(out) != "revoked api key 1" {
		t.Fatalf("revoke = %q, %v", out, err)
	}
	if _, err := db.Authenticate(context.Background(), key); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("the revoked key (organization %d) authenticates: %v", p.OrganizationID, err)
	}
	if _, err := db.Authenticate(context.Background(), other); err != nil {
		t.Fatalf("the other key: %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("apikey on PostgreSQL made the data directory: %v", err)
	}
}

// TestMigrateOnPostgres: migrate --dry-run lists the PostgreSQL engine's
// migrations of a new database and writes nothing; migrate applies them;
// both name the database without its password.
func TestMigrateOnPostgres(t *testing.T) {
	u, pw := withPassword(t, pgLocation(t))
	clearEnv(t)
	all, err := store.PostgresMigrations()
	if err != nil {
		t.Fatal(err)
	}
	last := all[len(all)-1]
	out, errOut, err := run(t, "migrate", "--dry-run", "--database-url", u)
	wantDry := fmt.Sprintf("%s is at schema version 0; %d migrations pending (to version %d):\n", redactURL(u), len(all), last.Version)
	if err != nil || !strings.HasPrefix(out, wantDry) || !strings.Contains(out, fmt.Sprintf("%d\t%s\n", last.Version, last.Name)) {
		t.Fatalf("migrate --dry-run = %v:\n%s\nwant it to start with %q", err, out, wantDry)
	}
	noPassword(t, pw, out+errOut)
	if current, pending, err := store.PendingMigrations(context.Background(), u); err != nil || current != 0 || len(pending) != len(all) {
		t.Fatalf("after the dry run: version %d, %d pending, %v; want 0 and %d (nothing written)", current, len(pending), err, len(all))
	}
	out, errOut, err = run(t, "migrate", "--database-url", u)
	wantApplied := fmt.Sprintf("applied %d\t%s\n%s is at schema version %d\n", last.Version, last.Name, redactURL(u), last.Version)
	if err != nil || !strings.HasSuffix(out, wantApplied) {
		t.Fatalf("migrate = %v:\n%s\nwant it to end with %q", err, out, wantApplied)
	}
	noPassword(t, pw, out+errOut)
	if current, pending, err := store.PendingMigrations(context.Background(), u); err != nil || current != last.Version || len(pending) != 0 {
		t.Fatalf("after migrate: version %d, %d pending, %v; want %d and none", current, len(pending), err, last.Version)
	}
	if out, _, err := run(t, "migrate", "--dry-run", "--database-url", u); err != nil || !strings.Contains(out, "no migration pending") {
		t.Fatalf("migrate --dry-run after migrate = %v:\n%s", err, out)
	}
}

// TestServeOnPostgres: serve on --database-url with a remote S3 store and
// the shared secret answers health with its node and "postgres", and says
// so in its start-up line without the URL's password.
func TestServeOnPostgres(t *testing.T) {
	u, pw := withPassword(t, pgLocation(t))
	clearEnv(t)
	_, secret := newSecret(t)
	t.Setenv("OUTDIAL_SECRET_KEY", secret)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	args := append([]string{"--data", t.TempDir(), "--addr", "127.0.0.1:0", "--metrics-addr", "",
		"--database-url", u, "--node-name", "pg-node-1", "--lease-ttl", "6s"}, s3Server(t)...)
	addr, _, done, logs := startServeArgs(t, ctx, args...)
	body := waitHealth(t, "http://"+addr+"/api/v1/health")
	if body["node"] != "pg-node-1" || body["database"] != "postgres" {
		t.Fatalf("health = %v, want node pg-node-1, database postgres", body)
	}
	if !strings.Contains(logs.String(), "node=pg-node-1 database=postgres database_location=") || !strings.Contains(logs.String(), redactURL(u)) {
		t.Errorf("the start-up line does not name the node and the database:\n%s", logs.String())
	}
	cancel()
	waitDone(t, done)
	noPassword(t, pw, logs.String())
}

// TestServeSecretOnPostgres: a node whose secret cannot decrypt the shared
// database's credentials refuses to start, saying so; a node with no
// secret at all (no OUTDIAL_SECRET_KEY, no DATA/secret.key) refuses too,
// and makes none up.
func TestServeSecretOnPostgres(t *testing.T) {
	u, pw := withPassword(t, pgLocation(t))
	clearEnv(t)
	right, _ := newSecret(t)
	db := openAt(t, u, right)
	sealOne(t, db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	s3 := s3Server(t)
	serve := func(dir string) error {
		_, errOut, err := run(t, append([]string{"serve", "--data", dir, "--addr", "127.0.0.1:0", "--metrics-addr", "", "--database-url", u}, s3...)...)
		if err != nil {
			noPassword(t, pw, errOut+err.Error())
		}
		return err
	}

	_, other := newSecret(t)
	t.Setenv("OUTDIAL_SECRET_KEY", other)
	err := serve(t.TempDir())
	if !errors.Is(err, store.ErrWrongSecret) || !strings.Contains(err.Error(), "refusing to start: the server secret cannot decrypt what the database holds") {
		t.Fatalf("serve with another secret: %v, want a refusal saying the secret cannot decrypt the database", err)
	}
	os.Unsetenv("OUTDIAL_SECRET_KEY")

	dir := t.TempDir()
	err = serve(dir)
	if !errors.Is(err, errNoSharedSecret) || !strings.Contains(err.Error(), "OUTDIAL_SECRET_KEY") {
		t.Fatalf("serve without a secret: %v, want a refusal naming OUTDIAL_SECRET_KEY", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "secret.key")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("serve made up a secret.key for the shared database: %v", err)
	}
}

// TestDoctorOnPostgres: doctor checks the database of --database-url: ok
// when it opens at this schema with the secret that sealed it, FIX when
// the secret cannot decrypt it; the URL's password is never printed.
func TestDoctorOnPostgres(t *testing.T) {
	u, pw := withPassword(t, pgLocation(t))
	clearEnv(t)
	right, rightEnv := newSecret(t)
	db := openAt(t, u, right)
	sealOne(t, db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OUTDIAL_SECRET_KEY", rightEnv)
	out, _, _ := run(t, "doctor", "--data", t.TempDir(), "--database-url", u, "--timeout", "1s")
	want := "ok   database: " + redactURL(u) + " opens and is at schema version "
	if !strings.Contains(out, want) {
		t.Fatalf("doctor with the right secret lacks %q:\n%s", want, out)
	}
	noPassword(t, pw, out)

	_, other := newSecret(t)
	t.Setenv("OUTDIAL_SECRET_KEY", other)
	out, _, err := run(t, "doctor", "--data", t.TempDir(), "--database-url", u, "--timeout", "1s")
	want = "FIX  database: " + redactURL(u) + ": the server secret cannot decrypt what the database holds"
	if err == nil || !strings.Contains(out, want) || !strings.Contains(out, "this host's secret is OUTDIAL_SECRET_KEY") {
		t.Fatalf("doctor with another secret = %v, want a line %q:\n%s", err, want, out)
	}
	noPassword(t, pw, out)
}
