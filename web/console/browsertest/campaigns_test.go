package browsertest_test

// The campaigns list in a real browser: user data shown as text, live
// counts, and the phone's width.

import (
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"testing"
)

// xssName is a campaign name that runs a script wherever it is put on a
// page as HTML.
const xssName = `<img src=x onerror=alert(1)>`

// A campaign named like markup is listed as that text: no dialog opens, no
// img element comes of it, nothing is fetched from its src.
func TestCampaignNameIsText(t *testing.T) {
	o := newOrg(t)
	c := o.createCampaign(o.readyToDial(), xssName, 1)
	tb := newTab(t)
	tb.signIn(o.key)
	row := fmt.Sprintf(`tr[data-campaign-id="%d"]`, idOf(t, c, "id"))
	tb.waitVisible(row)

	// The page's scripts have run (modules run before the load event that
	// signIn waited for), and every image of the page has loaded or failed,
	// so an onerror would have run by now.
	evalJS[bool](tb, `Promise.all([...document.images].map(i => i.complete ? 0 :
		new Promise(r => { i.addEventListener('load', r); i.addEventListener('error', r); }))).then(() => true)`)
	if got := tb.takeDialogs(); len(got) != 0 {
		t.Errorf("dialogs opened: %q", got)
	}
	if n := tb.count(row + " img"); n != 0 {
		t.Errorf("the row holds %d img elements", n)
	}
	if n := tb.count(`img[src="x"]`); n != 0 {
		t.Errorf("the page holds %d img elements with src x", n)
	}
	if fetched := evalJS[bool](tb, `performance.getEntriesByType('resource').some(e => new URL(e.name).pathname.endsWith('/x'))`); fetched {
		t.Error(`the page fetched the name's src "x"`)
	}
	if got := evalJS[string](tb, fmt.Sprintf(`document.querySelector(%s).textContent`, jsString(row+" a"))); got != xssName {
		t.Errorf("the campaign's link reads %q, want %q", got, xssName)
	}
}

// The list follows a campaign as it runs, without a reload: its state and
// counts reach their final values.
func TestCampaignsListIsLive(t *testing.T) {
	o := newOrg(t)
	c := o.createCampaign(o.readyToDial(), "live", 3)
	id := idOf(t, c, "id")
	tb := newTab(t)
	tb.signIn(o.key)
	row := fmt.Sprintf(`tr[data-campaign-id="%d"]`, id)
	tb.waitText(row+` [data-field="state"]`, "draft")
	// Marks this document: a reload would lose the mark.
	evalJS[bool](tb, `(window.notReloaded = true)`)

	o.call(http.MethodPost, fmt.Sprintf("/api/v1/campaign/%d/start", id), nil, http.StatusOK)
	tb.waitText(row+` [data-field="state"]`, "completed")
	tb.waitText(row+` [data-field="processed_rows"]`, "3")
	tb.waitText(row+` [data-field="executed_count"]`, "3")
	tb.waitText(row+` [data-field="percent"]`, "100%")
	if !evalJS[bool](tb, `window.notReloaded === true`) {
		t.Error("the page was reloaded")
	}
	if got := o.campaign(id); got["state"] != "completed" {
		t.Errorf("the API says %v", got["state"])
	}
}

// At a phone's width (390 px) the sign-in form and the campaigns list fit:
// the page never scrolls sideways, and the sign-in field and button and
// the sign-out button are on screen.
func TestConsoleFitsPhone(t *testing.T) {
	o := newOrg(t)
	o.createCampaign(o.readyToDial(), "A campaign with a rather long name to wrap on a phone", 2)
	tb := newTab(t)
	tb.setViewport(phoneView)
	dir := screenshotDir(t)

	tb.goTo(signInPath)
	tb.waitVisible("form button")
	tb.checkFits("sign-in")
	tb.screenshot(filepath.Join(dir, "sign-in-phone.png"))

	tb.submitSignIn(o.key)
	tb.waitPath(consoleHome)
	tb.waitVisible("header form button")
	tb.checkFits("campaigns")
	tb.screenshot(filepath.Join(dir, "campaigns-phone.png"))
}

// checkFits fails the test when the page is wider than the viewport, or a
// form control lies outside it horizontally.
func (tb *tab) checkFits(page string) {
	tb.t.Helper()
	width := evalJS[int](tb, `window.innerWidth`)
	if scroll := evalJS[int](tb, `document.documentElement.scrollWidth`); scroll > width {
		tb.t.Errorf("%s: the page is %d px wide in a %d px viewport", page, scroll, width)
	}
	outside := evalJS[[]string](tb, `[...document.querySelectorAll('input:not([type=hidden]), button, select, textarea')]
		.filter(e => { const r = e.getBoundingClientRect(); return r.left < 0 || r.right > window.innerWidth; })
		.map(e => e.outerHTML.slice(0, 80))`)
	if len(outside) > 0 {
		tb.t.Errorf("%s: controls outside the %d px viewport: %q", page, width, slices.Compact(outside))
	}
}
