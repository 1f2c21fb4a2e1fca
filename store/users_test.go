package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/outdial/outdial/store"
)

const testHash = "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA"

func TestRoleOrder(t *testing.T) {
	tests := []struct {
		have, need store.Role
		want       bool
	}{
		{store.RoleViewer, store.RoleViewer, true},
		{store.RoleViewer, store.RoleOperator, false},
		{store.RoleViewer, store.RoleAdmin, false},
		{store.RoleOperator, store.RoleViewer, true},
		{store.RoleOperator, store.RoleOperator, true},
		{store.RoleOperator, store.RoleAdmin, false},
		{store.RoleAdmin, store.RoleViewer, true},
		{store.RoleAdmin, store.RoleOperator, true},
		{store.RoleAdmin, store.RoleAdmin, true},
		{"", store.RoleViewer, false},
		{"root", store.RoleViewer, false},
		{store.RoleAdmin, "root", false},
	}
	for _, tt := range tests {
		if got := tt.have.Allows(tt.need); got != tt.want {
			t.Errorf("%q.Allows(%q) = %v, want %v", tt.have, tt.need, got, tt.want)
		}
	}
	for _, s := range []string{"viewer", "operator", "admin"} {
		if r, ok := store.ParseRole(s); !ok || string(r) != s {
			t.Errorf("ParseRole(%q) = %q, %v", s, r, ok)
		}
	}
	for _, s := range []string{"", "Admin", "owner", " admin"} {
		if _, ok := store.ParseRole(s); ok {
			t.Errorf("ParseRole(%q) accepted", s)
		}
	}
}

func TestUserCreate(t *testing.T) {
	ctx := context.Background()
	db := newDB(t)
	acme := newOrg(t, db.DB, "acme")
	other := newOrg(t, db.DB, "other")
	u, token, err := db.CreateUser(ctx, acme, " Ada@Example.com ", store.RoleOperator)
	if err != nil {
		t.Fatal(err)
	}
	if u.ID == 0 || u.Email != "Ada@Example.com" || u.Role != store.RoleOperator || u.Disabled || u.HasPassword || u.TOTPEnabled || len(token) != 43 {
		t.Fatalf("user = %+v, token %q", u, token)
	}
	tests := []struct {
		name  string
		org   int64
		email string
		role  store.Role
		code  string
	}{
		{"same email", acme, "Ada@Example.com", store.RoleViewer, store.ECONFLICT},
		{"other case", acme, "ADA@EXAMPLE.COM", store.RoleViewer, store.ECONFLICT},
		{"other organization", other, "ada@example.com", store.RoleAdmin, store.ECONFLICT},
		{"no at", acme, "ada.example.com", store.RoleViewer, store.EINVALID},
		{"two ats", acme, "a@b@example.com", store.RoleViewer, store.EINVALID},
		{"empty local part", acme, "@example.com", store.RoleViewer, store.EINVALID},
		{"empty domain", acme, "ada@", store.RoleViewer, store.EINVALID},
		{"space", acme, "ada lovelace@example.com", store.RoleViewer, store.EINVALID},
		{"control", acme, "ada\x00@example.com", store.RoleViewer, store.EINVALID},
		{"too long", acme, string(make([]byte, 250)) + "@x.io", store.RoleViewer, store.EINVALID},
		{"empty", acme, "", store.RoleViewer, store.EINVALID},
		{"bad role", acme, "bob@example.com", "owner", store.EINVALID},
		{"unknown organization", 999, "bob@example.com", store.RoleViewer, store.ENOTFOUND},
	}
	for _, tt := range tests {
		if _, _, err := db.CreateUser(ctx, tt.org, tt.email, tt.role); store.ErrorCode(err) != tt.code {
			t.Errorf("%s: err = %v, want %s", tt.name, err, tt.code)
		}
	}
	// The CLI's form creates the organization on first use.
	v, _, err := db.CreateUserInOrg(ctx, "newco", "vic@example.com", store.RoleAdmin)
	if err != nil || v.OrganizationID == acme || v.OrganizationID == other {
		t.Fatalf("user in new organization = %+v, %v", v, err)
	}
	list, err := db.ListUsers(ctx, acme)
	if err != nil || len(list) != 1 || list[0] != u {
		t.Fatalf("users of acme = %+v, %v", list, err)
	}
	if _, err := db.GetUser(ctx, other, u.ID); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("user of another organization: %v", err)
	}
}

