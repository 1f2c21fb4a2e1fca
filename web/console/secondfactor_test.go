package console_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/outdial/outdial/store"
)

// A user with a second factor: the password leads to the code page, with
// a session good for nothing else (console pages and the API); a wrong
// code counts as a failure; the right one signs in, once.
func TestSecondFactorSignIn(t *testing.T) {
	e := newEnv(t)
	u, _ := e.withTOTP(e.newUser("ada@example.com", store.RoleViewer, goodPassword))
	b := e.browser()
	a := b.signInPassword(u.Email, u.password, "/console/campaigns")
	wantStatus(t, "password", a, http.StatusSeeOther)
	if got, want := a.header.Get("Location"), "/console/sign-in/code?next=%2Fconsole%2Fcampaigns"; got != want {
		t.Fatalf("Location = %q, want %q", got, want)
	}
	pending := b.cookie()
	if pending == "" {
		t.Fatal("no cookie for the waiting session")
	}
	// Waiting for the code: nothing else.
	if a := b.get("/console/campaigns"); a.status != http.StatusSeeOther || !strings.HasPrefix(a.header.Get("Location"), "/console/sign-in?") {
		t.Fatalf("a console page while the code is due: %d to %q, want the sign-in page", a.status, a.header.Get("Location"))
	}
	if a, _ := b.apiJSON(http.MethodGet, "/api/v1/campaign", nil); a.status != http.StatusUnauthorized {
		t.Fatalf("the API while the code is due: %d, want 401", a.status)
	}
	page := b.get("/console/sign-in")
	wantStatus(t, "sign-in page while the code is due", page, http.StatusOK)

	wrong := b.submitCode("000000", "/console/campaigns")
	if e.code(u.secret, 0) == "000000" {
		t.Skip("the current code is 000000")
	}
	wantStatus(t, "wrong code", wrong, http.StatusUnprocessableEntity)
	if !strings.Contains(wrong.body, "not right") || !strings.Contains(wrong.body, `name="code"`) {
		t.Fatalf("the wrong code's page: %s", wrong.body)
	}
	if n, _ := e.failures(u.Email); n != 1 {
		t.Fatalf("failures after a wrong code = %d, want 1", n)
	}

	code := e.code(u.secret, 0)
	a = b.submitCode(code, "/console/campaigns")
	wantStatus(t, "right code", a, http.StatusSeeOther)
	if got := a.header.Get("Location"); got != "/console/campaigns" {
		t.Fatalf("Location = %q after the code", got)
	}
	if b.cookie() == pending {
		t.Fatal("the session's token did not change with the second factor")
	}
	wantStatus(t, "campaigns", b.get("/console/campaigns"), http.StatusOK)
	if _, err := e.db.Session(context.Background(), pending); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("the waiting session still works: %v", err)
	}

	// The same code (same time step) does not sign in again; the next
	// step's does.
	c := e.browser()
	wantStatus(t, "password again", c.signInPassword(u.Email, u.password, ""), http.StatusSeeOther)
	wantStatus(t, "replayed code", c.submitCode(code, "/console/"), http.StatusUnprocessableEntity)
	e.clock.advance(30 * time.Second)
	if e.code(u.secret, 0) == code {
		t.Fatal("the next step has the same code")
	}
	// A code of the step before the one used is refused too.
	wantStatus(t, "an earlier step's code", c.submitCode(e.code(u.secret, -60*time.Second), "/console/"), http.StatusUnprocessableEntity)
	wantStatus(t, "the next step's code", c.submitCode(e.code(u.secret, 0), "/console/"), http.StatusSeeOther)
}

// The codes of one step either side of the current one work (a clock a
// little off), not two.
func TestSecondFactorSkew(t *testing.T) {
	e := newEnv(t)
	u, _ := e.withTOTP(e.newUser("ada@example.com", store.RoleViewer, goodPassword))
	b := e.browser()
	wantStatus(t, "password", b.signInPassword(u.Email, u.password, ""), http.StatusSeeOther)
	wantStatus(t, "two steps ahead", b.submitCode(e.code(u.secret, 60*time.Second), "/console/"), http.StatusUnprocessableEntity)
	wantStatus(t, "one step ahead", b.submitCode(e.code(u.secret, 30*time.Second), "/console/"), http.StatusSeeOther)
}

// A recovery code signs in in place of a TOTP code, once; typed in capitals
// or without its dash, it is the same code.
func TestRecoveryCodeOnce(t *testing.T) {
	e := newEnv(t)
	u, codes := e.withTOTP(e.newUser("ada@example.com", store.RoleViewer, goodPassword))
	b := e.browser()
	wantStatus(t, "password", b.signInPassword(u.Email, u.password, ""), http.StatusSeeOther)
	wantStatus(t, "recovery code", b.submitCode(" "+strings.ToUpper(codes[3])+" ", "/console/"), http.StatusSeeOther)
	wantStatus(t, "campaigns", b.get("/console/campaigns"), http.StatusOK)

	c := e.browser()
	wantStatus(t, "password again", c.signInPassword(u.Email, u.password, ""), http.StatusSeeOther)
	wantStatus(t, "the same recovery code", c.submitCode(strings.ReplaceAll(codes[3], "-", ""), "/console/"), http.StatusUnprocessableEntity)
	wantStatus(t, "another recovery code", c.submitCode(codes[4], "/console/"), http.StatusSeeOther)
	if n, err := e.db.RecoveryCodesLeft(context.Background(), u.ID); err != nil || n != 8 {
		t.Fatalf("recovery codes left = %d (%v), want 8", n, err)
	}
}

// Failed codes count towards the throttle of the email.
func TestSecondFactorThrottled(t *testing.T) {
	e := newEnv(t)
	u, _ := e.withTOTP(e.newUser("ada@example.com", store.RoleViewer, goodPassword))
	b := e.browser()
	wantStatus(t, "password", b.signInPassword(u.Email, u.password, ""), http.StatusSeeOther)
	for range 10 {
		wantStatus(t, "wrong code", b.submitCode("not-a-code", "/console/"), http.StatusUnprocessableEntity)
	}
	a := b.submitCode(e.code(u.secret, 0), "/console/")
	wantStatus(t, "right code after ten wrong ones", a, http.StatusTooManyRequests)
	if a.header.Get("Retry-After") != "900" {
		t.Errorf("Retry-After = %q, want 900", a.header.Get("Retry-After"))
	}
}
