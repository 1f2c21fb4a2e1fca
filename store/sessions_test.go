package store_test

import (
	"context"
	"crypto/sha256"
	"strings"
	"testing"
	"time"

	"github.com/outdial/outdial/store"
)

// sessionClock is a settable clock for the store's sessions.
type sessionClock struct{ t time.Time }

func (c *sessionClock) now() time.Time          { return c.t }
func (c *sessionClock) advance(d time.Duration) { c.t = c.t.Add(d) }

// newSessionDB returns a database on a settable clock with one key.
func newSessionDB(t *testing.T) (*testDB, *sessionClock, store.Principal, string) {
	t.Helper()
	db := newDB(t)
	clock := &sessionClock{t: time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)}
	db.Now = clock.now
	k, key, err := db.CreateAPIKey(context.Background(), "acme", "console", store.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	return db, clock, store.Principal{APIKeyID: k.ID, OrganizationID: k.OrganizationID}, key.Reveal()
}

func TestSessionIdleExpiry(t *testing.T) {
	ctx := context.Background()
	db, clock, p, _ := newSessionDB(t)
	token, s, err := db.CreateSession(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if s.APIKeyID != p.APIKeyID || s.OrganizationID != p.OrganizationID || s.SessionID == 0 || len(s.CSRFToken) != 43 || len(token) != 43 || s.CSRFToken == token {
		t.Fatalf("session = %+v, token %q", s, token)
	}
	if want := clock.t.Add(store.SessionIdleTimeout); !s.ExpiresAt.Equal(want) {
		t.Fatalf("expires at %v, want %v", s.ExpiresAt, want)
	}
	// Used every 11 hours, the session lives past its first 12.
	for range 3 {
		clock.advance(11 * time.Hour)
		got, err := db.Session(ctx, token)
		if err != nil {
			t.Fatalf("after 11 h idle: %v", err)
		}
		if got.Principal != s.Principal || got.CSRFToken != s.CSRFToken {
			t.Fatalf("session = %+v, want %+v", got, s)
		}
		if want := clock.t.Add(store.SessionIdleTimeout); !got.ExpiresAt.Equal(want) {
			t.Fatalf("expires at %v, want %v (moved on use)", got.ExpiresAt, want)
		}
	}
	// 12 hours idle: gone.
	clock.advance(store.SessionIdleTimeout)
	if _, err := db.Session(ctx, token); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("after 12 h idle: err = %v, want ENOTFOUND", err)
	}
}