func TestUserUpdateDelete(t *testing.T) {
	ctx := context.Background()
	db, clock, _, _ := newSessionDB(t)
	acme := newOrg(t, db.DB, "acme")
	other := newOrg(t, db.DB, "other")
	u, _, err := db.CreateUser(ctx, acme, "ada@example.com", store.RoleViewer)
	if err != nil {
		t.Fatal(err)
	}
	signIn := func() string {
		t.Helper()
		token, s, err := db.CreateSession(ctx, store.Principal{UserID: u.ID})
		if err != nil || s.Role == "" || s.UserID != u.ID || s.OrganizationID != acme || s.ActorName != "ada@example.com" {
			t.Fatalf("session = %+v, %v", s, err)
		}
		return token
	}
	token := signIn()
	admin, operator, yes, no := store.RoleAdmin, store.RoleOperator, true, false
	bogus := store.Role("root")
	if _, _, err := db.UpdateUser(ctx, other, u.ID, &admin, nil); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("update in another organization: %v", err)
	}
	if _, _, err := db.UpdateUser(ctx, acme, u.ID, &bogus, nil); store.ErrorCode(err) != store.EINVALID {
		t.Fatalf("update to a bad role: %v", err)
	}
	clock.advance(time.Second)
	before, after, err := db.UpdateUser(ctx, acme, u.ID, &operator, nil)
	if err != nil || before.Role != store.RoleViewer || after.Role != store.RoleOperator || after.Disabled || !after.UpdatedAt.After(before.UpdatedAt) {
		t.Fatalf("role change: before %+v after %+v, %v", before, after, err)
	}
	// The session's role follows at once.
	s, err := db.Session(ctx, token)
	if err != nil || s.Role != store.RoleOperator {
		t.Fatalf("session after role change = %+v, %v", s, err)
	}
	// Disabling ends the session and its streams' check.
	before, after, err = db.UpdateUser(ctx, acme, u.ID, nil, &yes)
	if err != nil || before.Disabled || !after.Disabled || after.Role != store.RoleOperator {
		t.Fatalf("disable: before %+v after %+v, %v", before, after, err)
	}
	if _, err := db.Session(ctx, token); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("session of a disabled user: %v", err)
	}
	if _, _, err := db.UpdateUser(ctx, acme, u.ID, nil, &no); err != nil {
		t.Fatal(err)
	}
	token = signIn()
	_, live, err := db.LiveCredentials(ctx, nil, []int64{sessionID(t, db.DB, token)})
	if err != nil || len(live) != 1 {
		t.Fatalf("live sessions = %v, %v", live, err)
	}
	id := sessionID(t, db.DB, token)
	if _, err := db.DeleteUser(ctx, other, u.ID); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("delete in another organization: %v", err)
	}
	gone, err := db.DeleteUser(ctx, acme, u.ID)
	if err != nil || gone.ID != u.ID {
		t.Fatalf("delete = %+v, %v", gone, err)
	}
	if _, err := db.Session(ctx, token); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("session of a deleted user: %v", err)
	}
	if _, live, _ := db.LiveCredentials(ctx, nil, []int64{id}); live[id] {
		t.Fatal("a deleted user's session is live")
	}
	if _, err := db.UserForSignIn(ctx, "ada@example.com"); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("sign-in of a deleted user: %v", err)
	}
	if _, err := db.DeleteUser(ctx, acme, u.ID); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("delete again: %v", err)
	}
	// The email is free again.
	if _, _, err := db.CreateUser(ctx, other, "ADA@example.com", store.RoleAdmin); err != nil {
		t.Fatalf("reuse a deleted user's email: %v", err)
	}
}

