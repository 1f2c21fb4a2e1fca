package console_test

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"net/http"
	"os"
	"path"
	"regexp"
	"strings"
	"testing"

	"github.com/outdial/outdial/web/console"
)

// consoleHeaders are the headers every console answer carries.
var consoleHeaders = map[string]string{
	"Content-Security-Policy": "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; " +
		"connect-src 'self'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'",
	"X-Frame-Options":        "DENY",
	"X-Content-Type-Options": "nosniff",
	"Referrer-Policy":        "same-origin",
}

// concrete turns a ServeMux pattern's path into a path it matches.
func concrete(pattern string) string {
	_, p, _ := strings.Cut(pattern, " ")
	p = strings.ReplaceAll(p, "{$}", "")
	return regexp.MustCompile(`\{[^}]+\}`).ReplaceAllString(p, "1")
}

// TestSecurityHeadersOnEveryRoute requests every registered console route
// signed out and signed in, by its method (and HEAD beside GET), plus the
// redirects, an asset, a missing asset and an unknown page: each answer has
// the security headers, and every answer but an asset's is not cached.
func TestSecurityHeadersOnEveryRoute(t *testing.T) {
	e := newEnv(t)
	signedIn := e.browser()
	signedIn.signIn(e.key)
	type req struct{ method, path string }
	var reqs []req
	routes := console.Routes()
	if len(routes) < 6 {
		t.Fatalf("only %d console routes registered: %v", len(routes), routes)
	}
	for _, pattern := range routes {
		method, _, _ := strings.Cut(pattern, " ")
		reqs = append(reqs, req{method, concrete(pattern)})
		if method == http.MethodGet {
			reqs = append(reqs, req{http.MethodHead, concrete(pattern)})
		}
	}
	css := regexp.MustCompile(`/console/static/console\.[0-9a-f]{8}\.css`).FindString(signedIn.get("/console/sign-in").body)
	if css == "" {
		// Signed in, the sign-in page redirects; take the stylesheet from a page.
		css = regexp.MustCompile(`/console/static/console\.[0-9a-f]{8}\.css`).FindString(signedIn.get("/console/").body)
	}
	reqs = append(reqs, req{http.MethodGet, "/"}, req{http.MethodGet, "/console"}, req{http.MethodGet, css},
		req{http.MethodGet, "/console/static/nope.12345678.css"}, req{http.MethodGet, "/console/nope"},
		req{http.MethodDelete, "/console/campaigns"})
	for _, who := range []struct {
		name string
		b    *browser
	}{{"signed out", e.browser()}, {"signed in", signedIn}} {
		for _, rq := range reqs {
			var a answer
			if rq.method == http.MethodPost {
				a = who.b.postForm(rq.path, nil)
			} else {
				a = who.b.do(rq.method, rq.path, nil)
			}
			what := who.name + " " + rq.method + " " + rq.path
			if a.status >= 500 {
				t.Errorf("%s: status %d", what, a.status)
			}
			for k, v := range consoleHeaders {
				if got := a.header.Get(k); got != v {
					t.Errorf("%s: %s = %q, want %q", what, k, got, v)
				}
			}
			cache := a.header.Get("Cache-Control")
			if rq.path == css && a.status == http.StatusOK {
				if cache != "public, max-age=31536000, immutable" {
					t.Errorf("%s: Cache-Control = %q", what, cache)
				}
			} else if cache != "no-store" {
				t.Errorf("%s: Cache-Control = %q, want no-store", what, cache)
			}
		}
	}
}

// TestHeadAnswersLikeGet: HEAD gets GET's status and headers, no body.
func TestHeadAnswersLikeGet(t *testing.T) {
	e := newEnv(t)
	b := e.browser()
	b.signIn(e.key)
	for _, p := range []string{"/console/", "/console/campaigns", "/console/sign-in/link?token=x", "/console/nope"} {
		get, head := b.get(p), b.do(http.MethodHead, p, nil)
		if get.status != head.status || get.header.Get("Content-Type") != head.header.Get("Content-Type") ||
			get.header.Get("Location") != head.header.Get("Location") {
			t.Errorf("%s: GET %d %q, HEAD %d %q", p, get.status, get.header.Get("Content-Type"), head.status, head.header.Get("Content-Type"))
		}
		if len(head.raw) != 0 {
			t.Errorf("HEAD %s: %d body bytes", p, len(head.raw))
		}
	}
}

// assetRef matches a fingerprinted static file reference in a page.
var assetRef = regexp.MustCompile(`/console/static/([a-z]+)\.([0-9a-f]{8})\.(css|js|svg)`)

