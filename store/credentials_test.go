package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/outdial/outdial/store"
)

// LiveCredentials answers, for many credentials at once, which still
// authenticate: a key until it is revoked; a session until it is signed out,
// expires, or its key is revoked. Unknown ids are not live.
func TestLiveCredentials(t *testing.T) {
	ctx := context.Background()
	db, clock, p, _ := newSessionDB(t)
	k2, _, err := db.CreateAPIKey(ctx, "acme", "second", store.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	p2 := store.Principal{APIKeyID: k2.ID, OrganizationID: k2.OrganizationID}
	session := func(p store.Principal) (string, int64) {
		tok, s, err := db.CreateSession(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		return tok, s.SessionID
	}
	_, live := session(p)
	signedOut, signedOutID := session(p)
	_, ofRevoked := session(p2)
	if err := db.DeleteSession(ctx, signedOut); err != nil {
		t.Fatal(err)
	}
	if err := db.RevokeAPIKey(ctx, p2.APIKeyID); err != nil {
		t.Fatal(err)
	}
	keys, sessions, err := db.LiveCredentials(ctx, []int64{p.APIKeyID, p2.APIKeyID, 999}, []int64{live, signedOutID, ofRevoked, 999})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what string
		got  bool
		want bool
	}{
		{"active key", keys[p.APIKeyID], true},
		{"revoked key", keys[p2.APIKeyID], false},
		{"unknown key", keys[999], false},
		{"active session", sessions[live], true},
		{"signed-out session", sessions[signedOutID], false},
		{"session of a revoked key", sessions[ofRevoked], false},
		{"unknown session", sessions[999], false},
	} {
		if c.got != c.want {
			t.Errorf("%s: live = %v, want %v", c.what, c.got, c.want)
		}
	}
	// Idle past its timeout, a session is not live; its key still is.
	clock.advance(store.SessionIdleTimeout + time.Millisecond)
	keys, sessions, err = db.LiveCredentials(ctx, []int64{p.APIKeyID}, []int64{live})
	if err != nil || !keys[p.APIKeyID] || sessions[live] {
		t.Errorf("after the idle timeout: keys %v sessions %v (%v); want the key live, the session not", keys, sessions, err)
	}
	// Nothing asked, nothing read.
	if keys, sessions, err := db.LiveCredentials(ctx, nil, nil); err != nil || len(keys) != 0 || len(sessions) != 0 {
		t.Errorf("empty: %v %v %v", keys, sessions, err)
	}
}
