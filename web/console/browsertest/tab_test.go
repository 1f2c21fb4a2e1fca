package browsertest_test

// One test's tab and what a test does with it: go to a page, wait for an
// element or a text (every wait has a deadline, none sleeps), read, click,
// type into a labelled field, run JavaScript, take a screenshot, change the
// viewport.

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// waitTimeout bounds each action and wait of a tab: generous, since the
// machine may be busy with other packages' tests under -race; a test that
// works takes milliseconds.
const waitTimeout = 20 * time.Second

// viewport is a window size the console must be usable at (issue 13).
type viewport struct {
	name          string
	width, height int64
	mobile        bool // a phone: mobile emulation (the page's meta viewport counts) and touch
}

// The two viewports of the console's tests.
var (
	desktopView = viewport{name: "desktop", width: 1280, height: 800}
	phoneView   = viewport{name: "phone", width: 390, height: 844, mobile: true}
)

// tab is one test's page: a new tab in a browser context of its own (no
// cookie or storage shared with another test), at the desktop viewport,
// whose dialogs and errors are watched (pageWatch). When the test ends the
// tab fails it for any dialog or error it did not take (takeDialogs,
// takeProblems), then closes.
type tab struct {
	t     *testing.T
	ctx   context.Context
	watch *pageWatch
}

// newTab opens a tab for t. It skips t when the browser did not start
// (TestMain has failed the package instead when CI is set).
func newTab(t *testing.T) *tab {
	t.Helper()
	if chrome == nil {
		t.Skipf("no browser for the console's browser tests: %v", browserErr)
	}
	w := newPageWatch()
	ctx, cancel := chromedp.NewContext(chrome.ctx, chromedp.WithNewBrowserContext(), chromedp.WithListener(w.listen))
	// The first action opens the tab, whose life is then ctx's; it takes no
	// deadline of its own (the test's timeout still bounds it).
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		t.Fatalf("open a tab: %v", err)
	}
	go w.answerDialogs(ctx)
	tb := &tab{t: t, ctx: ctx, watch: w}
	t.Cleanup(func() {
		tb.checkClean()
		cancel()
		<-w.done
	})
	tb.setViewport(desktopView)
	return tb
}

// do runs actions within waitTimeout, failing the test on an error.
func (tb *tab) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, waitTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		tb.t.Fatalf("%s: %v", what, err)
	}
}

// run runs one action within waitTimeout and returns its value, failing the
// test on an error.
func run[T any](tb *tab, what string, a chromedp.Action[T]) T {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, waitTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		tb.t.Fatalf("%s: %v", what, err)
	}
	return v
}

