package store_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"database/sql"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/store/internal/testdb"
)

// testDB is an open database with its location and key. path is where it
// lives: a file path on SQLite, a URL on PostgreSQL (testdb.Location).
type testDB struct {
	*store.DB
	path string
	key  []byte
}

func newKey(t *testing.T) []byte {
	t.Helper()
	key := make([]byte, store.KeySize)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	return key
}

// openDB opens (creating) the database at path with key; closed at cleanup.
func openDB(t *testing.T, path string, key []byte) *store.DB {
	t.Helper()
	sealer, err := store.NewSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(context.Background(), path, sealer)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// newDB opens a new database on the run's engine (testdb.Location).
func newDB(t *testing.T) *testDB {
	t.Helper()
	return openNewDB(t, testdb.Location(t))
}

// newSQLiteDB opens a new database in a SQLite file whatever the run's
// engine, for the tests about SQLite itself: its files, pragmas, query
// plans and migrations.
func newSQLiteDB(t *testing.T) *testDB {
	t.Helper()
	return openNewDB(t, filepath.Join(t.TempDir(), "outdial.db"))
}

func openNewDB(t *testing.T, path string) *testDB {
	t.Helper()
	key := newKey(t)
	return &testDB{DB: openDB(t, path, key), path: path, key: key}
}

// rawDB opens the database at path with plain database/sql, for looking at
// rows as stored (testdb.Raw: SQLite's driver for a file, pgx's for a
// PostgreSQL URL; queries meant for both number their parameters, $1).
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	return testdb.Raw(t, path)
}

func newOrg(t *testing.T, db *store.DB, name string) int64 {
	t.Helper()
	k, _, err := db.CreateAPIKey(context.Background(), name, "", store.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	return k.OrganizationID
}

func rsaPEM(t *testing.T) string {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}))
}

// secretConfigs returns one configuration of each provider with distinctive
// secrets, and the list of those secrets.
func secretConfigs(t *testing.T) ([]store.TelephonyConfig, []string) {
	pemKey := rsaPEM(t)
	cfgs := []store.TelephonyConfig{
		{Name: "ari", Provider: "ari", Credentials: store.Credentials{"ari_endpoint": "http://pbx:8088", "app_name": "a", "app_password": "SECRET-ari-password-11"}},
		{Name: "cloudonix", Provider: "cloudonix", Credentials: store.Credentials{"bearer_token": "SECRET-cloudonix-bearer-22", "domain_id": "d"}},
		{Name: "plivo", Provider: "plivo", Credentials: store.Credentials{"auth_id": "MA1", "auth_token": "SECRET-plivo-token-33", "machine_detection": true}},
		{Name: "telnyx", Provider: "telnyx", Credentials: store.Credentials{"api_key": "SECRET-telnyx-key-44", "webhook_public_key": nil}},
		{Name: "twilio", Provider: "twilio", IsDefaultOutbound: true, Credentials: store.Credentials{"account_sid": "AC1", "auth_token": "SECRET-twilio-token-55"}},
		{Name: "vobiz", Provider: "vobiz", Credentials: store.Credentials{"auth_id": "MA2", "auth_token": "SECRET-vobiz-token-66"}},
		{Name: "vonage", Provider: "vonage", Credentials: store.Credentials{"api_key": "k", "api_secret": "SECRET-vonage-secret-77",
			"application_id": "app", "private_key": pemKey, "signature_secret": "SECRET-vonage-signature-88"}},
	}
	secrets := []string{"SECRET-ari-password-11", "SECRET-cloudonix-bearer-22", "SECRET-plivo-token-33", "SECRET-telnyx-key-44",
		"SECRET-twilio-token-55", "SECRET-vobiz-token-66", "SECRET-vonage-secret-77", "SECRET-vonage-signature-88"}
	for _, line := range strings.Split(pemKey, "\n") {
		if len(line) >= 16 && !strings.HasPrefix(line, "-----") {
			secrets = append(secrets, line)
		}
	}
	return cfgs, secrets
}

// dbFiles returns the contents of the database file and its -wal and -shm
// companions (those that exist).
func dbFiles(t *testing.T, path string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		data, err := os.ReadFile(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(p)] = data
	}
	return out
}

