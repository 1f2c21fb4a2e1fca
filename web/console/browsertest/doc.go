// Package browsertest holds the console's real-browser tests (API.md 14,
// issue 13): headless Chromium, driven from Go with chromedp, against the
// whole server. Outside its tests it holds only AllocatorOptions, the
// flags Chromium is started with (bench/consolebench uses them too).
//
// TestMain starts, once for the package, the server as cmd/serve.go wires
// it (SQLite in a temporary directory, the bundled object store, the dialer
// engine, web.New) on a loopback listener, with the Twilio simulator
// (dialer/carrier/twiliosim) as Twilio's API, and one headless Chromium
// (/usr/bin/chromium from Debian's chromium package, which .ci/chromium.sh
// installs, or $CHROMIUM). Without a browser the tests skip, unless the
// variable CI is set: then the package fails.
//
// A test takes an organization of its own and a tab of its own, so tests do
// not see each other's data or cookies:
//
//	func TestCampaignsListShowsNames(t *testing.T) {
//		o := newOrg(t)                   // organization + API key, calling hours off
//		s := o.readyToDial()             // Twilio configuration, caller id, workflow
//		o.createCampaign(s, "spring", 3) // through the API, as a client would
//		tb := newTab(t)                  // 1280x800; fails the test on any dialog or JS error
//		tb.signIn(o.key)
//		tb.waitText("main", "spring")
//		tb.screenshot(filepath.Join(screenshotDir(t), "list.png"))
//	}
//
// Every wait has a deadline (waitTimeout) and none is a fixed sleep.
// Screenshots go to a temporary directory, or to the one
// $OUTDIAL_SCREENSHOTS names.
package browsertest
