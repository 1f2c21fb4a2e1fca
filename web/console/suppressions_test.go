package console_test

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// The suppression list page through the real router: add (with the
// invalid numbers listed), search, server-side paging, delete, the import
// form's problems, another organization's entries, CSRF.

// suppressed returns the organization's entries (the API's first page).
func (e *env) suppressed(key string) []any {
	e.t.Helper()
	return e.keyCall(key, http.MethodGet, "/api/v1/suppressions?limit=1000", nil, http.StatusOK)["suppressions"].([]any)
}

func TestSuppressionsAddSearchDelete(t *testing.T) {
	e := newEnv(t)
	b := e.browser()
	b.signIn(e.key)
	csrf := b.csrf()

	empty := b.get("/console/suppressions")
	wantStatus(t, "empty list", empty, http.StatusOK)
	if !strings.Contains(empty.body, "The list is empty.") {
		t.Errorf("empty list: %s", empty.body)
	}

	a := b.postForm("/console/suppressions", form(csrf, "numbers", "+14155550100\n+1 (415) 555-0101, 12345\n\n",
		"reason", "<script>alert(1)</script>"))
	wantStatus(t, "add", a, http.StatusOK)
	body := html.UnescapeString(a.body)
	for _, want := range []string{`data-field="added">2<`, `data-field="already_present">0<`, `data-field="invalid_count">1<`,
		`<td class="num">3</td><td><code>12345</code></td>`, "+14155550100", "+14155550101"} {
		if !strings.Contains(body, want) {
			t.Errorf("the add's page lacks %s", want)
		}
	}
	if strings.Contains(a.body, "<script>alert(1)</script>") || !strings.Contains(a.body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("the reason is not shown as text")
	}
	list := e.suppressed(e.key)
	if len(list) != 2 || list[0].(map[string]any)["reason"] != "<script>alert(1)</script>" || list[0].(map[string]any)["source"] != "api" {
		t.Fatalf("entries: %v", list)
	}

	found := b.get("/console/suppressions?number=" + url.QueryEscape("+1 415 555 0101"))
	wantStatus(t, "search", found, http.StatusOK)
	if got := strings.Count(found.body, "data-suppression-id="); got != 1 || !strings.Contains(html.UnescapeString(found.body), "+14155550101") {
		t.Errorf("search found %d entries: %s", got, found.body)
	}
	bad := b.get("/console/suppressions?number=nope")
	wantStatus(t, "bad search", bad, http.StatusUnprocessableEntity)
	if !strings.Contains(bad.body, `id="number-error"`) || !strings.Contains(bad.body, `value="nope"`) {
		t.Errorf("bad search: %s", bad.body)
	}

	id := int64(list[0].(map[string]any)["id"].(float64))
	a = b.postForm(fmt.Sprintf("/console/suppressions/%d/delete", id), form(csrf))
	wantStatus(t, "delete", a, http.StatusSeeOther)
	if len(e.suppressed(e.key)) != 1 {
		t.Error("the entry was not deleted")
	}
	if after := b.get(a.header.Get("Location")); !strings.Contains(after.body, "The entry was deleted") {
		t.Errorf("after delete: %s", after.body)
	}
	wantStatus(t, "delete again", b.postForm(fmt.Sprintf("/console/suppressions/%d/delete", id), form(csrf)), http.StatusNotFound)
	wantStatus(t, "delete a bad id", b.postForm("/console/suppressions/x/delete", form(csrf)), http.StatusNotFound)
}

// A refused add keeps the values typed and shows the problem at its field;
// the import form without an upload, or with a key nothing was uploaded
// at, says so at the file field.
func TestSuppressionsFormProblems(t *testing.T) {
	e := newEnv(t)
	b := e.browser()
	b.signIn(e.key)
	csrf := b.csrf()
	a := b.postForm("/console/suppressions", form(csrf, "numbers", "+14155550100", "reason", "asked", "expires_at", "2001-01-01T10:00"))
	wantStatus(t, "expiry in the past", a, http.StatusUnprocessableEntity)
	if !strings.Contains(a.body, `id="add-expires-error"`) || !strings.Contains(a.body, `value="asked"`) ||
		!strings.Contains(html.UnescapeString(a.body), ">+14155550100</textarea>") {
		t.Errorf("refused add: %s", a.body)
	}
	a = b.postForm("/console/suppressions", form(csrf, "numbers", " \n ,"))
	wantStatus(t, "no numbers", a, http.StatusUnprocessableEntity)
	if !strings.Contains(a.body, `id="numbers-error">Type at least one number.`) {
		t.Errorf("no numbers: %s", a.body)
	}
	a = b.postForm("/console/suppressions/import", form(csrf, "source_id", ""))
	wantStatus(t, "import without upload", a, http.StatusUnprocessableEntity)
	if !strings.Contains(a.body, `id="csv-error">Choose a CSV file`) {
		t.Errorf("import without upload: %s", a.body)
	}
	a = b.postForm("/console/suppressions/import", form(csrf, "source_id", "campaigns/1/nothing.csv", "reason", "kept"))
	wantStatus(t, "import of nothing", a, http.StatusUnprocessableEntity)
	if !strings.Contains(a.body, `id="csv-error"`) || !strings.Contains(a.body, `id="import-reason" name="reason" value="kept"`) {
		t.Errorf("import of nothing: %s", a.body)
	}
	if n := len(e.suppressed(e.key)); n != 0 {
		t.Errorf("%d entries after refused adds", n)
	}
}

