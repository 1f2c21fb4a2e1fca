package store_test

import (
	"context"
	"crypto/sha256"
	"regexp"
	"strings"
	"testing"

	"github.com/outdial/outdial/store"
)

var apiKeyRe = regexp.MustCompile(`^odk_[A-Za-z0-9_-]{43}$`)

func TestAPIKeys(t *testing.T) {
	ctx := context.Background()
	db := newDB(t)
	k1, s1, err := db.CreateAPIKey(ctx, "  acme  ", "ci", store.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	if !apiKeyRe.MatchString(s1.Reveal()) {
		t.Fatalf("key %q does not match %s", s1.Reveal(), apiKeyRe)
	}
	if k1.OrganizationName != "acme" || k1.Name != "ci" || !strings.HasPrefix(s1.Reveal(), k1.Prefix) || len(k1.Prefix) != 10 {
		t.Fatalf("record = %+v", k1)
	}
	// Same organization on second use; a new organization otherwise.
	k2, s2, err := db.CreateAPIKey(ctx, "acme", "", store.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	k3, s3, err := db.CreateAPIKey(ctx, "other", "", store.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	if k2.OrganizationID != k1.OrganizationID || k3.OrganizationID == k1.OrganizationID {
		t.Fatalf("organizations %d %d %d", k1.OrganizationID, k2.OrganizationID, k3.OrganizationID)
	}
	if s1.Reveal() == s2.Reveal() {
		t.Fatal("two keys are equal")
	}
	for _, tc := range []struct {
		key     store.Secret
		keyID   int64
		orgID   int64
		comment string
	}{{s1, k1.ID, k1.OrganizationID, "k1"}, {s2, k2.ID, k1.OrganizationID, "k2"}, {s3, k3.ID, k3.OrganizationID, "k3"}} {
		p, err := db.Authenticate(ctx, tc.key.Reveal())
		if err != nil || p.APIKeyID != tc.keyID || p.OrganizationID != tc.orgID {
			t.Fatalf("%s: authenticate = %+v, %v", tc.comment, p, err)
		}
	}
	for _, bad := range []string{"", "odk_", "nonsense", strings.ToUpper(s1.Reveal()), s1.Reveal() + "x", s1.Reveal()[:len(s1.Reveal())-1],
		"xdk_" + s1.Reveal()[4:]} {
		if _, err := db.Authenticate(ctx, bad); store.ErrorCode(err) != store.ENOTFOUND {
			t.Errorf("authenticate %q: err = %v, want ENOTFOUND", bad, err)
		}
	}
	list, err := db.ListAPIKeys(ctx)
	if err != nil || len(list) != 3 {
		t.Fatalf("list = %d, %v", len(list), err)
	}
	if list[0].ID != k1.ID || list[0].OrganizationName != "acme" || list[2].OrganizationName != "other" || list[0].RevokedAt != nil {
		t.Fatalf("list = %+v", list)
	}

	if err := db.RevokeAPIKey(ctx, k1.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Authenticate(ctx, s1.Reveal()); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("revoked key authenticates: %v", err)
	}
	if _, err := db.Authenticate(ctx, s2.Reveal()); err != nil {
		t.Fatalf("the other key of the organization stopped working: %v", err)
	}
	if err := db.RevokeAPIKey(ctx, k1.ID); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("revoke twice: %v, want ENOTFOUND", err)
	}
	if err := db.RevokeAPIKey(ctx, 999); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("revoke unknown: %v, want ENOTFOUND", err)
	}
	list, _ = db.ListAPIKeys(ctx)
	if list[0].RevokedAt == nil || list[1].RevokedAt != nil {
		t.Fatalf("revoked_at = %v %v", list[0].RevokedAt, list[1].RevokedAt)
	}

	for _, org := range []string{"", "   "} {
		if _, _, err := db.CreateAPIKey(ctx, org, "", store.RoleAdmin); store.ErrorCode(err) != store.EINVALID {
			t.Errorf("org %q: err = %v, want EINVALID", org, err)
		}
	}

	// Only the hash is stored.
	raw := rawDB(t, db.path)
	var hash []byte
	if err := raw.QueryRow("SELECT key_hash FROM api_keys WHERE id = $1", k2.ID).Scan(&hash); err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256([]byte(s2.Reveal())); string(hash) != string(sum[:]) {
		t.Fatalf("key_hash is not the SHA-256 of the key")
	}
}

// TestAPIKeyNamesRefuseControlCharacters: an organization or key name
// with NUL, a line break or another control character, a bidirectional
// override or an invisible formatting character is EINVALID and creates
// nothing.
func TestAPIKeyNamesRefuseControlCharacters(t *testing.T) {
	ctx := context.Background()
	db := newDB(t)
	for _, tt := range []struct{ org, name string }{
		{"acme\x00", ""}, {"ac\nme", ""}, {"acme", "ci\x00"}, {"acme", "ci\r\nX-Injected: 1"}, {"acme", "bell\x07"}, {"acme", "c1\u0085"},
		{"acme\u202Eevil", ""}, {"\u2066acme\u2069", ""}, {"ac\u200Bme", ""}, {"\uFEFFacme", ""},
		{"acme", "ci\u202E"}, {"acme", "ci\u200F"}, {"acme", "ci\u061C"}, {"acme", "ci\u2028"},
	} {
		if _, _, err := db.CreateAPIKey(ctx, tt.org, tt.name, store.RoleAdmin); store.ErrorCode(err) != store.EINVALID {
			t.Errorf("CreateAPIKey(%q, %q) = %v, want EINVALID", tt.org, tt.name, err)
		}
	}
	keys, err := db.ListAPIKeys(ctx)
	if err != nil || len(keys) != 0 {
		t.Fatalf("keys after refused creates = %v, %v; want none", keys, err)
	}
	// Other Unicode is fine.
	if _, _, err := db.CreateAPIKey(ctx, "Café 東京", "ключ 🔑 👩\u200D💻 می\u200Cخواهم", store.RoleAdmin); err != nil {
		t.Fatalf("CreateAPIKey with Unicode names: %v", err)
	}
}