// evalJS evaluates the JavaScript expression in the page and decodes its
// value into T (a promise is awaited); it fails the test when the
// expression throws.
func evalJS[T any](tb *tab, expr string) T {
	tb.t.Helper()
	return run(tb, "evaluate "+expr, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
}

// goTo loads path (on the package's server; or an absolute URL) and waits
// for its load event. Redirects are followed, as a browser does.
func (tb *tab) goTo(path string) {
	tb.t.Helper()
	u := path
	if !strings.HasPrefix(path, "http://") && !strings.HasPrefix(path, "https://") {
		u = srv.url + path
	}
	tb.do("go to "+u, chromedp.Navigate(u))
}

// path returns the path of the page's URL ("/console/sign-in").
func (tb *tab) path() string {
	tb.t.Helper()
	loc := run(tb, "read the location", chromedp.Location())
	u, err := url.Parse(loc)
	if err != nil {
		tb.t.Fatalf("location %q: %v", loc, err)
	}
	return u.Path
}

// waitPath waits until the page's path is want (a redirect, a form
// submission or a script's navigation has landed).
func (tb *tab) waitPath(want string) {
	tb.t.Helper()
	if err := tb.waitFor(waitTimeout, "the path "+want, `p => location.pathname === p`, want); err != nil {
		tb.t.Fatalf("%v (the page is at %s)", err, tb.path())
	}
}

// waitVisible waits until an element matching the CSS selector is visible.
func (tb *tab) waitVisible(sel string) {
	tb.t.Helper()
	tb.do("wait for "+sel+" to be visible", chromedp.WaitVisible(chromedp.CSS(sel)))
}

// waitGone waits until no element matches the CSS selector.
func (tb *tab) waitGone(sel string) {
	tb.t.Helper()
	tb.do("wait for "+sel+" to go", chromedp.WaitNotPresent(chromedp.CSS(sel)))
}

// waitText waits until an element matching the CSS selector shows text
// containing want (its rendered text, as a person reads it).
func (tb *tab) waitText(sel, want string) {
	tb.t.Helper()
	if err := tb.waitTextWithin(waitTimeout, sel, want); err != nil {
		tb.t.Fatal(err)
	}
}

// waitTextWithin is waitText with its own deadline, returning the error.
func (tb *tab) waitTextWithin(timeout time.Duration, sel, want string) error {
	return tb.waitFor(timeout, fmt.Sprintf("%q in %s", want, sel),
		`(sel, want) => [...document.querySelectorAll(sel)].some(e => e.innerText.includes(want))`, sel, want)
}

// waitFor waits until the JavaScript function fn, called with args in the
// page, returns true, or timeout passes. The page re-evaluates it every 20
// ms and on every DOM change; a navigation on the way (the evaluation's
// document goes away) starts it again in the new document.
func (tb *tab) waitFor(timeout time.Duration, what, fn string, args ...any) error {
	ctx, cancel := context.WithTimeout(tb.ctx, timeout)
	defer cancel()
	var last error
	for {
		remaining := time.Until(deadlineOf(ctx))
		ok, err := chromedp.Run(ctx, chromedp.PollFunction[bool](fn,
			chromedp.WithPollingArgs(args...), chromedp.WithPollingInterval(20*time.Millisecond),
			chromedp.WithPollingTimeout(remaining)))
		if err == nil && ok {
			return nil
		}
		if err != nil && !errors.Is(err, chromedp.ErrPollingTimeout) && ctx.Err() == nil {
			last = err
		}
		if ctx.Err() != nil || errors.Is(err, chromedp.ErrPollingTimeout) {
			if last != nil {
				return fmt.Errorf("wait for %s: not within %v (last error: %w)", what, timeout, last)
			}
			return fmt.Errorf("wait for %s: not within %v", what, timeout)
		}
		// The document went away under the evaluation: wait for the next
		// one to have a body, then evaluate again.
		_ = chromedp.Do(ctx, chromedp.WaitReady(chromedp.CSS("body")))
	}
}

// deadlineOf returns ctx's deadline (contexts here always have one).
func deadlineOf(ctx context.Context) time.Time {
	d, _ := ctx.Deadline()
	return d
}

// text returns the rendered text of the first element matching the CSS
// selector, once it is there.
func (tb *tab) text(sel string) string {
	tb.t.Helper()
	return run(tb, "read the text of "+sel, chromedp.Text(chromedp.CSS(sel)))
}

// count returns how many elements match the CSS selector now.
func (tb *tab) count(sel string) int {
	tb.t.Helper()
	return evalJS[int](tb, fmt.Sprintf(`document.querySelectorAll(%s).length`, jsString(sel)))
}

// click clicks the first element matching the CSS selector, once visible.
func (tb *tab) click(sel string) {
	tb.t.Helper()
	tb.do("click "+sel, chromedp.Click(chromedp.CSS(sel), chromedp.NodeVisible))
}

// fill types value into the form field labelled label (a <label> whose
// text starts with label, or an aria-label equal to it), replacing what it
// held, as a person types.
func (tb *tab) fill(label, value string) {
	tb.t.Helper()
	field := byLabel(label)
	tb.do(fmt.Sprintf("type into the field labelled %q", label),
		chromedp.WaitVisible(field), chromedp.Clear(field), chromedp.SendKeys(field, value))
}

// submitField submits the form of the field labelled label, as pressing
// Enter in it does.
func (tb *tab) submitField(label string) {
	tb.t.Helper()
	tb.do(fmt.Sprintf("submit the form of the field labelled %q", label), chromedp.Submit(byLabel(label)))
}

// byLabel selects the form control a person finds by its label: the
// control of the first <label> whose text (spaces collapsed) starts with
// label, else the first element whose aria-label is label.
func byLabel(label string) chromedp.JSPath {
	return chromedp.JSPath(fmt.Sprintf(`(() => {
		const want = %s;
		for (const l of document.querySelectorAll('label')) {
			if (l.textContent.replace(/\s+/g, ' ').trim().startsWith(want) && l.control) return l.control;
		}
		return [...document.querySelectorAll('[aria-label]')].find(e => e.getAttribute('aria-label') === want) || null;
	})()`, jsString(label)))
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x2028 || r == 0x2029 || r == '<' || r == '>':
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// setViewport sizes the page as v (mobile emulation for a phone).
func (tb *tab) setViewport(v viewport) {
	tb.t.Helper()
	var opts []chromedp.EmulateViewportOption
	if v.mobile {
		opts = append(opts, chromedp.EmulatePortrait, chromedp.EmulateMobile, chromedp.EmulateTouch)
	}
	tb.do("set the "+v.name+" viewport", chromedp.EmulateViewport(v.width, v.height, opts...))
}

// screenshot writes a PNG of the whole page (beyond the viewport, at its
// width) to path, creating its directory.
func (tb *tab) screenshot(path string) {
	tb.t.Helper()
	png := run(tb, "take a screenshot", chromedp.FullScreenshot(100))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.t.Fatal(err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		tb.t.Fatal(err)
	}
}

// screenshotDir is where a test writes its screenshots: the directory
// $OUTDIAL_SCREENSHOTS names (created if need be), to look at them or to
// commit them (docs/console/), else a temporary directory of the test.
func screenshotDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("OUTDIAL_SCREENSHOTS")
	if dir == "" {
		return t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// acceptDialogs sets whether later dialogs are accepted (a confirm the test
// means to confirm) or dismissed (the default). Either way they are
// recorded, and the test must take them.
func (tb *tab) acceptDialogs(accept bool) { tb.watch.setAccept(accept) }

// settle returns once the page's events up to now are recorded: any
// command's answer comes after the events the browser sent before it.
func (tb *tab) settle() {
	tb.t.Helper()
	tb.do("settle", chromedp.Evaluate[chromedp.Void](`0`))
}

// takeDialogs returns the dialogs the page opened so far ("alert: 1",
// "confirm: Cancel the campaign?") and forgets them.
func (tb *tab) takeDialogs() []string {
	tb.t.Helper()
	tb.settle()
	return tb.watch.takeDialogs()
}

// takeProblems returns the errors the page reported so far and forgets
// them.
func (tb *tab) takeProblems() []string {
	tb.t.Helper()
	tb.settle()
	return tb.watch.takeProblems()
}

// checkClean fails the test for every dialog and error not taken.
func (tb *tab) checkClean() {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, waitTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`0`)); err != nil {
		tb.t.Errorf("settle the page before closing it: %v", err)
	}
	for _, d := range tb.watch.takeDialogs() {
		tb.t.Errorf("the page opened a dialog: %s", d)
	}
	for _, p := range tb.watch.takeProblems() {
		tb.t.Errorf("the page reported an error: %s", p)
	}
}