// sessionID returns the id of the session of token.
func sessionID(t *testing.T, db *store.DB, token string) int64 {
	t.Helper()
	s, err := db.Session(context.Background(), token)
	if err != nil {
		t.Fatal(err)
	}
	return s.SessionID
}

func TestKeyRevokeEndsSessions(t *testing.T) {
	ctx := context.Background()
	db, _, p, key := newSessionDB(t)
	other := newOrg(t, db.DB, "other")
	token, s, err := db.CreateSession(ctx, p)
	if err != nil || s.Role != store.RoleAdmin || s.ActorName != "console" {
		t.Fatalf("key session = %+v, %v", s, err)
	}
	if err := db.RevokeOrgAPIKey(ctx, other, p.APIKeyID); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("revoke from another organization: %v", err)
	}
	if err := db.RevokeOrgAPIKey(ctx, p.OrganizationID, p.APIKeyID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Session(ctx, token); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("session of a revoked key: %v", err)
	}
	if keys, sessions, _ := db.LiveCredentials(ctx, []int64{p.APIKeyID}, []int64{s.SessionID}); keys[p.APIKeyID] || sessions[s.SessionID] {
		t.Fatalf("live after revoke: keys %v sessions %v", keys, sessions)
	}
	if _, err := db.Authenticate(ctx, key); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("revoked key authenticates: %v", err)
	}
	if err := db.RevokeOrgAPIKey(ctx, p.OrganizationID, p.APIKeyID); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("revoke again: %v", err)
	}
}

func TestOrgAPIKeys(t *testing.T) {
	ctx := context.Background()
	db, clock, p, key := newSessionDB(t)
	v, vkey, err := db.CreateOrgAPIKey(ctx, p.OrganizationID, "dashboard", store.RoleViewer)
	if err != nil || v.Role != store.RoleViewer || v.LastUsedAt != nil {
		t.Fatalf("viewer key = %+v, %v", v, err)
	}
	if _, _, err := db.CreateOrgAPIKey(ctx, p.OrganizationID, "x", "root"); store.ErrorCode(err) != store.EINVALID {
		t.Fatalf("bad role: %v", err)
	}
	if _, _, err := db.CreateOrgAPIKey(ctx, 999, "x", store.RoleViewer); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("unknown organization: %v", err)
	}
	got, err := db.Authenticate(ctx, vkey.Reveal())
	if err != nil || got.Role != store.RoleViewer || got.ActorName != "dashboard" || got.UserID != 0 {
		t.Fatalf("viewer principal = %+v, %v", got, err)
	}
	first := clock.t
	// Used again within the minute: last_used_at stays; after it, moves.
	clock.advance(30 * time.Second)
	if _, err := db.Authenticate(ctx, vkey.Reveal()); err != nil {
		t.Fatal(err)
	}
	lastUsed := func() *time.Time {
		t.Helper()
		keys, err := db.ListOrgAPIKeys(ctx, p.OrganizationID)
		if err != nil || len(keys) != 2 || keys[0].ID != p.APIKeyID || keys[1].ID != v.ID {
			t.Fatalf("keys = %+v, %v", keys, err)
		}
		return keys[1].LastUsedAt
	}
	if lu := lastUsed(); lu == nil || !lu.Equal(first) {
		t.Fatalf("last used = %v, want %v", lu, first)
	}
	clock.advance(31 * time.Second)
	if _, err := db.Authenticate(ctx, vkey.Reveal()); err != nil {
		t.Fatal(err)
	}
	if lu := lastUsed(); lu == nil || !lu.Equal(clock.t) {
		t.Fatalf("last used = %v, want %v", lu, clock.t)
	}
	if a, err := db.Authenticate(ctx, key); err != nil || a.Role != store.RoleAdmin {
		t.Fatalf("default key = %+v, %v", a, err)
	}
}
