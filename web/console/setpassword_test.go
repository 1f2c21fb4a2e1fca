package console_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/web"
	"github.com/outdial/outdial/web/console"
)

// The link's life: a refused password leaves it working; a good one is set
// and uses it up, and the link then says it no longer works (410); an
// unknown one is 404; after 24 h it has expired.
func TestSetPasswordLink(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	u, token, err := e.db.CreateUserInOrg(ctx, "acme", "ada@example.com", store.RoleOperator)
	if err != nil {
		t.Fatal(err)
	}
	b := e.browser()
	link := web.SetPasswordPath + "?token=" + url.QueryEscape(token)
	page := b.get(link)
	wantStatus(t, "the link", page, http.StatusOK)
	for _, want := range []string{"ada@example.com", `name="password"`, `name="confirm"`} {
		if !strings.Contains(page.body, want) {
			t.Errorf("the set-password page lacks %s", want)
		}
	}
	set := func(pw, confirm string) answer {
		return b.postForm(web.SetPasswordPath, url.Values{"token": {token}, "password": {pw}, "confirm": {confirm}})
	}
	refused := []struct{ name, pw, confirm, says string }{
		{"too short", "short one", "short one", "too short"},
		{"not the same", goodPassword, otherPassword, "not the same"},
		{"common", "qazwsxedcrfvtgb", "qazwsxedcrfvtgb", "common or breached"},
	}
	for _, tc := range refused {
		a := set(tc.pw, tc.confirm)
		wantStatus(t, tc.name, a, http.StatusUnprocessableEntity)
		if !strings.Contains(a.body, tc.says) || strings.Contains(a.body, tc.pw) {
			t.Errorf("%s: the page does not say %q, or echoes the password: %s", tc.name, tc.says, a.body)
		}
		wantStatus(t, "the link after "+tc.name, b.get(link), http.StatusOK)
	}
	a := set(goodPassword, goodPassword)
	wantStatus(t, "a good password", a, http.StatusSeeOther)
	if got := a.header.Get("Location"); got != "/console/sign-in?password_set=1" {
		t.Fatalf("Location = %q, want the sign-in page", got)
	}
	if !strings.Contains(b.get(a.header.Get("Location")).body, "Your password is set") {
		t.Error("the sign-in page does not say the password is set")
	}
	for _, a := range []answer{b.get(link), set(otherPassword, otherPassword)} {
		wantStatus(t, "the used link", a, http.StatusGone)
		if !strings.Contains(a.body, "no longer works") || strings.Contains(a.body, `name="password"`) {
			t.Errorf("the used link's page: %s", a.body)
		}
	}
	wantStatus(t, "an unknown link", b.get(web.SetPasswordPath+"?token=nope"), http.StatusNotFound)
	wantStatus(t, "no token", b.get(web.SetPasswordPath), http.StatusNotFound)
	wantStatus(t, "sign in with the password set", b.signInPassword(u.Email, goodPassword, ""), http.StatusSeeOther)
	wantStatus(t, "sign in with the refused second one", e.browser().signInPassword(u.Email, otherPassword, ""), http.StatusUnprocessableEntity)

	// Expired after 24 hours.
	_, token2, err := e.db.CreateUserInOrg(ctx, "acme", "bob@example.com", store.RoleViewer)
	if err != nil {
		t.Fatal(err)
	}
	e.clock.advance(24*time.Hour + time.Second)
	wantStatus(t, "an expired link", b.get(web.SetPasswordPath+"?token="+url.QueryEscape(token2)), http.StatusGone)
}

// The page web's links point at is a console route.
func TestSetPasswordPathIsAConsoleRoute(t *testing.T) {
	for _, p := range console.Routes() {
		if p == "GET "+web.SetPasswordPath {
			return
		}
	}
	t.Fatalf("no console route GET %s in %q", web.SetPasswordPath, console.Routes())
}
