package browsertest_test

// What every console test does: sign in as a person would, find buttons
// by their text.

import (
	"fmt"

	"github.com/chromedp/chromedp"
)

// Console paths the tests start from.
const (
	signInPath    = "/console/sign-in"
	consoleHome   = "/console/"
	campaignsPath = "/console/campaigns"
)

// signIn signs in with key from the sign-in page: types the key into the
// field labelled "API key", presses "Sign in with the key", and waits for the console's
// first page (the campaigns list).
func (tb *tab) signIn(key string) {
	tb.t.Helper()
	tb.goTo(signInPath)
	tb.submitSignIn(key)
	tb.waitPath(consoleHome)
}

// submitSignIn fills the sign-in form the page shows with key and presses
// its button; the caller waits for where it leads.
func (tb *tab) submitSignIn(key string) {
	tb.t.Helper()
	tb.fill("API key", key)
	tb.clickButton("Sign in with the key")
}

// clickButton clicks the first visible button (or submit input, or link
// styled as one) whose text is label.
func (tb *tab) clickButton(label string) {
	tb.t.Helper()
	tb.do(fmt.Sprintf("click the button %q", label), chromedp.Click(byText(label), chromedp.NodeVisible))
}

// byText selects the first button, submit input or link whose text
// (spaces collapsed) is label.
func byText(label string) chromedp.JSPath {
	return chromedp.JSPath(fmt.Sprintf(`(() => {
		const want = %s;
		const text = e => (e.tagName === 'INPUT' ? e.value : e.textContent).replace(/\s+/g, ' ').trim();
		return [...document.querySelectorAll('button, input[type=submit], a')].find(e => text(e) === want) || null;
	})()`, jsString(label)))
}

// fetchStatus makes the page fetch path with method (same origin, so with
// its cookies) and the extra headers, and returns the answer's status.
func (tb *tab) fetchStatus(method, path string, headers map[string]string, body string) int {
	tb.t.Helper()
	h := "{"
	for k, v := range headers {
		h += jsString(k) + ":" + jsString(v) + ","
	}
	h += "}"
	b := "undefined"
	if body != "" {
		b = jsString(body)
	}
	return evalJS[int](tb, fmt.Sprintf(`fetch(%s, {method: %s, headers: %s, body: %s, credentials: 'same-origin'}).then(r => r.status)`,
		jsString(path), jsString(method), h, b))
}
