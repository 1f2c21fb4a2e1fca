package console_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/web/auth"
)

// A password that passes the policy, and another.
const (
	goodPassword  = "correct horse battery staple"
	otherPassword = "violet kayak under seven lanterns"
)

// user is a user of the env's organization ("acme").
type user struct {
	store.User
	password string
	secret   string // TOTP secret, "" without a second factor
}

// newUser creates a user of acme with role and, unless password is "",
// that password.
func (e *env) newUser(email string, role store.Role, password string) user {
	e.t.Helper()
	ctx := context.Background()
	u, _, err := e.db.CreateUserInOrg(ctx, "acme", email, role)
	if err != nil {
		e.t.Fatal(err)
	}
	if password != "" {
		hash, err := auth.HashPassword(password)
		if err != nil {
			e.t.Fatal(err)
		}
		if err := e.db.SetPassword(ctx, u.ID, hash); err != nil {
			e.t.Fatal(err)
		}
	}
	return user{User: u, password: password}
}

// withTOTP turns on u's second factor and returns u and its recovery codes.
func (e *env) withTOTP(u user) (user, []string) {
	e.t.Helper()
	secret, _, err := auth.NewTOTPKey(u.Email)
	if err != nil {
		e.t.Fatal(err)
	}
	codes, hashes := auth.NewRecoveryCodes()
	if err := e.db.EnableTOTP(context.Background(), u.ID, secret, hashes); err != nil {
		e.t.Fatal(err)
	}
	u.secret = secret
	return u, codes
}

// code is the TOTP code of secret at the env's clock plus offset.
func (e *env) code(secret string, offset time.Duration) string {
	e.t.Helper()
	c, err := totp.GenerateCode(secret, e.clock.now().Add(offset))
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// signInPassword sends the password form.
func (b *browser) signInPassword(email, password, next string) answer {
	b.e.t.Helper()
	return b.postForm("/console/sign-in", url.Values{"email": {email}, "password": {password}, "next": {next}})
}

var formCSRF = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// formToken reads the first form's CSRF token of page a.
func formToken(t *testing.T, a answer) string {
	t.Helper()
	m := formCSRF.FindStringSubmatch(a.body)
	if m == nil {
		t.Fatalf("no csrf_token field on the page (%d): %s", a.status, a.body)
	}
	return m[1]
}

// submitCode sends code to the code page, with the page's token.
func (b *browser) submitCode(code, next string) answer {
	b.e.t.Helper()
	page := b.get("/console/sign-in/code?next=" + url.QueryEscape(next))
	wantStatus(b.e.t, "code page", page, http.StatusOK)
	return b.postForm("/console/sign-in/code", url.Values{"csrf_token": {formToken(b.e.t, page)}, "code": {code}, "next": {next}})
}

// signInUser signs u in (with its second factor when it has one) and fails
// the test unless the browser is then signed in.
func (b *browser) signInUser(u user) {
	b.e.t.Helper()
	a := b.signInPassword(u.Email, u.password, "/console/")
	wantStatus(b.e.t, "sign in "+u.Email, a, http.StatusSeeOther)
	if u.secret != "" {
		if loc := a.header.Get("Location"); !strings.HasPrefix(loc, "/console/sign-in/code") {
			b.e.t.Fatalf("sign in with a second factor: Location %q, want the code page", loc)
		}
		wantStatus(b.e.t, "code", b.submitCode(b.e.code(u.secret, 0), "/console/"), http.StatusSeeOther)
	}
}

// failures returns how many failed sign-ins count now for email and for
// the test client's address.
func (e *env) failures(email string) (byEmail, byAddress int) {
	e.t.Helper()
	now := e.clock.now()
	be, ba, err := e.db.SignInFailures(context.Background(), email, "127.0.0.1", now.Add(-auth.Window))
	if err != nil {
		e.t.Fatal(err)
	}
	return len(be), len(ba)
}