// TestAssetsFingerprintedCachedCompressed: each static file a page
// references is served at <name>.<8 hex of its SHA-256>.<ext>, cached for a
// year, gzip-compressed when accepted; a module's imports name
// fingerprinted files too.
func TestAssetsFingerprintedCachedCompressed(t *testing.T) {
	e := newEnv(t)
	b := e.browser()
	b.signIn(e.key)
	page := b.get("/console/")
	refs := assetRef.FindAllStringSubmatch(page.body, -1)
	seen := map[string]bool{}
	for i := 0; i < len(refs); i++ {
		ref := refs[i]
		if seen[ref[0]] {
			continue
		}
		seen[ref[0]] = true
		plain := b.do(http.MethodGet, ref[0], nil, "Accept-Encoding", "identity")
		wantStatus(t, ref[0], plain, http.StatusOK)
		sum := sha256.Sum256(plain.raw)
		if hex.EncodeToString(sum[:4]) != ref[2] {
			t.Errorf("%s: fingerprint %s, content hashes to %x", ref[0], ref[2], sum[:4])
		}
		if got := plain.header.Get("Cache-Control"); got != "public, max-age=31536000, immutable" {
			t.Errorf("%s: Cache-Control %q", ref[0], got)
		}
		wantType := map[string]string{"css": "text/css; charset=utf-8", "js": "text/javascript; charset=utf-8", "svg": "image/svg+xml"}[ref[3]]
		if got := plain.header.Get("Content-Type"); got != wantType {
			t.Errorf("%s: Content-Type %q, want %q", ref[0], got, wantType)
		}
		if plain.header.Get("Content-Encoding") != "" {
			t.Errorf("%s: compressed without Accept-Encoding: gzip", ref[0])
		}
		if ref[3] != "svg" {
			gz := b.do(http.MethodGet, ref[0], nil, "Accept-Encoding", "gzip, deflate")
			if gz.header.Get("Content-Encoding") != "gzip" || gz.body != plain.body || len(gz.raw) >= len(plain.raw) {
				t.Errorf("%s: gzip answer: encoding %q, %d bytes for %d plain", ref[0], gz.header.Get("Content-Encoding"), len(gz.raw), len(plain.raw))
			}
			if !strings.Contains(gz.header.Get("Vary"), "Accept-Encoding") {
				t.Errorf("%s: Vary %q", ref[0], gz.header.Get("Vary"))
			}
		}
		// Follow the module's imports.
		if strings.Contains(plain.body, `from "./`) || strings.Contains(plain.body, `from './`) {
			t.Errorf("%s imports an unfingerprinted file:\n%s", ref[0], plain.body)
		}
		refs = append(refs, assetRef.FindAllStringSubmatch(plain.body, -1)...)
	}
	for _, name := range []string{"console.css", "console.js", "campaigns.js", "icon.svg"} {
		found := false
		for ref := range seen {
			found = found || strings.HasPrefix(path.Base(ref), strings.TrimSuffix(name, path.Ext(name))+".")
		}
		if !found {
			t.Errorf("no page reference to %s (seen %v)", name, seen)
		}
	}
	// A page is compressed too, when accepted, and only then.
	gz := b.do(http.MethodGet, "/console/", nil, "Accept-Encoding", "gzip")
	if gz.header.Get("Content-Encoding") != "gzip" || !strings.Contains(gz.body, "<h1>Campaigns</h1>") {
		t.Errorf("page with gzip: encoding %q", gz.header.Get("Content-Encoding"))
	}
	for _, ae := range []string{"identity", "gzip;q=0", "br"} {
		if a := b.do(http.MethodGet, "/console/", nil, "Accept-Encoding", ae); a.header.Get("Content-Encoding") != "" {
			t.Errorf("Accept-Encoding %q: Content-Encoding %q", ae, a.header.Get("Content-Encoding"))
		}
	}
}

// inlineCode finds what the CSP would block in a template: inline scripts,
// style elements or attributes, event handler attributes, javascript: URLs.
var inlineCode = regexp.MustCompile(`(?i)<script(?:\s[^>]*)?>\s*[^<\s]|<style|\sstyle\s*=|\son[a-z]+\s*=|javascript:`)

// TestNoInlineCodeAndSmallAssets: the templates hold nothing the CSP
// forbids, every script is a module from a file, the scripts never use
// innerHTML (data is set with textContent), and JS + CSS stay small (the
// whole console's budget is 200 KB).
func TestNoInlineCodeAndSmallAssets(t *testing.T) {
	tmpl, err := fs.Glob(os.DirFS("templates"), "*.html")
	if err != nil || len(tmpl) == 0 {
		t.Fatalf("templates: %v %v", tmpl, err)
	}
	for _, name := range tmpl {
		b, err := os.ReadFile("templates/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if m := inlineCode.Find(b); m != nil {
			t.Errorf("templates/%s: %q is blocked by the CSP", name, m)
		}
		for _, s := range regexp.MustCompile(`<script[^>]*>`).FindAll(b, -1) {
			if !strings.Contains(string(s), `type="module"`) || !strings.Contains(string(s), `src="{{asset`) {
				t.Errorf("templates/%s: %s is not a module from a static file", name, s)
			}
		}
	}
	var total int
	static, err := os.ReadDir("static")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range static {
		b, err := os.ReadFile("static/" + f.Name())
		if err != nil {
			t.Fatal(err)
		}
		switch path.Ext(f.Name()) {
		case ".js":
			if strings.Contains(string(b), "innerHTML") || strings.Contains(string(b), "insertAdjacentHTML") || strings.Contains(string(b), "document.write") {
				t.Errorf("static/%s writes HTML; set textContent", f.Name())
			}
			fallthrough
		case ".css":
			total += len(b)
		}
	}
	if total > 200<<10 {
		t.Errorf("JS + CSS = %d bytes, over the 200 KB budget", total)
	}
}
