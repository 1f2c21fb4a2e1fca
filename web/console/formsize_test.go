package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// A form larger than the console takes is refused as too large (413, with
// the limit in words), not as an expired form; one under it (a 1 MiB
// workflow definition pretty-printed and URL-encoded is several MiB) is
// read and its CSRF token checked.
func TestFormSizeLimit(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		name    string
		padding int
		want    int
	}{
		{"3 MiB", 3 << 20, http.StatusSeeOther},
		{"9 MiB", 9 << 20, http.StatusRequestEntityTooLarge},
	} {
		b := e.browser()
		b.signIn(e.key)
		form := url.Values{"csrf_token": {b.csrf()}, "padding": {strings.Repeat("x", tc.padding)}}
		a := b.postForm("/console/sign-out", form)
		if a.status != tc.want {
			t.Errorf("%s: status = %d, want %d: %.200s", tc.name, a.status, tc.want, a.body)
		}
		if tc.want == http.StatusRequestEntityTooLarge && !strings.Contains(a.body, "larger than the 8 MiB") {
			t.Errorf("%s: the page does not say the form is too large: %.300s", tc.name, a.body)
		}
	}
}
