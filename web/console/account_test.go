package console_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/outdial/outdial/store"
)

var (
	enrolLink    = regexp.MustCompile(`href="(otpauth://totp/Outdial:[^"]+)"`)
	enrolSecret  = regexp.MustCompile(`<code id="totp-secret">([A-Z2-7]+)</code>`)
	recoveryCode = regexp.MustCompile(`<li><code>([a-z2-9]{4}-[a-z2-9]{4})</code></li>`)
)

// accountForm posts form to an account route with the account page's
// CSRF token.
func (b *browser) accountForm(path string, form url.Values) answer {
	b.e.t.Helper()
	page := b.get("/console/account")
	wantStatus(b.e.t, "account page", page, http.StatusOK)
	form.Set("csrf_token", formToken(b.e.t, page))
	return b.postForm(path, form)
}

// Turning the second factor on: the link, QR code and secret; a wrong
// code refused; the right one turns it on and shows ten recovery codes
// once; sign-in then asks for a code, and the confirming one is used up.
func TestAccountTurnsOnTwoFactor(t *testing.T) {
	e := newEnv(t)
	u := e.newUser("ada+ops@example.com", store.RoleOperator, goodPassword)
	b := e.browser()
	b.signInUser(u)
	page := b.get("/console/account")
	wantStatus(t, "account", page, http.StatusOK)
	if !strings.Contains(page.body, "Turn on two-factor authentication") || !strings.Contains(page.body, `href="/console/account" aria-current="page">Account</a>`) {
		t.Fatalf("the account page: %s", page.body)
	}
	if !strings.Contains(b.get("/console/campaigns").body, `href="/console/account">Account</a>`) {
		t.Error("the campaigns page has no Account link")
	}

	a := b.accountForm("/console/account/two-factor/start", url.Values{})
	wantStatus(t, "turn on", a, http.StatusOK)
	link, secret := enrolLink.FindStringSubmatch(a.body), enrolSecret.FindStringSubmatch(a.body)
	if link == nil || secret == nil || !strings.Contains(a.body, `src="data:image/png;base64,`) {
		t.Fatalf("the enrollment shows no link, secret or QR code: %s", a.body)
	}
	if got, want := html.UnescapeString(link[1]), "otpauth://totp/Outdial:ada+ops@example.com?secret="+secret[1]+"&issuer=Outdial"; got != want {
		t.Errorf("link = %s, want %s", got, want)
	}
	token := formToken(t, a)
	wrong := b.postForm("/console/account/two-factor", url.Values{"csrf_token": {token}, "code": {"12345"}})
	wantStatus(t, "a wrong code", wrong, http.StatusUnprocessableEntity)
	if m := enrolSecret.FindStringSubmatch(wrong.body); m == nil || m[1] != secret[1] {
		t.Fatal("after a wrong code the page does not show the same secret again")
	}
	code := e.code(secret[1], 0)
	a = b.postForm("/console/account/two-factor", url.Values{"csrf_token": {token}, "code": {code}})
	wantStatus(t, "the right code", a, http.StatusOK)
	codes := recoveryCode.FindAllStringSubmatch(a.body, -1)
	if len(codes) != 10 {
		t.Fatalf("%d recovery codes shown, want 10: %s", len(codes), a.body)
	}
	again := b.get("/console/account")
	if recoveryCode.MatchString(again.body) || !strings.Contains(again.body, "is on. 10 recovery codes left") {
		t.Fatalf("the account page afterwards: %s", again.body)
	}
	entries, err := e.db.ListAudit(context.Background(), u.OrganizationID, store.AuditFilter{Action: "user.update"})
	if err != nil || len(entries) != 1 || entries[0].ActorID != u.ID || !strings.Contains(string(entries[0].Changes), "totp_enabled") {
		t.Fatalf("audit entries = %+v (%v), want one user.update of totp_enabled", entries, err)
	}

	// Signing in now asks for a code; the confirming one is used up.
	c := e.browser()
	wantStatus(t, "password", c.signInPassword(u.Email, u.password, ""), http.StatusSeeOther)
	wantStatus(t, "the confirming code", c.submitCode(code, "/console/"), http.StatusUnprocessableEntity)
	wantStatus(t, "a recovery code", c.submitCode(codes[0][1], "/console/"), http.StatusSeeOther)
}

// Turning it off takes a current code or the password, and not while the
// organization requires it.
func TestAccountTurnsOffTwoFactor(t *testing.T) {
	e := newEnv(t)
	u, _ := e.withTOTP(e.newUser("ada@example.com", store.RoleOperator, goodPassword))
	b := e.browser()
	b.signInUser(u)
	wantStatus(t, "wrong password", b.accountForm("/console/account/two-factor/off", url.Values{"password": {otherPassword}}), http.StatusUnprocessableEntity)
	wantStatus(t, "the used code", b.accountForm("/console/account/two-factor/off", url.Values{"code": {e.code(u.secret, 0)}}), http.StatusUnprocessableEntity)
	if _, _, err := e.db.SetOrganizationSecurity(context.Background(), u.OrganizationID, true); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, "required", b.accountForm("/console/account/two-factor/off", url.Values{"password": {u.password}}), http.StatusConflict)
	if _, _, err := e.db.SetOrganizationSecurity(context.Background(), u.OrganizationID, false); err != nil {
		t.Fatal(err)
	}
	e.clock.advance(30 * time.Second)
	a := b.accountForm("/console/account/two-factor/off", url.Values{"code": {e.code(u.secret, 0)}})
	wantStatus(t, "a current code", a, http.StatusSeeOther)
	if !strings.Contains(b.get(a.header.Get("Location")).body, "Two-factor authentication is off") {
		t.Fatal("the account page does not say it is off")
	}
	c := e.browser()
	wantStatus(t, "password alone", c.signInPassword(u.Email, u.password, "/console/"), http.StatusSeeOther)
	wantStatus(t, "campaigns", c.get("/console/campaigns"), http.StatusOK)
}

