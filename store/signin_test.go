package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/outdial/outdial/store"
)

func TestPasswordLink(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name     string
		after    time.Duration
		use      bool // set a password through it first
		openCode string
	}{
		{"fresh", 0, false, ""},
		{"just before 24 h", store.PasswordLinkTTL - time.Millisecond, false, ""},
		{"at 24 h", store.PasswordLinkTTL, false, store.EGONE},
		{"a week later", 7 * 24 * time.Hour, false, store.EGONE},
		{"used", 0, true, store.EGONE},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db, clock, p, _ := newSessionDB(t)
			u, token, err := db.CreateUser(ctx, p.OrganizationID, "ada@example.com", store.RoleAdmin)
			if err != nil {
				t.Fatal(err)
			}
			if tt.use {
				if _, err := db.SetPasswordWithLink(ctx, token, testHash); err != nil {
					t.Fatal(err)
				}
			}
			clock.advance(tt.after)
			got, err := db.PasswordLinkUser(ctx, token)
			if store.ErrorCode(err) != tt.openCode {
				t.Fatalf("open link: %v, want code %q", err, tt.openCode)
			}
			if tt.openCode == "" && got.ID != u.ID {
				t.Fatalf("link's user = %+v", got)
			}
			_, err = db.SetPasswordWithLink(ctx, token, testHash)
			if store.ErrorCode(err) != tt.openCode {
				t.Fatalf("set password: %v, want code %q", err, tt.openCode)
			}
			if tt.openCode != "" {
				return
			}
			su, err := db.UserForSignIn(ctx, "ADA@example.com")
			if err != nil || su.PasswordHash != testHash || !su.HasPassword {
				t.Fatalf("after set: %+v, %v", su, err)
			}
			// Opened again after use, it no longer works.
			if _, err := db.PasswordLinkUser(ctx, token); store.ErrorCode(err) != store.EGONE {
				t.Fatalf("reopen: %v", err)
			}
		})
	}
	db, _, p, _ := newSessionDB(t)
	if _, err := db.PasswordLinkUser(ctx, "no-such-token"); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("unknown link: %v", err)
	}
	u, token, err := db.CreateUser(ctx, p.OrganizationID, "bob@example.com", store.RoleViewer)
	if err != nil {
		t.Fatal(err)
	}
	// Not a hash: refused, and the link is not used up.
	if _, err := db.SetPasswordWithLink(ctx, token, "correct horse battery staple"); store.ErrorCode(err) != store.EINVALID {
		t.Fatalf("plain password: %v", err)
	}
	if _, err := db.PasswordLinkUser(ctx, token); err != nil {
		t.Fatalf("link after a refused password: %v", err)
	}
	// A new link for the same user; the user's deletion ends both.
	again, err := db.CreatePasswordLink(ctx, p.OrganizationID, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.DeleteUser(ctx, p.OrganizationID, u.ID); err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{token, again} {
		if _, err := db.PasswordLinkUser(ctx, tok); store.ErrorCode(err) != store.ENOTFOUND {
			t.Fatalf("link of a deleted user: %v", err)
		}
	}
	if err := db.SetPassword(ctx, u.ID, testHash); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("set password of a deleted user: %v", err)
	}
}

