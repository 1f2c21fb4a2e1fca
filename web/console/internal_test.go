package console

import (
	"net/http/httptest"
	"testing"

	"github.com/outdial/outdial/store"
	"time"
)

func TestAgo(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	s := "2026-11-21T11:00:00.000Z"
	cases := []struct {
		at   any
		want string
	}{
		{now.Add(-30 * time.Second), "just now"},
		{now.Add(time.Minute), "just now"}, // a clock a little ahead
		{now.Add(-5 * time.Minute), "5 min ago"},
		{now.Add(-59 * time.Minute), "59 min ago"},
		{"2026-11-21T09:00:00.000Z", "3 h ago"},
		{&s, "1 h ago"},
		{(*string)(nil), ""},
		{now.Add(-47 * time.Hour), "47 h ago"},
		{now.Add(-72 * time.Hour), "3 days ago"},
		{"yesterday", ""},
		{42, ""},
	}
	for _, tc := range cases {
		if got := ago(now, tc.at); got != tc.want {
			t.Errorf("ago(%v) = %q, want %q", tc.at, got, tc.want)
		}
	}
}

func TestPercent(t *testing.T) {
	cases := []struct{ part, whole, want int64 }{
		{0, 0, 0}, {5, 0, 0}, {0, 10, 0}, {1, 3, 33}, {2, 3, 66}, {3, 3, 100}, {4, 3, 100}, {-1, 3, 0},
		{999_999, 1_000_000, 99},
	}
	for _, tc := range cases {
		if got := percent(tc.part, tc.whole); got != tc.want {
			t.Errorf("percent(%d, %d) = %d, want %d", tc.part, tc.whole, got, tc.want)
		}
	}
}

func TestAcceptsGzip(t *testing.T) {
	cases := map[string]bool{
		"": false, "gzip": true, "GZIP": true, "br, gzip;q=0.8": true, "gzip;q=0": false, "gzip; q=0": false,
		"gzip;q=0.000": false, "deflate, br": false, "x-gzip": false, "*": false,
	}
	for header, want := range cases {
		r := httptest.NewRequest("GET", "/console/", nil)
		r.Header.Set("Accept-Encoding", header)
		if got := acceptsGzip(r); got != want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", header, got, want)
		}
	}
}

func TestRewriteImports(t *testing.T) {
	raw := map[string][]byte{
		"a.js": []byte(`import { x } from "./b.js"; import y from './c.js'; const s = "./b.jsx";`),
		"b.js": []byte(`export const x = 1;`),
		"c.js": []byte(`export default 2;`),
	}
	if _, ok := rewriteImports(raw["a.js"], "a.js", raw, map[string]string{"b.js": "/B"}); ok {
		t.Fatal("rewrote a module whose import c.js has no URL yet")
	}
	got, ok := rewriteImports(raw["a.js"], "a.js", raw, map[string]string{"b.js": "/B", "c.js": "/C"})
	if want := `import { x } from "/B"; import y from '/C'; const s = "./b.jsx";`; !ok || string(got) != want {
		t.Fatalf("rewrite = %q, %v; want %q", got, ok, want)
	}
	if got, ok := rewriteImports([]byte(`a{}`), "x.css", raw, nil); !ok || string(got) != "a{}" {
		t.Fatalf("a stylesheet is not rewritten: %q", got)
	}
}

// TestTemplatesParse: every page template parses with the layout, and every
// static file fingerprints (the console parses and fingerprints them on
// first use, not at start-up: a broken one fails here).
func TestTemplatesParse(t *testing.T) {
	tmpls := mustParseTemplates(templateFS, store.RoleAdmin)
	if len(tmpls) < 10 {
		t.Fatalf("%d page templates", len(tmpls))
	}
	assets, urls := mustLoadAssets(staticFS)
	if len(assets) == 0 || len(assets) != len(urls) {
		t.Fatalf("%d assets, %d urls", len(assets), len(urls))
	}
	for _, a := range assets {
		if gz := a.compressed(); gz != nil && len(gz) >= len(a.body) {
			t.Fatalf("%s: compressed %d bytes >= %d", a.url, len(gz), len(a.body))
		}
	}
}

// canDo answers what web/roles answers, for the three roles and no
// session, and refuses an operation the API has no route for.
func TestCanDo(t *testing.T) {
	tests := []struct {
		op                            string
		none, viewer, operator, admin bool
	}{
		{"GET /api/v1/campaign", false, true, true, true},
		{"POST /api/v1/campaign/:campaign_id/start", false, false, true, true},
		{"POST /api/v1/suppressions", false, false, true, true},
		{"DELETE /api/v1/suppressions/:suppression_id", false, false, false, true},
		{"PUT /api/v1/organizations/compliance", false, false, false, true},
		{"GET /api/v1/users", false, false, false, true},
	}
	for _, tt := range tests {
		for role, want := range map[store.Role]bool{"": tt.none, store.RoleViewer: tt.viewer, store.RoleOperator: tt.operator, store.RoleAdmin: tt.admin} {
			got, err := canDo(role, tt.op)
			if err != nil || got != want {
				t.Errorf("canDo(%q, %q) = %v, %v; want %v", role, tt.op, got, err, want)
			}
		}
	}
	for _, bad := range []string{"POST /api/v1/campaign/{id}/start", "POST", "GET /api/v1/nothing"} {
		if _, err := canDo(store.RoleAdmin, bad); err == nil {
			t.Errorf("canDo(%q) has no error", bad)
		}
	}
}
