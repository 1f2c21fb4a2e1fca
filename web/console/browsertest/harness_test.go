package browsertest_test

// The harness tested on its own: the tab's helpers against small pages of a
// loopback server of the test's, and the package's server running a
// campaign against the Twilio simulator.

import (
	"bytes"
	"fmt"
	"html"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer/carrier/twiliosim"
)

// harnessPages serves the self-test's pages:
//
//   - /plain: a labelled field in a GET form to /echo, buttons that open an
//     alert, add an element 300 ms later and remove the heading, and a
//     2,000 px tall block with a last line below it;
//   - /echo?who=X: "Hello, X" (escaped);
//   - /errors: a console.error, an uncaught exception and an image that is
//     not there;
//   - /redirect: 303 to /plain.
func harnessPages(t *testing.T) string {
	t.Helper()
	mux := http.NewServeMux()
	page := func(w http.ResponseWriter, body string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html><head><meta charset="utf-8">`+
			`<meta name="viewport" content="width=device-width, initial-scale=1"><title>harness</title></head>`+
			`<body style="margin:0;font-family:sans-serif">%s</body></html>`, body)
	}
	mux.HandleFunc("GET /plain", func(w http.ResponseWriter, _ *http.Request) {
		page(w, `<h1 id="title">Harness</h1>
<form action="/echo" method="get"><label for="who">Your name <small>(any text)</small></label> <input id="who" name="who"></form>
<button id="alert" onclick="alert('hello')">alert</button>
<button id="late" onclick="setTimeout(() => { const p = document.createElement('p'); p.id = 'later'; p.textContent = 'arrived'; document.body.append(p) }, 300)">later</button>
<button id="remove" onclick="document.getElementById('title').remove()">remove</button>
<div style="height:2000px;background:linear-gradient(#fff,#9cf)"></div><p id="bottom">bottom</p>`)
	})
	mux.HandleFunc("GET /echo", func(w http.ResponseWriter, r *http.Request) {
		page(w, `<p id="echo">Hello, `+html.EscapeString(r.URL.Query().Get("who"))+`</p>`)
	})
	mux.HandleFunc("GET /errors", func(w http.ResponseWriter, _ *http.Request) {
		page(w, `<p>errors</p><img src="/missing.png" alt="missing">
<script>console.error('bad thing', 42); throw new Error('boom');</script>`)
	})
	mux.HandleFunc("GET /redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/plain", http.StatusSeeOther)
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts.URL
}

// The tab follows redirects, types into a field found by its label,
// submits, and waits for paths, elements and texts that come later.
func TestHarnessTypesWaitsAndReads(t *testing.T) {
	tb := newTab(t)
	base := harnessPages(t)

	tb.goTo(base + "/redirect")
	if got := tb.path(); got != "/plain" {
		t.Fatalf("path after the redirect = %q, want /plain", got)
	}
	tb.fill("Your name", "Ada <b>&")
	tb.submitField("Your name")
	tb.waitPath("/echo")
	tb.waitText("#echo", "Hello, Ada <b>&")
	if got := tb.text("#echo"); got != "Hello, Ada <b>&" {
		t.Errorf("echo = %q, want %q", got, "Hello, Ada <b>&")
	}

	tb.goTo(base + "/plain")
	tb.click("#late")
	tb.waitText("#later", "arrived")
	tb.click("#remove")
	tb.waitGone("#title")
	if n := tb.count("h1"); n != 0 {
		t.Errorf("%d h1 left after the removal", n)
	}
}

// A wait for something that never comes ends at its deadline with an
// error that names it.
func TestHarnessWaitEndsAtDeadline(t *testing.T) {
	tb := newTab(t)
	tb.goTo(harnessPages(t) + "/plain")
	start := time.Now()
	err := tb.waitTextWithin(300*time.Millisecond, "#title", "never shown")
	if err == nil {
		t.Fatal("waiting for a text that is not there succeeded")
	}
	if !strings.Contains(err.Error(), "never shown") {
		t.Errorf("error %q does not name what was awaited", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("a 300 ms wait took %v", took)
	}
}

// Dialogs are answered (the page goes on) and recorded, and so are
// console errors, uncaught exceptions and failed resource loads.
func TestHarnessCatchesDialogsAndErrors(t *testing.T) {
	tb := newTab(t)
	base := harnessPages(t)

	tb.goTo(base + "/plain")
	tb.click("#alert")
	if got, want := tb.takeDialogs(), []string{"alert: hello"}; !slices.Equal(got, want) {
		t.Errorf("dialogs = %q, want %q", got, want)
	}
	tb.acceptDialogs(true)
	if ok := evalJS[bool](tb, `confirm('sure?')`); !ok {
		t.Error("confirm answered false after acceptDialogs(true)")
	}
	if got, want := tb.takeDialogs(), []string{"confirm: sure?"}; !slices.Equal(got, want) {
		t.Errorf("dialogs = %q, want %q", got, want)
	}
	if p := tb.takeProblems(); len(p) != 0 {
		t.Errorf("problems on a clean page: %q", p)
	}

	tb.goTo(base + "/errors")
	want := []string{"console.error: bad thing 42", "uncaught:", "boom", "missing.png"}
	var problems []string
	// The image's failure is reported when its request ends, which may be
	// after the load event: wait for it.
	deadline := time.Now().Add(waitTimeout)
	for {
		problems = append(problems, tb.takeProblems()...)
		all := strings.Join(problems, "\n")
		missing := slices.DeleteFunc(slices.Clone(want), func(w string) bool { return strings.Contains(all, w) })
		if len(missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("problems %q lack %q", problems, missing)
		}
		tb.waitVisible("img")
	}
}

// Screenshots are PNGs of the whole page at the viewport's width; the
// phone viewport is 390 CSS pixels wide.
func TestHarnessScreenshotsAndViewports(t *testing.T) {
	tb := newTab(t)
	url := harnessPages(t) + "/plain"
	dir := t.TempDir()
	for _, v := range []viewport{desktopView, phoneView} {
		tb.setViewport(v)
		tb.goTo(url)
		if w := evalJS[int64](tb, `window.innerWidth`); w != v.width {
			t.Errorf("%s: innerWidth = %d, want %d", v.name, w, v.width)
		}
		path := filepath.Join(dir, v.name+".png")
		tb.screenshot(path)
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("%s: the screenshot is no PNG: %v", v.name, err)
		}
		height := evalJS[int64](tb, `document.documentElement.scrollHeight`)
		if b := img.Bounds(); int64(b.Dx()) != v.width || int64(b.Dy()) < height || height < 2000 {
			t.Errorf("%s: screenshot %dx%d, want %d wide and the page's %d px tall", v.name, b.Dx(), b.Dy(), v.width, height)
		}
	}
}

// The package's server is the whole stack: an organization made through
// the store has calling hours off, uploads go to the bundled object store
// through presigned URLs, and a started campaign dials the Twilio
// simulator until every contact is final.
func TestHarnessServerRunsCampaigns(t *testing.T) {
	o := newOrg(t)
	policy := o.call(http.MethodGet, "/api/v1/organizations/compliance", nil, http.StatusOK)
	if hours, _ := policy["calling_hours"].(map[string]any); hours["enabled"] != false {
		t.Fatalf("calling hours = %v, want off", policy["calling_hours"])
	}
	s := o.readyToDial()
	srv.setScript(o.number(1), twiliosim.Script{Outcome: twiliosim.Busy, RingDelay: simRing})
	c := o.createCampaign(s, "harness", 3)
	id := idOf(t, c, "id")
	if c["state"] != "draft" || c["total_rows"] != 3.0 {
		t.Fatalf("created campaign: %v", c)
	}
	o.call(http.MethodPost, fmt.Sprintf("/api/v1/campaign/%d/start", id), nil, http.StatusOK)
	done := o.waitCampaign(id, "completed", func(c map[string]any) bool { return c["state"] == "completed" })
	if done["processed_rows"] != 3.0 || done["failed_rows"] != 1.0 {
		t.Errorf("completed campaign: processed_rows %v, failed_rows %v, want 3 and 1 (the busy number)",
			done["processed_rows"], done["failed_rows"])
	}
	for i := range 3 {
		if n := srv.sim.CreatesTo(o.number(i)); n != 1 {
			t.Errorf("the simulator got %d calls to %s, want 1", n, o.number(i))
		}
	}
}