func TestSignInFailures(t *testing.T) {
	ctx := context.Background()
	db, clock, _, _ := newSessionDB(t)
	t0 := clock.t
	record := func(email, addr string, at time.Time) {
		t.Helper()
		if err := db.RecordSignInFailure(ctx, email, addr, at); err != nil {
			t.Fatal(err)
		}
	}
	record("Ada@Example.com", "192.0.2.1", t0)
	record("ada@example.com", "192.0.2.2", t0.Add(time.Minute))
	record("bob@example.com", "192.0.2.1", t0.Add(2*time.Minute))
	tests := []struct {
		name            string
		email, addr     string
		since           time.Time
		byEmail, byAddr int
	}{
		{"all", "ADA@example.com", "192.0.2.1", t0.Add(-time.Second), 2, 2},
		{"after the first", "ada@example.com", "192.0.2.1", t0, 1, 1},
		{"other address", "ada@example.com", "192.0.2.9", t0.Add(-time.Second), 2, 0},
		{"unknown email", "eve@example.com", "192.0.2.2", t0.Add(-time.Second), 0, 1},
	}
	for _, tt := range tests {
		e, a, err := db.SignInFailures(ctx, tt.email, tt.addr, tt.since)
		if err != nil || len(e) != tt.byEmail || len(a) != tt.byAddr {
			t.Errorf("%s: by email %v, by address %v, %v; want %d and %d", tt.name, e, a, err, tt.byEmail, tt.byAddr)
		}
	}
	e, _, _ := db.SignInFailures(ctx, "ada@example.com", "", t0.Add(-time.Second))
	if len(e) != 2 || !e[0].Equal(t0) || !e[1].Equal(t0.Add(time.Minute)) {
		t.Fatalf("times = %v, want oldest first", e)
	}
	// A failure 15 minutes after the first sweeps it.
	record("carol@example.com", "192.0.2.3", t0.Add(store.SignInFailureWindow))
	e, _, _ = db.SignInFailures(ctx, "ada@example.com", "", time.Time{})
	if len(e) != 1 {
		t.Fatalf("after the sweep: %v, want only the second", e)
	}
}

func TestSecondFactor(t *testing.T) {
	ctx := context.Background()
	db, clock, p, _ := newSessionDB(t)
	u, _, err := db.CreateUser(ctx, p.OrganizationID, "ada@example.com", store.RoleViewer)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.PendingTOTP(ctx, u.ID); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("no enrollment: %v", err)
	}
	const secret = "JBSWY3DPEHPK3PXP"
	if err := db.SetPendingTOTP(ctx, u.ID, secret); err != nil {
		t.Fatal(err)
	}
	if got, err := db.PendingTOTP(ctx, u.ID); err != nil || got.Reveal() != secret {
		t.Fatalf("pending = %v, %v", got, err)
	}
	if ok, err := db.UseTOTPStep(ctx, u.ID, 100); ok || err != nil {
		t.Fatalf("step accepted before enabling: %v, %v", ok, err)
	}
	codes := [][]byte{[]byte("h1"), []byte("h2")}
	if err := db.EnableTOTP(ctx, u.ID, secret, codes); err != nil {
		t.Fatal(err)
	}
	su, err := db.UserForSignIn(ctx, "ada@example.com")
	if err != nil || !su.TOTPEnabled || su.TOTPSecret.Reveal() != secret || su.TOTPLastStep != 0 || su.RequireTOTP {
		t.Fatalf("sign-in user = %+v, %v", su, err)
	}
	if _, err := db.PendingTOTP(ctx, u.ID); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("enrollment left after enabling: %v", err)
	}
	steps := []struct {
		step int64
		want bool
	}{{100, true}, {100, false}, {99, false}, {101, true}, {103, true}, {102, false}}
	for _, s := range steps {
		if ok, err := db.UseTOTPStep(ctx, u.ID, s.step); ok != s.want || err != nil {
			t.Fatalf("step %d: %v, %v; want %v", s.step, ok, err, s.want)
		}
	}
	for i, want := range []bool{true, false} {
		if ok, err := db.UseRecoveryCode(ctx, u.ID, []byte("h1")); ok != want || err != nil {
			t.Fatalf("recovery code, use %d: %v, %v", i+1, ok, err)
		}
	}
	if ok, _ := db.UseRecoveryCode(ctx, u.ID, []byte("never")); ok {
		t.Fatal("an unknown recovery code was accepted")
	}
	if n, err := db.RecoveryCodesLeft(ctx, u.ID); n != 1 || err != nil {
		t.Fatalf("codes left = %d, %v", n, err)
	}
	// The organization requires it: a user without it is told by its session.
	if _, after, err := db.SetOrganizationSecurity(ctx, p.OrganizationID, true); err != nil || !after.RequireTOTP {
		t.Fatalf("require: %+v, %v", after, err)
	}
	if err := db.DisableTOTP(ctx, u.ID); err != nil {
		t.Fatal(err)
	}
	if n, _ := db.RecoveryCodesLeft(ctx, u.ID); n != 0 {
		t.Fatalf("codes left after disabling = %d", n)
	}
	token, s, err := db.CreateSession(ctx, store.Principal{UserID: u.ID})
	if err != nil {
		t.Fatal(err)
	}
	if s, err = db.Session(ctx, token); err != nil || !s.TOTPRequired || s.SecondFactorPending {
		t.Fatalf("session = %+v, %v; want TOTPRequired", s, err)
	}
	// A pending session becomes a full one with a new token, once.
	pending, ps, err := db.CreatePendingSession(ctx, store.Principal{UserID: u.ID})
	if err != nil || !ps.SecondFactorPending {
		t.Fatalf("pending session = %+v, %v", ps, err)
	}
	if got, err := db.Session(ctx, pending); err != nil || !got.SecondFactorPending {
		t.Fatalf("pending lookup = %+v, %v", got, err)
	}
	clock.advance(time.Second)
	full, fs, err := db.CompleteSecondFactor(ctx, pending)
	if err != nil || full == pending || fs.SecondFactorPending || fs.UserID != u.ID || fs.Role != store.RoleViewer {
		t.Fatalf("completed = %+v, %v", fs, err)
	}
	if _, err := db.Session(ctx, pending); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("the pending token still works: %v", err)
	}
	if _, _, err := db.CompleteSecondFactor(ctx, pending); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("completed twice: %v", err)
	}
	if _, _, err := db.CreatePendingSession(ctx, p); store.ErrorCode(err) != store.EINVALID {
		t.Fatalf("a key's pending session: %v", err)
	}
	sec, err := db.OrganizationSecurity(ctx, p.OrganizationID)
	if err != nil || !sec.RequireTOTP {
		t.Fatalf("security = %+v, %v", sec, err)
	}
	if su, _ := db.UserForSignIn(ctx, "ada@example.com"); !su.RequireTOTP || su.TOTPEnabled {
		t.Fatalf("sign-in user = %+v", su)
	}
}

