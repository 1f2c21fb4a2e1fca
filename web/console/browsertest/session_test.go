package browsertest_test

// Signing in and out of the console, in a real browser: the redirect of
// signed-out pages, a good and a bad key, the CSRF token of API requests
// made with the session cookie, and signing out.

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/outdial/outdial/web/console"
)

// signedOutPages are console pages to open signed out: "/" and "/console"
// (which lead to the console's home), and every GET page the console
// registers but the sign-in ones and the set-password page (public: it
// answers a link), with 1 for each path wildcard.
func signedOutPages(t *testing.T) []string {
	t.Helper()
	pages := []string{"/", "/console", consoleHome}
	for _, pattern := range console.Routes() {
		method, path, ok := strings.Cut(pattern, " ")
		if !ok || method != http.MethodGet || strings.HasPrefix(path, signInPath) || path == setPasswordPath {
			continue
		}
		path = strings.TrimSuffix(path, "{$}")
		for {
			open := strings.Index(path, "{")
			if open < 0 {
				break
			}
			end := strings.Index(path[open:], "}")
			if end < 0 {
				t.Fatalf("route %q: an unclosed wildcard", pattern)
			}
			path = path[:open] + "1" + path[open+end+1:]
		}
		pages = append(pages, path)
	}
	if len(pages) < 4 {
		t.Fatalf("the console registers no GET page but sign-in: %q", console.Routes())
	}
	return pages
}

// Signed out, every console page leads to the sign-in form, which then
// comes back to the page asked for.
func TestSignedOutPagesRedirectToSignIn(t *testing.T) {
	o := newOrg(t)
	tb := newTab(t)
	for _, page := range signedOutPages(t) {
		tb.goTo(page)
		tb.waitPath(signInPath)
		tb.waitVisible("form")
		if n := tb.count(`meta[name="csrf-token"]`); n != 0 {
			t.Errorf("%s: the sign-in page signed out carries a CSRF token", page)
		}
	}

	// The last page asked for is where signing in leads.
	want := campaignsPath
	tb.goTo(want)
	tb.waitPath(signInPath)
	tb.submitSignIn(o.key)
	tb.waitPath(want)
	tb.waitVisible("main h1")
}

// The key pasted into the sign-in form signs in: the campaigns list of the
// key's organization, with a way to sign out.
func TestSignInLandsOnCampaignsList(t *testing.T) {
	o := newOrg(t)
	s := o.readyToDial()
	c := o.createCampaign(s, "Spring reminders", 2)
	other := newOrg(t)
	other.createCampaign(other.readyToDial(), "Not ours", 1)

	tb := newTab(t)
	tb.signIn(o.key)
	tb.waitText("main h1", "Campaigns")
	row := fmt.Sprintf(`tr[data-campaign-id="%d"]`, idOf(t, c, "id"))
	tb.waitText(row, "Spring reminders")
	tb.waitText(row, "draft")
	if text := tb.text("main"); strings.Contains(text, "Not ours") {
		t.Errorf("the list shows another organization's campaign:\n%s", text)
	}
	tb.waitVisible("header form button")
	if got := tb.text("header form button"); got != "Sign out" {
		t.Errorf("the header's button reads %q, want Sign out", got)
	}
	// The session cookie is HttpOnly: no script of the page reads it.
	if cookies := evalJS[string](tb, `document.cookie`); strings.Contains(cookies, console.SessionCookie) {
		t.Errorf("the session cookie is readable by scripts: %q", cookies)
	}
}

// A key that is not valid leaves the browser on the sign-in form, saying
// why, and signed out.
func TestSignInWithBadKeyShowsError(t *testing.T) {
	o := newOrg(t)
	tb := newTab(t)
	tb.goTo(signInPath)
	tb.submitSignIn(o.key[:len(o.key)-4] + "AAAA")
	tb.waitVisible(`[role="alert"]`)
	if got := tb.text(`[role="alert"]`); !strings.Contains(got, "not valid") {
		t.Errorf("the error reads %q, want it to say the key is not valid", got)
	}
	if got := tb.path(); got != signInPath {
		t.Errorf("after a bad key the browser is at %s, want %s", got, signInPath)
	}
	// The answer to the form was a 422 page, which the browser logs.
	for _, p := range tb.takeProblems() {
		if !strings.Contains(p, "422") {
			t.Errorf("the page reported an error: %s", p)
		}
	}
	tb.goTo(campaignsPath)
	tb.waitPath(signInPath)
}