var nextPage = regexp.MustCompile(`href="(/console/suppressions\?after_id=\d+)"`)

// The list pages with the API's after_id, 50 entries a page.
func TestSuppressionsPaging(t *testing.T) {
	e := newEnv(t)
	numbers := make([]string, 120)
	for i := range numbers {
		numbers[i] = fmt.Sprintf("+1415555%04d", 1000+i)
	}
	e.keyCall(e.key, http.MethodPost, "/api/v1/suppressions", map[string]any{"numbers": numbers}, http.StatusOK)
	b := e.browser()
	b.signIn(e.key)
	path, seen := "/console/suppressions", 0
	for page := 1; ; page++ {
		a := b.get(path)
		wantStatus(t, path, a, http.StatusOK)
		n := strings.Count(a.body, "data-suppression-id=")
		seen += n
		m := nextPage.FindStringSubmatch(a.body)
		if page < 3 && (n != 50 || m == nil) {
			t.Fatalf("page %d: %d entries, next %v", page, n, m)
		}
		if page > 1 && !strings.Contains(a.body, ">First page<") {
			t.Errorf("page %d has no link to the first", page)
		}
		if m == nil {
			if page != 3 || n != 20 {
				t.Errorf("last page %d has %d entries", page, n)
			}
			break
		}
		path = html.UnescapeString(m[1])
	}
	if seen != 120 {
		t.Errorf("saw %d entries, want 120", seen)
	}
}

// Another organization's entries are neither listed nor deletable; every
// POST route refuses a form without the CSRF token and changes nothing;
// signed out, the page redirects (GET and HEAD).
func TestSuppressionsIsolationCSRFAndSignIn(t *testing.T) {
	e := newEnv(t)
	other := e.otherKey()
	e.keyCall(other, http.MethodPost, "/api/v1/suppressions", map[string]any{"numbers": []string{"+14155550199"}}, http.StatusOK)
	e.keyCall(e.key, http.MethodPost, "/api/v1/suppressions", map[string]any{"numbers": []string{"+14155550100"}}, http.StatusOK)
	theirs := int64(e.suppressed(other)[0].(map[string]any)["id"].(float64))
	mine := int64(e.suppressed(e.key)[0].(map[string]any)["id"].(float64))
	b := e.browser()
	b.signIn(e.key)
	csrf := b.csrf()
	page := b.get("/console/suppressions")
	if strings.Contains(html.UnescapeString(page.body), "+14155550199") {
		t.Error("the other organization's number is listed")
	}
	wantStatus(t, "delete theirs", b.postForm(fmt.Sprintf("/console/suppressions/%d/delete", theirs), form(csrf)), http.StatusNotFound)
	if len(e.suppressed(other)) != 1 {
		t.Error("the other organization's entry was deleted")
	}

	for p, f := range map[string]url.Values{
		"/console/suppressions":                              {"numbers": {"+14155550101"}},
		"/console/suppressions/import":                       {"source_id": {"campaigns/1/x.csv"}},
		fmt.Sprintf("/console/suppressions/%d/delete", mine): {},
	} {
		wantStatus(t, "POST "+p+" without token", b.postForm(p, f), http.StatusForbidden)
		f.Set("csrf_token", "wrong")
		wantStatus(t, "POST "+p+" wrong token", b.postForm(p, f), http.StatusForbidden)
	}
	if got := e.suppressed(e.key); len(got) != 1 || int64(got[0].(map[string]any)["id"].(float64)) != mine {
		t.Errorf("entries after refused forms: %v", got)
	}

	out := e.browser()
	for _, m := range []string{http.MethodGet, http.MethodHead} {
		a := out.do(m, "/console/suppressions?number=1", nil)
		if a.status != http.StatusSeeOther || a.header.Get("Location") != "/console/sign-in?next="+url.QueryEscape("/console/suppressions?number=1") {
			t.Errorf("signed out %s: %d %q", m, a.status, a.header.Get("Location"))
		}
	}
	head := b.do(http.MethodHead, "/console/suppressions", nil)
	if head.status != http.StatusOK || len(head.raw) != 0 {
		t.Errorf("HEAD: %d, %d bytes", head.status, len(head.raw))
	}
}