func TestSessionTouchAtMostOncePerMinute(t *testing.T) {
	ctx := context.Background()
	db, clock, p, _ := newSessionDB(t)
	token, s, err := db.CreateSession(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	clock.advance(30 * time.Second)
	got, err := db.Session(ctx, token)
	if err != nil {
		t.Fatal(err)
	}
	if !got.ExpiresAt.Equal(s.ExpiresAt) {
		t.Fatalf("expiry moved after 30 s: %v, want %v (no write within a minute)", got.ExpiresAt, s.ExpiresAt)
	}
	clock.advance(31 * time.Second)
	got, err = db.Session(ctx, token)
	if err != nil {
		t.Fatal(err)
	}
	if want := clock.t.Add(store.SessionIdleTimeout); !got.ExpiresAt.Equal(want) {
		t.Fatalf("expiry after 61 s = %v, want %v", got.ExpiresAt, want)
	}
	var lastSeen int64
	if err := rawDB(t, db.path).QueryRow("SELECT last_seen_at FROM console_sessions").Scan(&lastSeen); err != nil {
		t.Fatal(err)
	}
	if lastSeen != clock.t.UnixMilli() {
		t.Fatalf("last_seen_at = %d, want %d", lastSeen, clock.t.UnixMilli())
	}
}

func TestSessionEnds(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name string
		end  func(t *testing.T, db *testDB, p store.Principal, token string)
	}{
		{"sign-out", func(t *testing.T, db *testDB, _ store.Principal, token string) {
			if err := db.DeleteSession(ctx, token); err != nil {
				t.Fatal(err)
			}
			if err := db.DeleteSession(ctx, token); err != nil {
				t.Fatalf("second sign-out: %v", err)
			}
		}},
		{"key revoked", func(t *testing.T, db *testDB, p store.Principal, _ string) {
			if err := db.RevokeAPIKey(ctx, p.APIKeyID); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			db, _, p, _ := newSessionDB(t)
			token, _, err := db.CreateSession(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			other, _, err := db.CreateSession(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			tc.end(t, db, p, token)
			if _, err := db.Session(ctx, token); store.ErrorCode(err) != store.ENOTFOUND {
				t.Fatalf("err = %v, want ENOTFOUND", err)
			}
			_, err = db.Session(ctx, other)
			if revoked := tc.name == "key revoked"; revoked != (store.ErrorCode(err) == store.ENOTFOUND) {
				t.Fatalf("the other session of the key: err = %v (revoked: %v)", err, revoked)
			}
		})
	}
}

func TestSessionUnknownTokens(t *testing.T) {
	ctx := context.Background()
	db, _, p, key := newSessionDB(t)
	token, _, err := db.CreateSession(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", "x", key, token + "x", strings.ToUpper(token)} {
		if _, err := db.Session(ctx, bad); store.ErrorCode(err) != store.ENOTFOUND {
			t.Errorf("session %q: err = %v, want ENOTFOUND", bad, err)
		}
		if _, _, err := db.RedeemSignInLink(ctx, bad); store.ErrorCode(err) != store.ENOTFOUND {
			t.Errorf("redeem %q: err = %v, want ENOTFOUND", bad, err)
		}
	}
}

func TestSessionTokensStoredHashed(t *testing.T) {
	ctx := context.Background()
	db, _, p, _ := newSessionDB(t)
	token, _, err := db.CreateSession(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	link, err := db.CreateSignInLink(ctx, p, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	raw := rawDB(t, db.path)
	for _, q := range []struct{ query, token string }{
		{"SELECT token_hash FROM console_sessions", token},
		{"SELECT token_hash FROM console_sign_in_links", link},
	} {
		var hash []byte
		if err := raw.QueryRow(q.query).Scan(&hash); err != nil {
			t.Fatal(err)
		}
		if sum := sha256.Sum256([]byte(q.token)); string(hash) != string(sum[:]) {
			t.Errorf("%s: stored %x, want the token's SHA-256", q.query, hash)
		}
	}
}

func TestSignInLink(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name    string
		prepare func(t *testing.T, db *testDB, clock *sessionClock, p store.Principal)
		works   bool
	}{
		{"fresh", func(*testing.T, *testDB, *sessionClock, store.Principal) {}, true},
		{"just before expiry", func(_ *testing.T, _ *testDB, c *sessionClock, _ store.Principal) {
			c.advance(time.Hour - time.Millisecond)
		}, true},
		{"expired", func(_ *testing.T, _ *testDB, c *sessionClock, _ store.Principal) { c.advance(time.Hour) }, false},
		{"key revoked", func(t *testing.T, db *testDB, _ *sessionClock, p store.Principal) {
			if err := db.RevokeAPIKey(ctx, p.APIKeyID); err != nil {
				t.Fatal(err)
			}
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			db, clock, p, _ := newSessionDB(t)
			link, err := db.CreateSignInLink(ctx, p, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			tc.prepare(t, db, clock, p)
			token, s, err := db.RedeemSignInLink(ctx, link)
			if !tc.works {
				if store.ErrorCode(err) != store.ENOTFOUND {
					t.Fatalf("redeem: err = %v, want ENOTFOUND", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("redeem: %v", err)
			}
			got, err := db.Session(ctx, token)
			if err != nil || got.Principal != s.Principal || got.APIKeyID != p.APIKeyID || got.OrganizationID != p.OrganizationID ||
				got.SessionID == 0 || got.CSRFToken != s.CSRFToken {
				t.Fatalf("session of the link = %+v, %v; want %+v", got, err, s)
			}
			// Once only.
			if _, _, err := db.RedeemSignInLink(ctx, link); store.ErrorCode(err) != store.ENOTFOUND {
				t.Fatalf("second redeem: err = %v, want ENOTFOUND", err)
			}
		})
	}
	db, _, p, _ := newSessionDB(t)
	for _, ttl := range []time.Duration{0, -time.Second} {
		if _, err := db.CreateSignInLink(ctx, p, ttl); store.ErrorCode(err) != store.EINVALID {
			t.Errorf("ttl %v: err = %v, want EINVALID", ttl, err)
		}
	}
}

func TestSessionSweep(t *testing.T) {
	ctx := context.Background()
	db, clock, p, _ := newSessionDB(t)
	if _, _, err := db.CreateSession(ctx, p); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateSignInLink(ctx, p, time.Minute); err != nil {
		t.Fatal(err)
	}
	clock.advance(store.SessionIdleTimeout)
	if _, _, err := db.CreateSession(ctx, p); err != nil {
		t.Fatal(err)
	}
	raw := rawDB(t, db.path)
	for table, want := range map[string]int{"console_sessions": 1, "console_sign_in_links": 0} {
		var n int
		if err := raw.QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != want {
			t.Errorf("%s holds %d rows after the sweep, want %d", table, n, want)
		}
	}
}