func TestAccountChangesPassword(t *testing.T) {
	e := newEnv(t)
	u := e.newUser("ada@example.com", store.RoleOperator, goodPassword)
	b := e.browser()
	b.signInUser(u)
	change := func(current, pw, confirm string) answer {
		return b.accountForm("/console/account/password", url.Values{"current_password": {current}, "password": {pw}, "confirm": {confirm}})
	}
	a := change(otherPassword, otherPassword, otherPassword)
	wantStatus(t, "wrong current password", a, http.StatusUnprocessableEntity)
	if !strings.Contains(a.body, "current password is not right") {
		t.Errorf("the page: %s", a.body)
	}
	if n, _ := e.failures(u.Email); n != 1 {
		t.Errorf("failures = %d after a wrong current password, want 1", n)
	}
	a = change(goodPassword, "too short", "too short")
	wantStatus(t, "short", a, http.StatusUnprocessableEntity)
	if !strings.Contains(a.body, "too short") {
		t.Errorf("the page: %s", a.body)
	}
	wantStatus(t, "good", change(goodPassword, otherPassword, otherPassword), http.StatusSeeOther)
	wantStatus(t, "the old password", e.browser().signInPassword(u.Email, goodPassword, ""), http.StatusUnprocessableEntity)
	wantStatus(t, "the new password", e.browser().signInPassword(u.Email, otherPassword, ""), http.StatusSeeOther)
}

// A key's session has no password or second factor: its account page says
// so, and the forms are refused.
func TestAccountOfAKey(t *testing.T) {
	e := newEnv(t)
	b := e.browser()
	b.signIn(e.key)
	page := b.get("/console/account")
	wantStatus(t, "account", page, http.StatusOK)
	if !strings.Contains(page.body, "signed in with the API key") || strings.Contains(page.body, "Turn on two-factor") {
		t.Fatalf("the account page of a key: %s", page.body)
	}
	wantStatus(t, "turn on", b.accountForm("/console/account/two-factor/start", url.Values{}), http.StatusForbidden)
}

// While the organization requires a second factor the user lacks, every
// page leads to the account page, forms elsewhere are refused, and the
// API answers 403; once it is on, everything works.
func TestRequiredTwoFactorFirst(t *testing.T) {
	e := newEnv(t)
	u := e.newUser("ada@example.com", store.RoleAdmin, goodPassword)
	if _, _, err := e.db.SetOrganizationSecurity(context.Background(), u.OrganizationID, true); err != nil {
		t.Fatal(err)
	}
	b := e.browser()
	b.signInUser(u)
	for _, p := range []string{"/console/", "/console/campaigns", "/console/telephony", "/console/compliance"} {
		a := b.get(p)
		if a.status != http.StatusSeeOther || a.header.Get("Location") != "/console/account" {
			t.Errorf("GET %s: %d to %q, want 303 to /console/account", p, a.status, a.header.Get("Location"))
		}
	}
	page := b.get("/console/account")
	wantStatus(t, "account", page, http.StatusOK)
	if !strings.Contains(page.body, "requires two-factor authentication") {
		t.Fatalf("the account page does not say why: %s", page.body)
	}
	a := b.accountForm("/console/suppressions", url.Values{"phone_numbers": {"+14155550100"}})
	wantStatus(t, "a form elsewhere", a, http.StatusForbidden)
	if api, _ := b.apiJSON(http.MethodGet, "/api/v1/campaign", nil); api.status != http.StatusForbidden {
		t.Errorf("the API: %d, want 403", api.status)
	}

	a = b.accountForm("/console/account/two-factor/start", url.Values{})
	wantStatus(t, "turn on", a, http.StatusOK)
	secret := enrolSecret.FindStringSubmatch(a.body)
	if secret == nil {
		t.Fatalf("no secret: %s", a.body)
	}
	a = b.postForm("/console/account/two-factor", url.Values{"csrf_token": {formToken(t, a)}, "code": {e.code(secret[1], 0)}})
	wantStatus(t, "confirm", a, http.StatusOK)
	wantStatus(t, "campaigns once it is on", b.get("/console/campaigns"), http.StatusOK)
}

// A role the API refuses is a 403 page naming both roles, and nothing
// changes.
func TestRoleRefusalPage(t *testing.T) {
	e := newEnv(t)
	_, key, err := e.db.CreateAPIKey(context.Background(), "acme", "watcher", store.RoleViewer)
	if err != nil {
		t.Fatal(err)
	}
	b := e.browser()
	b.signIn(key.Reveal())
	a := b.postForm("/console/campaigns/1/start", url.Values{"csrf_token": {b.csrf()}})
	wantStatus(t, "a viewer starts a campaign", a, http.StatusForbidden)
	if !strings.Contains(a.body, "role viewer cannot start a campaign; it needs operator") {
		t.Fatalf("the 403 page does not name both roles: %s", a.body)
	}
}
