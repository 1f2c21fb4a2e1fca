package browsertest_test

// The suppression list in a real browser: a CSV imported through the
// presigned upload, its invalid rows shown; numbers added and deleted
// through the forms.

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
)

// A CSV chosen in the import form is uploaded (presigned URL, PUT) and
// imported with its source_id: the page reports what was added and the
// rows that were not, and the API lists the numbers with source csv.
func TestSuppressionsImportCSV(t *testing.T) {
	o := newOrg(t)
	csv := fmt.Sprintf("phone_number,name\n%s,Ann\n%s,Bob\nnot a number,Cy\n%s,Ann again\n", o.number(0), o.number(1), o.number(0))
	file := filepath.Join(t.TempDir(), "do-not-call.csv")
	if err := os.WriteFile(file, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	tb := newTab(t)
	tb.signIn(o.key)
	tb.goTo("/console/suppressions")
	tb.waitText("main", "The list is empty.")
	tb.do("choose the CSV file", chromedp.SetUploadFiles(chromedp.CSS("#csv_file"), []string{file}))
	tb.typeInto("#import-reason", "complaint")
	tb.clickButton("Import")
	tb.waitText("#result", "The file was imported")
	for field, want := range map[string]string{"added": "2", "already_present": "1", "invalid_count": "1"} {
		if got := tb.text(fmt.Sprintf(`#result [data-field=%q]`, field)); got != want {
			t.Errorf("%s = %q, want %q", field, got, want)
		}
	}
	tb.waitText("#result table.invalid", "not a number")
	if got := tb.text("#result table.invalid td"); got != "4" {
		t.Errorf("the invalid row is %q, want row 4", got)
	}
	tb.waitText("table.suppressions", o.number(1))

	list := o.call(http.MethodGet, "/api/v1/suppressions", nil, http.StatusOK)["suppressions"].([]any)
	if len(list) != 2 {
		t.Fatalf("entries: %v", list)
	}
	for _, e := range list {
		if e := e.(map[string]any); e["source"] != "csv" || e["reason"] != "complaint" {
			t.Errorf("entry %v, want source csv and the reason typed", e)
		}
	}
}

// Numbers typed in are added; an entry's Delete button removes it.
func TestSuppressionsAddAndDeleteInBrowser(t *testing.T) {
	o := newOrg(t)
	tb := newTab(t)
	tb.signIn(o.key)
	tb.goTo("/console/suppressions")
	tb.typeInto("#numbers", o.number(2)+"\n"+o.number(3))
	tb.clickButton("Add to the list")
	tb.waitText("#result", "The numbers were added")
	tb.waitText("table.suppressions", o.number(3))

	tb.fill("Find a number", o.number(3))
	tb.clickButton("Search")
	if err := tb.waitFor(waitTimeout, "the search's page", `() => location.search.includes('number=') &&
		document.querySelectorAll('tr[data-suppression-id]').length === 1`); err != nil {
		t.Fatalf("%v (%d entries shown)", err, tb.count("tr[data-suppression-id]"))
	}
	tb.waitText("table.suppressions", o.number(3))
	tb.click(fmt.Sprintf(`button[aria-label="Delete %s from the list"]`, o.number(3)))
	tb.waitText(".notice", "The entry was deleted")
	list := o.call(http.MethodGet, "/api/v1/suppressions", nil, http.StatusOK)["suppressions"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["phone_number"] != o.number(2) {
		t.Errorf("entries after the delete: %v", list)
	}
}

// typeInto types value into the empty field of the CSS selector (fill
// finds a field by its label, the first of that name; and its clearing
// fails on an empty textarea).
func (tb *tab) typeInto(sel, value string) {
	tb.t.Helper()
	tb.do("type into "+sel, chromedp.WaitVisible(chromedp.CSS(sel)), chromedp.SendKeys(chromedp.CSS(sel), value))
}