// TestRaceTOTPStep: the same code given at once on two nodes signs in once;
// so does a recovery code.
func TestRaceTOTPStep(t *testing.T) {
	ctx := context.Background()
	db, nodes := twoNodes(t)
	org := newOrg(t, db.DB, "acme")
	u, _, err := db.CreateUser(ctx, org, "ada@example.com", store.RoleViewer)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.EnableTOTP(ctx, u.ID, "JBSWY3DPEHPK3PXP", [][]byte{[]byte("r1")}); err != nil {
		t.Fatal(err)
	}
	for step := int64(1); step <= 5; step++ {
		const n = 8
		ok := make([]bool, n)
		rc := make([]bool, n)
		errs := make([]error, n)
		race(n, func(i int) {
			ok[i], errs[i] = nodes[i%2].UseTOTPStep(ctx, u.ID, step)
			if errs[i] == nil && step == 1 {
				rc[i], errs[i] = nodes[i%2].UseRecoveryCode(ctx, u.ID, []byte("r1"))
			}
		})
		accepted, codes := 0, 0
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("step %d, try %d: %v", step, i, errs[i])
			}
			if ok[i] {
				accepted++
			}
			if rc[i] {
				codes++
			}
		}
		if accepted != 1 {
			t.Fatalf("step %d accepted %d times, want once", step, accepted)
		}
		if step == 1 && codes != 1 {
			t.Fatalf("recovery code accepted %d times, want once", codes)
		}
	}
}