func assertNoSecretInFiles(t *testing.T, path string, secrets []string) {
	t.Helper()
	files := dbFiles(t, path)
	if len(files[filepath.Base(path)]) == 0 {
		t.Fatalf("database file %s is empty or missing", path)
	}
	for name, data := range files {
		for _, s := range secrets {
			// As stored in JSON (escaped) too, in case a row held the
			// credentials object in clear.
			for _, form := range []string{s, strings.ReplaceAll(s, "/", `\/`), strings.ReplaceAll(s, "+", `\u002b`)} {
				if bytes.Contains(data, []byte(form)) {
					t.Errorf("%s contains the secret %q in clear text", name, s)
				}
			}
		}
	}
}

// TestNoSecretInDatabaseFile stores configurations with known secrets for
// every provider, updates some (so old row versions sit in the WAL), and
// reads the raw bytes of the database file and its WAL — while open and
// after closing — to prove no secret is there in clear text. It also checks
// that no API key is stored, only its SHA-256.
// SQLite-specific: reads the bytes of the database file and its WAL.
func TestNoSecretInDatabaseFile(t *testing.T) {
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
	_, apiKey, err := db.CreateAPIKey(ctx, "org", "k", store.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	org, err := db.Authenticate(ctx, apiKey.Reveal())
	if err != nil {
		t.Fatal(err)
	}
	cfgs, secrets := secretConfigs(t)
	secrets = append(secrets, apiKey.Reveal(), apiKey.Reveal()[len(store.APIKeyPrefix):])
	for _, c := range cfgs {
		created, err := db.CreateTelephonyConfig(ctx, org.OrganizationID, c)
		if err != nil {
			t.Fatalf("create %s: %v", c.Provider, err)
		}
		// Update some so the WAL holds several versions of the row.
		_, err = db.UpdateTelephonyConfig(ctx, org.OrganizationID, created.ID, func(tc *store.TelephonyConfig) error {
			tc.Name += "-renamed"
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(path + "-wal"); err != nil {
		t.Fatalf("no WAL file while open (journal_mode WAL expected): %v", err)
	}
	assertNoSecretInFiles(t, path, secrets)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	assertNoSecretInFiles(t, path, secrets)

	// The credentials column holds sealed bytes: version 1, not JSON.
	raw := rawDB(t, path)
	rows, err := raw.Query("SELECT provider, credentials FROM telephony_configs")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var provider string
		var blob []byte
		if err := rows.Scan(&provider, &blob); err != nil {
			t.Fatal(err)
		}
		n++
		if len(blob) < 1+12+16 || blob[0] != 1 || json.Valid(blob) || json.Valid(blob[1:]) {
			t.Errorf("%s: credentials column is not a sealed value: %q", provider, blob)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n != len(cfgs) {
		t.Fatalf("rows = %d, want %d", n, len(cfgs))
	}
	// The API key table holds the key's SHA-256 and a short prefix only.
	var prefix string
	var hash []byte
	if err := raw.QueryRow("SELECT prefix, key_hash FROM api_keys").Scan(&prefix, &hash); err != nil {
		t.Fatal(err)
	}
	if len(hash) != 32 || !strings.HasPrefix(apiKey.Reveal(), prefix) || len(prefix) > 10 {
		t.Fatalf("api key stored as prefix %q hash %d bytes", prefix, len(hash))
	}
}

// TestCredentialsBoundToRowAndKey moves a sealed value to another row and
// opens the database with another key: both fail to open the credentials
// (an internal error, not a not-found), while everything that needs no
// credentials keeps working.
func TestCredentialsBoundToRowAndKey(t *testing.T) {
	ctx := context.Background()
	db := newDB(t)
	org := newOrg(t, db.DB, "org")
	cfgs, _ := secretConfigs(t)
	c1, err := db.CreateTelephonyConfig(ctx, org, cfgs[0])
	if err != nil {
		t.Fatal(err)
	}
	c2, err := db.CreateTelephonyConfig(ctx, org, cfgs[1])
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	raw := rawDB(t, db.path)
	if _, err := raw.Exec("UPDATE telephony_configs SET credentials = (SELECT credentials FROM telephony_configs WHERE id = $1) WHERE id = $2", c1.ID, c2.ID); err != nil {
		t.Fatal(err)
	}
	raw.Close()

	again := openDB(t, db.path, db.key)
	if _, err := again.GetTelephonyConfig(ctx, org, c1.ID); err != nil {
		t.Fatalf("untouched row: %v", err)
	}
	_, err = again.GetTelephonyConfig(ctx, org, c2.ID)
	if err == nil {
		t.Fatal("a sealed value copied to another row opened")
	}
	if code := store.ErrorCode(err); code != "" {
		t.Fatalf("error code = %q, want an internal error", code)
	}
	if strings.Contains(err.Error(), "SECRET-") {
		t.Fatalf("error leaks a secret: %v", err)
	}
	again.Close()

	other := openDB(t, db.path, newKey(t))
	if _, err := other.GetTelephonyConfig(ctx, org, c1.ID); err == nil || store.ErrorCode(err) != "" {
		t.Fatalf("wrong key: err = %v, want an internal error", err)
	}
	list, err := other.ListTelephonyConfigs(ctx, org)
	if err != nil || len(list) != 2 {
		t.Fatalf("list with wrong key = %d, %v", len(list), err)
	}
}

func TestSealer(t *testing.T) {
	key := newKey(t)
	s, err := store.NewSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	plain := []byte(`{"auth_token":"abc"}`)
	sealed := s.Seal(plain, "telephony_configs/1")
	if sealed[0] != 1 {
		t.Errorf("version byte = %d, want 1", sealed[0])
	}
	if bytes.Contains(sealed, plain) {
		t.Fatal("sealed value contains the plaintext")
	}
	if again := s.Seal(plain, "telephony_configs/1"); bytes.Equal(again, sealed) {
		t.Fatal("two seals of the same value are equal (nonce reuse)")
	}
	got, err := s.Open(sealed, "telephony_configs/1")
	if err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("open = %q, %v", got, err)
	}
	otherKey, err := store.NewSealer(newKey(t))
	if err != nil {
		t.Fatal(err)
	}
	tampered := append([]byte(nil), sealed...)
	tampered[len(tampered)-1] ^= 1
	badVersion := append([]byte(nil), sealed...)
	badVersion[0] = 2
	tests := []struct {
		name   string
		sealer *store.Sealer
		value  []byte
		ad     string
	}{
		{"wrong row", s, sealed, "telephony_configs/2"},
		{"wrong table", s, sealed, "phone_numbers/1"},
		{"wrong key", otherKey, sealed, "telephony_configs/1"},
		{"tampered", s, tampered, "telephony_configs/1"},
		{"unknown version", s, badVersion, "telephony_configs/1"},
		{"truncated", s, sealed[:20], "telephony_configs/1"},
		{"empty", s, nil, "telephony_configs/1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if out, err := tt.sealer.Open(tt.value, tt.ad); err == nil {
				t.Fatalf("open succeeded: %q", out)
			}
		})
	}
	for _, n := range []int{0, 16, 31, 33, 64} {
		if _, err := store.NewSealer(make([]byte, n)); err == nil {
			t.Errorf("NewSealer accepted a %d-byte key", n)
		}
	}
}

func TestDerive(t *testing.T) {
	key := newKey(t)
	s1, _ := store.NewSealer(key)
	s2, _ := store.NewSealer(key)
	a, b := s1.Derive("webhooks"), s1.Derive("objstore")
	if len(a) != 32 || bytes.Equal(a, b) || bytes.Equal(a, key) {
		t.Fatalf("derived keys: %x %x", a, b)
	}
	if !bytes.Equal(a, s2.Derive("webhooks")) {
		t.Fatal("Derive is not deterministic")
	}
}

func TestSecretNeverPrints(t *testing.T) {
	s := store.Secret("hunter2-secret")
	for _, got := range []string{fmt.Sprint(s), fmt.Sprintf("%v %s", s, s), s.String(), s.LogValue().String()} {
		if strings.Contains(got, "hunter2") {
			t.Fatalf("printed %q", got)
		}
	}
	if s.Reveal() != "hunter2-secret" {
		t.Fatalf("Reveal = %q", s.Reveal())
	}
	c := store.Credentials{"auth_token": "hunter2-token", "account_sid": "AC1"}
	if got := c.LogValue().String(); strings.Contains(got, "hunter2") || !strings.Contains(got, "auth_token") {
		t.Fatalf("Credentials.LogValue = %q", got)
	}
}

func TestLoadOrCreateKey(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "secret.key")
	k1, err := store.LoadOrCreateKey("", path)
	if err != nil {
		t.Fatal(err)
	}
	if len(k1) != store.KeySize {
		t.Fatalf("key length = %d", len(k1))
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("secret.key mode = %v, want 0600", st.Mode().Perm())
	}
	k2, err := store.LoadOrCreateKey("", path)
	if err != nil || !bytes.Equal(k1, k2) {
		t.Fatalf("second load = %x, %v; want the same key", k2, err)
	}
	envKey := bytes.Repeat([]byte{9}, 32)
	tests := []struct {
		name, env string
		want      []byte
		wantErr   bool
	}{
		{"env std base64", "CQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQk=", envKey, false},
		{"env url base64 unpadded", "CQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQk", envKey, false},
		{"env with spaces", "  CQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQk=\n", envKey, false},
		{"env too short", "CQkJCQ==", nil, true},
		{"env not base64", "not base64 at all!", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := store.LoadOrCreateKey(tt.env, path)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("accepted %q", tt.env)
				}
				if strings.Contains(err.Error(), tt.env) {
					t.Errorf("error echoes the key: %v", err)
				}
				return
			}
			if err != nil || !bytes.Equal(got, tt.want) {
				t.Fatalf("got %x, %v", got, err)
			}
		})
	}
	bad := filepath.Join(dir, "bad.key")
	if err := os.WriteFile(bad, []byte("short"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := store.LoadOrCreateKey("", bad); err == nil {
		t.Fatal("accepted a malformed key file")
	}
}

// SQLite-specific: reads PRAGMA user_version.
func TestMigrationsIdempotent(t *testing.T) {
	ctx := context.Background()
	db := newSQLiteDB(t)
	org := newOrg(t, db.DB, "org")
	cfgs, _ := secretConfigs(t)
	c, err := db.CreateTelephonyConfig(ctx, org, cfgs[4])
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	var version int
	for i := range 3 {
		again := openDB(t, db.path, db.key)
		got, err := again.GetTelephonyConfig(ctx, org, c.ID)
		if err != nil || got.Credentials.String("auth_token") != "SECRET-twilio-token-55" {
			t.Fatalf("reopen %d: %v", i, err)
		}
		if err := again.Close(); err != nil {
			t.Fatal(err)
		}
		raw := rawDB(t, db.path)
		var v int
		if err := raw.QueryRow("PRAGMA user_version").Scan(&v); err != nil {
			t.Fatal(err)
		}
		raw.Close()
		if i > 0 && v != version {
			t.Fatalf("user_version changed from %d to %d on reopen", version, v)
		}
		version = v
	}
	if version < 1 {
		t.Fatalf("user_version = %d, want the migration count", version)
	}
}

func TestErrors(t *testing.T) {
	e := store.Errorf(store.ECONFLICT, "name %q taken", "x")
	wrapped := fmt.Errorf("create: %w", e)
	if store.ErrorCode(wrapped) != store.ECONFLICT || store.ErrorMessage(wrapped) != `name "x" taken` {
		t.Fatalf("code %q message %q", store.ErrorCode(wrapped), store.ErrorMessage(wrapped))
	}
	if store.ErrorCode(errors.New("x")) != "" || store.ErrorMessage(nil) != "" {
		t.Fatal("plain errors have a code")
	}
}

func TestNowIsInjected(t *testing.T) {
	ctx := context.Background()
	db := newDB(t)
	at := time.Date(2026, 11, 21, 19, 4, 35, 123456789, time.UTC)
	db.Now = func() time.Time { return at }
	k, _, err := db.CreateAPIKey(ctx, "org", "", store.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	if !k.CreatedAt.Equal(at.Truncate(time.Millisecond)) || k.CreatedAt.Location() != time.UTC {
		t.Fatalf("created_at = %v, want %v", k.CreatedAt, at.Truncate(time.Millisecond))
	}
	c, err := db.CreateTelephonyConfig(ctx, k.OrganizationID, store.TelephonyConfig{Name: "n", Provider: "twilio", Credentials: store.Credentials{}})
	if err != nil {
		t.Fatal(err)
	}
	if !c.CreatedAt.Equal(at.Truncate(time.Millisecond)) || !c.UpdatedAt.Equal(c.CreatedAt) {
		t.Fatalf("times = %v %v", c.CreatedAt, c.UpdatedAt)
	}
	later := at.Add(time.Hour)
	db.Now = func() time.Time { return later }
	u, err := db.UpdateTelephonyConfig(ctx, k.OrganizationID, c.ID, func(*store.TelephonyConfig) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if !u.CreatedAt.Equal(c.CreatedAt) || !u.UpdatedAt.Equal(later.Truncate(time.Millisecond)) {
		t.Fatalf("after update: %v %v", u.CreatedAt, u.UpdatedAt)
	}
}
