package console_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// The calls table shows a contact column: by default the first CSV column
// with "name" in it (first_name here), escaped, from the API's ?columns=;
// the picker offers the campaign's columns but the phone number, "none"
// hides it, and the pages keep the choice.
func TestCampaignCallsContactColumn(t *testing.T) {
	e := newEnv(t)
	b := e.browser()
	b.signIn(e.key)
	id := e.campaign(e.p.OrganizationID, "named", 51)
	path := fmt.Sprintf("/console/campaigns/%d", id)

	a := b.get(path)
	wantStatus(t, "GET "+path, a, http.StatusOK)
	for _, want := range []string{
		`<th scope="col" data-field="contact_column">first_name</th>`,
		`<td data-field="contact">&lt;img src=x onerror=alert(1)&gt;</td>`,
		`<option value="first_name" selected>first_name</option>`,
	} {
		if !strings.Contains(a.body, want) {
			t.Errorf("the default page lacks %s", want)
		}
	}
	if n := strings.Count(a.body, `<td data-field="contact">`); n != 50 {
		t.Errorf("%d contact cells, want one per row of the page (50)", n)
	}
	if strings.Contains(a.body, `<img src=x`) {
		t.Error("a contact's cell is on the page unescaped")
	}
	if strings.Contains(a.body, `<option value="phone_number"`) {
		t.Error("the picker offers phone_number, which the table always shows")
	}

	none := b.get(path + "?column=")
	wantStatus(t, "column=", none, http.StatusOK)
	if strings.Contains(none.body, `data-field="contact`) || !strings.Contains(none.body, `<option value="">none</option>`) {
		t.Error("column= (none) still shows a contact column")
	}
	m := nextLink.FindStringSubmatch(none.body)
	if m == nil {
		t.Fatal("column=: no next page")
	}
	link, err := url.Parse(strings.ReplaceAll(m[1], "&amp;", "&"))
	if q := link.Query(); err != nil || !q.Has("column") || q.Get("column") != "" {
		t.Fatalf("next link %q does not keep column= (none)", m[1])
	}
	next := b.get(link.String())
	if strings.Contains(next.body, `data-field="contact`) || len(callRow.FindAllString(next.body, -1)) != 1 {
		t.Error("the next page of column= shows a contact column, or not the last call")
	}
}

// The progress card's count of contacts without an answer is not called
// "Failed" beside the outcome of that name: "Not reached", explained in its
// title.
func TestCampaignNotReachedCounter(t *testing.T) {
	e := newEnv(t)
	b := e.browser()
	b.signIn(e.key)
	id := e.campaign(e.p.OrganizationID, "counter", 1)
	for _, path := range []string{fmt.Sprintf("/console/campaigns/%d", id), "/console/campaigns"} {
		a := b.get(path)
		wantStatus(t, "GET "+path, a, http.StatusOK)
		if !strings.Contains(a.body, `title="Contacts whose final outcome is not answered: voicemail, busy, no answer, failed, canceled or unknown.`) ||
			!strings.Contains(a.body, "Not reached</") {
			t.Errorf("%s: no Not reached counter with its explanation", path)
		}
		if strings.Contains(a.body, "<dt>Failed</dt>") || strings.Contains(a.body, `class="num">Failed</th>`) {
			t.Errorf("%s: a counter is still called Failed", path)
		}
	}
}