// The API refuses a request that changes something when it carries the
// session cookie but not the session's CSRF token, and changes nothing;
// the same request with the token goes through.
func TestAPIRefusesCookieWithoutCSRFToken(t *testing.T) {
	o := newOrg(t)
	s := o.readyToDial()
	c := o.createCampaign(s, "before", 2)
	id := idOf(t, c, "id")
	campaign := fmt.Sprintf("/api/v1/campaign/%d", id)

	tb := newTab(t)
	tb.signIn(o.key)
	json := map[string]string{"Content-Type": "application/json"}
	if got := tb.fetchStatus(http.MethodPost, campaign+"/start", nil, ""); got != http.StatusForbidden {
		t.Errorf("start without the CSRF token: status = %d, want %d", got, http.StatusForbidden)
	}
	if got := tb.fetchStatus(http.MethodPatch, campaign, json, `{"name":"after"}`); got != http.StatusForbidden {
		t.Errorf("rename without the CSRF token: status = %d, want %d", got, http.StatusForbidden)
	}
	wrong := map[string]string{"Content-Type": "application/json", console.CSRFHeader: "not-the-token"}
	if got := tb.fetchStatus(http.MethodPatch, campaign, wrong, `{"name":"after"}`); got != http.StatusForbidden {
		t.Errorf("rename with a wrong CSRF token: status = %d, want %d", got, http.StatusForbidden)
	}
	// The browser logs each refused request.
	for _, p := range tb.takeProblems() {
		if !strings.Contains(p, "403") {
			t.Errorf("the page reported an error: %s", p)
		}
	}
	if got := o.campaign(id); got["state"] != "draft" || got["name"] != "before" {
		t.Fatalf("after the refused requests: state %v, name %v, want draft and before", got["state"], got["name"])
	}
	if n := srv.sim.CreatesTo(o.number(0)); n != 0 {
		t.Errorf("the refused start placed %d calls", n)
	}

	token := evalJS[string](tb, `document.querySelector('meta[name="csrf-token"]').content`)
	withToken := map[string]string{"Content-Type": "application/json", console.CSRFHeader: token}
	if got := tb.fetchStatus(http.MethodPatch, campaign, withToken, `{"name":"after"}`); got != http.StatusOK {
		t.Fatalf("rename with the CSRF token: status = %d, want %d", got, http.StatusOK)
	}
	if got := o.campaign(id); got["name"] != "after" {
		t.Errorf("after the rename with the token: name %v, want after", got["name"])
	}
}

// Signing out ends the session: back on the sign-in form, console pages
// lead there again, and the API no longer takes the cookie.
func TestSignOutReturnsToSignIn(t *testing.T) {
	o := newOrg(t)
	tb := newTab(t)
	tb.signIn(o.key)
	if got := tb.fetchStatus(http.MethodGet, "/api/v1/campaign", nil, ""); got != http.StatusOK {
		t.Fatalf("the API with the session cookie: status = %d, want %d", got, http.StatusOK)
	}
	tb.clickButton("Sign out")
	tb.waitPath(signInPath)
	tb.waitVisible("form")

	tb.goTo(campaignsPath)
	tb.waitPath(signInPath)
	if got := tb.fetchStatus(http.MethodGet, "/api/v1/campaign", nil, ""); got != http.StatusUnauthorized {
		t.Errorf("the API after signing out: status = %d, want %d", got, http.StatusUnauthorized)
	}
	for _, p := range tb.takeProblems() {
		if !strings.Contains(p, "401") {
			t.Errorf("the page reported an error: %s", p)
		}
	}
}
