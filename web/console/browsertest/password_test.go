package browsertest_test

// Signing in with an email and password, in a real browser: a password
// set through the link `outdial user create` prints, a wrong password,
// and the second factor's code page.

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/web"
	"github.com/outdial/outdial/web/auth"
)

// setPasswordPath is the page of a set-password link.
const setPasswordPath = web.SetPasswordPath

const browserPassword = "seven quiet herons over the bay"

// newPerson creates a user of o and returns its email and its
// set-password link's path.
func (o *org) newPerson(role store.Role) (string, string) {
	o.t.Helper()
	email := "person-" + strings.ToLower(notName.ReplaceAllString(o.name, "-")) + "@example.com"
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	_, token, err := srv.db.CreateUserInOrg(ctx, o.name, email, role)
	if err != nil {
		o.t.Fatalf("create user: %v", err)
	}
	return email, setPasswordPath + "?token=" + url.QueryEscape(token)
}

// A new user sets a password through the link, signs in with it, and is
// refused with a wrong one.
func TestPasswordSignIn(t *testing.T) {
	o := newOrg(t)
	email, link := o.newPerson(store.RoleOperator)
	tb := newTab(t)
	tb.goTo(link)
	tb.waitText("main", email)
	tb.fill("New password", browserPassword)
	tb.fill("New password again", browserPassword)
	tb.clickButton("Set password")
	tb.waitPath(signInPath)
	tb.waitText(`[role="status"]`, "Your password is set")

	tb.fill("Email", email)
	tb.fill("Password", "not the password at all, sorry")
	tb.clickButton("Sign in")
	tb.waitText(`[role="alert"]`, "do not match an account")
	for _, p := range tb.takeProblems() {
		if !strings.Contains(p, "422") {
			t.Errorf("the page reported an error: %s", p)
		}
	}

	tb.fill("Email", email)
	tb.fill("Password", browserPassword)
	tb.clickButton("Sign in")
	tb.waitPath(consoleHome)
	tb.waitText("main h1", "Campaigns")
	tb.clickButton("Account")
	tb.waitPath("/console/account")
	tb.waitText("main", email)
	tb.waitText("main", "role operator")

	// The link is used up.
	tb.goTo(link)
	tb.waitText(`[role="alert"]`, "no longer works")
	tb.takeProblems() // the 410
}

// With a second factor, the password leads to the code page, and the code
// to the console.
func TestPasswordSignInWithCode(t *testing.T) {
	o := newOrg(t)
	email, _ := o.newPerson(store.RoleViewer)
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	su, err := srv.db.UserForSignIn(ctx, email)
	if err != nil {
		t.Fatal(err)
	}
	hash, err := auth.HashPassword(browserPassword)
	if err != nil {
		t.Fatal(err)
	}
	secret, _, err := auth.NewTOTPKey(email)
	if err != nil {
		t.Fatal(err)
	}
	_, hashes := auth.NewRecoveryCodes()
	if err := srv.db.SetPassword(ctx, su.ID, hash); err != nil {
		t.Fatal(err)
	}
	if err := srv.db.EnableTOTP(ctx, su.ID, secret, hashes); err != nil {
		t.Fatal(err)
	}

	tb := newTab(t)
	tb.goTo(campaignsPath)
	tb.waitPath(signInPath)
	tb.fill("Email", email)
	tb.fill("Password", browserPassword)
	tb.clickButton("Sign in")
	tb.waitPath("/console/sign-in/code")
	code, err := totp.GenerateCode(secret, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	tb.fill("Code", code)
	tb.clickButton("Continue")
	tb.waitPath(campaignsPath)
	tb.waitText("main h1", "Campaigns")
}
