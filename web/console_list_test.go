package web_test

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// consolePage GETs a console page with a session cookie and returns its
// status and HTML.
func (ce *campEnv) consolePage(cookie, path string) (int, string) {
	ce.t.Helper()
	req, err := http.NewRequest(http.MethodGet, ce.srv.URL+path, nil)
	if err != nil {
		ce.t.Fatal(err)
	}
	req.Header.Set("Cookie", cookie)
	status, body, hdr := ce.hookDo(req)
	if ct := hdr.Get("Content-Type"); status == http.StatusOK && ct != "text/html; charset=utf-8" {
		ce.t.Errorf("GET %s: Content-Type %q", path, ct)
	}
	return status, body
}

// consoleRow matches a campaign's row of the console's list.
var consoleRow = regexp.MustCompile(`<tr data-campaign-id="(\d+)">`)

// TestConsoleCampaignsList: the console's list shows the organization's
// campaigns as the API gives them (through the API, with the session
// cookie): user data escaped, progress and counts, paged with before_id.
func TestConsoleCampaignsList(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{})
	s := ce.setup(false)
	cookie, _ := ce.consoleSession(ce.keyA)

	evil := "<script>alert(1)</script>"
	first := id(t, ce.createCampaign(ce.keyA, campBody(evil, s.workflowID, ce.upload(ce.keyA, campCSV(3)))), "id")
	var ids []int64
	for i := range 50 {
		ids = append(ids, id(t, ce.createCampaign(ce.keyA, campBody(fmt.Sprintf("batch %d", i), s.workflowID, ce.upload(ce.keyA, campCSV(1)))), "id"))
	}
	// Organization B's campaigns are not listed.
	sb := campSetup{workflowID: ce.workflow(ce.keyB, "b", campDefinition)}
	bcfg := ce.twilioConfig(ce.keyB, "b", true, false)
	ce.callerID(ce.keyB, bcfg, "+14155550199")
	ce.createCampaign(ce.keyB, campBody("secret of b", sb.workflowID, ce.upload(ce.keyB, campCSV(1))))

	status, page1 := ce.consolePage(cookie, "/console/")
	if status != http.StatusOK {
		t.Fatalf("GET /console/: %d: %s", status, page1)
	}
	rows := consoleRow.FindAllStringSubmatch(page1, -1)
	if len(rows) != 50 {
		t.Fatalf("page 1 has %d rows, want 50", len(rows))
	}
	if rows[0][1] != fmt.Sprint(ids[49]) || rows[49][1] != fmt.Sprint(ids[0]) {
		t.Fatalf("page 1 runs from %s to %s, want newest first (%d to %d)", rows[0][1], rows[49][1], ids[49], ids[0])
	}
	if strings.Contains(page1, "secret of b") {
		t.Fatal("organization B's campaign is listed for A")
	}
	older := fmt.Sprintf(`href="/console/campaigns?before_id=%d"`, ids[0])
	if !strings.Contains(page1, older) || strings.Contains(page1, ">Newest<") {
		t.Fatalf("page 1 lacks the link %s (or has Newest)", older)
	}

	status, page2 := ce.consolePage(cookie, fmt.Sprintf("/console/campaigns?before_id=%d", ids[0]))
	if status != http.StatusOK {
		t.Fatalf("page 2: %d: %s", status, page2)
	}
	rows = consoleRow.FindAllStringSubmatch(page2, -1)
	if len(rows) != 1 || rows[0][1] != fmt.Sprint(first) {
		t.Fatalf("page 2 rows %v, want only campaign %d", rows, first)
	}
	if strings.Contains(page2, "before_id=") || !strings.Contains(page2, `href="/console/campaigns">Newest</a>`) {
		t.Fatalf("page 2: an Older link, or no Newest link:\n%s", page2)
	}
	// The name is text, never markup.
	if strings.Contains(page2, evil) || !strings.Contains(page2, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Fatalf("the campaign name is not escaped:\n%s", page2)
	}
	for _, want := range []string{
		`<progress max="3" value="0" data-field="progress"`,
		`<span class="state state-draft" data-field="state">draft</span>`,
		`<td class="num" data-field="total_rows">3</td>`,
		`<td class="num" data-field="processed_rows">0</td>`,
	} {
		if !strings.Contains(page2, want) {
			t.Errorf("page 2 lacks %s", want)
		}
	}

	// A before_id the API refuses is the API's 422 detail on an error page.
	status, bad := ce.consolePage(cookie, "/console/campaigns?before_id=x")
	if status != http.StatusUnprocessableEntity || !strings.Contains(bad, "before_id") {
		t.Fatalf("before_id=x: %d:\n%s", status, bad)
	}
}
