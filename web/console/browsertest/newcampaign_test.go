package browsertest_test

// The new-campaign page in a real browser: a CSV uploaded through the
// presigned URL with the bar reaching 100%, a campaign created and started
// from the form and dialled by the Twilio simulator, a rejected file's
// problems as a table, a cell of markup in that table shown as text.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"
)

// newCampaignPath is the page under test.
const newCampaignPath = "/console/campaigns/new"

// chooseFile writes content to a temporary file named name and sets it as
// the file of the input matching sel, as choosing it in the file dialog
// does (the input's change event fires).
func (tb *tab) chooseFile(sel, name, content string) {
	tb.t.Helper()
	path := filepath.Join(tb.t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		tb.t.Fatal(err)
	}
	tb.do("choose the file "+name, chromedp.SetUploadFiles(chromedp.CSS(sel), []string{path}))
}

// emulateNetworkConditions is the DevTools command
// Network.emulateNetworkConditions (deprecated for ...ByRule, which this
// Chromium refuses; cdproto no longer lists it).
var emulateNetworkConditions = cdp.Command[networkConditions, cdp.Empty]{Method: "Network.emulateNetworkConditions"}

// networkConditions are emulateNetworkConditions' parameters.
type networkConditions struct {
	Offline            bool    `json:"offline"`
	Latency            float64 `json:"latency"`
	DownloadThroughput float64 `json:"downloadThroughput"`
	UploadThroughput   float64 `json:"uploadThroughput"`
}

// throttleUploads makes the tab send request bodies at most bytesPerSecond,
// as a slow link would.
func (tb *tab) throttleUploads(bytesPerSecond float64) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, waitTimeout)
	defer cancel()
	_, err := chromedp.Call(ctx, emulateNetworkConditions, networkConditions{DownloadThroughput: -1, UploadThroughput: bytesPerSecond})
	if err != nil {
		tb.t.Fatalf("throttle uploads: %v", err)
	}
}

// uploadCSV chooses content as contacts.csv on the new-campaign page and
// waits for the upload to finish; it returns the file_key the form holds.
func (tb *tab) uploadCSV(content string) string {
	tb.t.Helper()
	tb.chooseFile("#csv-file", "contacts.csv", content)
	tb.waitText("#upload-status", "Uploaded contacts.csv")
	key := evalJS[string](tb, `document.getElementById('source_id').value`)
	if !strings.HasPrefix(key, "campaigns/") {
		tb.t.Fatalf("source_id = %q after the upload, want a file_key", key)
	}
	return key
}

// The bar follows the upload from 0 to 100%, and the uploaded file is the
// one chosen: a campaign made through the API from the form's key has its
// contacts.
func TestNewCampaignUploadProgress(t *testing.T) {
	o := newOrg(t)
	s := o.readyToDial()
	tb := newTab(t)
	tb.signIn(o.key)
	tb.goTo(newCampaignPath)
	tb.waitVisible("#csv-file")
	if got := evalJS[string](tb, `document.getElementById('upload-progress').value + '/' + document.getElementById('upload-progress').max`); got != "0/100" {
		t.Fatalf("the bar before any upload: %s, want 0/100", got)
	}
	// Every value the bar takes, recorded as it changes.
	evalJS[bool](tb, `(() => {
		const bar = document.getElementById('upload-progress');
		window.barValues = [];
		new MutationObserver(() => window.barValues.push(bar.value)).observe(bar, {attributes: true, attributeFilter: ['value']});
		return true;
	})()`)

	// About 2 MB, sent to the object store at 4 MB/s: the browser reports
	// the upload's progress several times on the way.
	var b strings.Builder
	b.WriteString("phone_number,first_name,notes\n")
	pad := strings.Repeat("x", 1000)
	for i := range 19 {
		fmt.Fprintf(&b, "%s,Contact %d,%s\n", o.number(i), i, pad)
	}
	for b.Len() < 2<<20 {
		b.WriteString("\n") // blank lines are not rows
	}
	tb.throttleUploads(4 << 20)
	key := tb.uploadCSV(b.String())

	tb.waitText("#upload-percent", "100%")
	values := evalJS[[]float64](tb, `window.barValues`)
	if len(values) == 0 || values[len(values)-1] != 100 {
		t.Fatalf("the bar took %v, want it to end at 100", values)
	}
	if len(values) < 3 {
		t.Errorf("the bar took %v: no step between 0 and 100", values)
	}
	if !slices.IsSorted(values) {
		t.Errorf("the bar went back: %v", values)
	}
	if got := evalJS[float64](tb, `document.getElementById('upload-progress').value`); got != 100 {
		t.Errorf("the bar's value = %v, want 100", got)
	}
	if status := tb.text("#upload-status"); !strings.Contains(status, "(2.0 MiB)") {
		t.Errorf("status %q does not give the file's size", status)
	}
	c := o.call("POST", "/api/v1/campaign", map[string]any{"name": "from the console's upload",
		"workflow_id": s.workflowID, "source_id": key}, 200)
	if c["total_rows"] != 19.0 {
		t.Errorf("a campaign from the uploaded key has %v contacts, want 19", c["total_rows"])
	}
}

// A campaign created and started from the form, with a calling window
// edited in the slot editor, lands on its page, which follows it as the
// simulator answers every call.
func TestNewCampaignCreateAndStart(t *testing.T) {
	o := newOrg(t)
	s := o.readyToDial()
	tb := newTab(t)
	tb.signIn(o.key)
	tb.goTo(newCampaignPath)
	tb.waitVisible("#csv-file")
	tb.uploadCSV(o.contactsCSV(3))

	tb.fill("Name", "Spring reminders")
	if got := evalJS[string](tb, `document.getElementById('workflow_id').value`); got != fmt.Sprint(s.workflowID) {
		t.Errorf("workflow selected = %q, want the only one, %d", got, s.workflowID)
	}
	if got := evalJS[string](tb, `document.getElementById('telephony_configuration_id').value`); got != fmt.Sprint(s.configID) {
		t.Errorf("configuration selected = %q, want the default, %d", got, s.configID)
	}
	tb.fill("Calls at once", "2")
	tb.fill("New calls per second", "5")

	// The calling window: all day, weekdays (the first row's days) and the
	// weekend in a second row of the editor (a third one added and removed
	// on the way).
	tb.click("#schedule_enabled")
	tb.fill("Time zone", "Europe/Paris")
	tb.fill("From", "00:00")
	tb.fill("Until", "24:00")
	tb.clickButton("Add hours")
	tb.clickButton("Add hours")
	if n := tb.count("[data-slot-list] [data-slot]"); n != 3 {
		t.Fatalf("%d rows after adding two, want 3", n)
	}
	if got := evalJS[string](tb, `document.activeElement.id`); got != "slot-2-day-0" {
		t.Errorf("focus after adding a row is on %q, want its first day", got)
	}
	tb.click(`[aria-label="Remove hours 2"]`)
	if got := evalJS[[]string](tb, `[...document.querySelectorAll('[data-slot-list] [data-slot] input[name$="-start"]')].map(i => i.name)`); !slices.Equal(got, []string{"slot-0-start", "slot-1-start"}) {
		t.Errorf("rows after removing the second: %q, want slot-0 and slot-1", got)
	}
	tb.click("#slot-1-day-5")
	tb.click("#slot-1-day-6")
	tb.do("type the second row's hours",
		chromedp.SetValue(chromedp.CSS("#slot-1-start"), "00:00"), chromedp.SetValue(chromedp.CSS("#slot-1-end"), "24:00"))
	tb.screenshot(filepath.Join(screenshotDir(t), "new-campaign.png"))

	tb.clickButton("Create and start")
	if err := tb.waitFor(waitTimeout, "the campaign's page", `() => /^\/console\/campaigns\/\d+$/.test(location.pathname)`); err != nil {
		t.Fatalf("%v (the page is at %s: %s)", err, tb.path(), tb.text("main"))
	}
	id := regexp.MustCompile(`\d+$`).FindString(tb.path())
	tb.waitText("h1", "Spring reminders")
	tb.waitText(`[data-field="campaign_state"]`, "completed")

	var cid int64
	fmt.Sscan(id, &cid)
	c := o.campaign(cid)
	if c["processed_rows"] != 3.0 || c["max_concurrency"] != 2.0 || c["rate_limit_per_second"] != 5.0 {
		t.Errorf("campaign: processed %v, concurrency %v, rate %v; want 3, 2, 5", c["processed_rows"], c["max_concurrency"], c["rate_limit_per_second"])
	}
	sched, _ := c["schedule_config"].(map[string]any)
	if slots, _ := sched["slots"].([]any); sched["timezone"] != "Europe/Paris" || len(slots) != 7 {
		t.Errorf("schedule_config = %v, want Europe/Paris and 7 slots (Monday to Friday, Saturday and Sunday)", c["schedule_config"])
	}
	for i := range 3 {
		if n := srv.sim.CreatesTo(o.number(i)); n != 1 {
			t.Errorf("the simulator got %d calls to %s, want 1", n, o.number(i))
		}
	}
}

// problemRows reads the problems table as [row, column, value, problem]
// rows, once it is there.
func (tb *tab) problemRows() [][]string {
	tb.t.Helper()
	tb.waitVisible("#csv-problems table")
	return evalJS[[][]string](tb, `[...document.querySelectorAll('#csv-problems tbody tr')]
		.map(tr => [...tr.cells].map(td => td.textContent.trim()))`)
}

// createExpectingProblems uploads csv, names the campaign and presses
// "Create and start"; the page comes back with the problems.
func (tb *tab) createExpectingProblems(csv string) {
	tb.t.Helper()
	tb.goTo(newCampaignPath)
	tb.waitVisible("#csv-file")
	tb.uploadCSV(csv)
	tb.fill("Name", "rejected")
	tb.clickButton("Create and start")
	tb.waitText("#problem-summary", "The campaign was not created")
	// The answer to the form was a 422 page, which the browser logs.
	for _, p := range tb.takeProblems() {
		if !strings.Contains(p, "422") || !strings.Contains(p, newCampaignPath) {
			tb.t.Errorf("the page reported an error: %s", p)
		}
	}
}

// A file with an invalid number, a row missing its second column and a
// blank variable comes back as a table of row, column, value and problem;
// the form keeps its name and its upload.
func TestNewCampaignRejectedCSVTable(t *testing.T) {
	o := newOrg(t)
	o.readyToDial()
	tb := newTab(t)
	tb.signIn(o.key)
	csv := "phone_number,first_name\n" +
		o.number(0) + ",Ada\n" +
		"555-0100-999,Bob\n" +
		o.number(2) + "\n" +
		o.number(3) + ",\n"
	tb.createExpectingProblems(csv)
	rows := tb.problemRows()
	want := [][]string{
		{"3", "phone_number", "555-0100-999", "phone_number is not a valid phone number"},
		{"4", "—", "", "The row has 1 fields, the header has 2"},
		{"5", "first_name", "", "Column first_name is empty but the workflow uses {{first_name}}"},
	}
	if len(rows) != len(want) {
		t.Fatalf("problems table = %q, want %d rows like %q", rows, len(want), want)
	}
	for i, w := range want {
		if !slices.Equal(rows[i][:3], w[:3]) || !strings.HasPrefix(rows[i][3], w[3]) {
			t.Errorf("row %d = %q, want %q", i, rows[i], w)
		}
	}
	headers := evalJS[[]string](tb, `[...document.querySelectorAll('#csv-problems th')].map(th => th.textContent)`)
	if !slices.Equal(headers, []string{"Row", "Column", "Value", "Problem"}) {
		t.Errorf("table headers = %q", headers)
	}
	if got := evalJS[string](tb, `document.getElementById('name').value`); got != "rejected" {
		t.Errorf("the name field holds %q after the failed create, want it kept", got)
	}
	if got := tb.text("#upload-status"); !strings.Contains(got, "contacts.csv") {
		t.Errorf("upload status %q does not keep the upload", got)
	}
	if got := evalJS[string](tb, `document.activeElement.id`); got != "problem-summary" {
		t.Errorf("focus is on %q, want the problem summary", got)
	}

	// A corrected file, chosen again, goes through; the old problems go.
	tb.uploadCSV(o.contactsCSV(2))
	tb.waitGone("#csv-problems:not([hidden])")
	tb.clickButton("Create as draft")
	if err := tb.waitFor(waitTimeout, "the campaign's page", `() => /^\/console\/campaigns\/\d+$/.test(location.pathname)`); err != nil {
		t.Fatal(err)
	}
	tb.waitText(`[data-field="campaign_state"]`, "draft")
}

// A cell of markup in a rejected file is text in the problems table: no
// dialog, no element, nothing fetched from its src.
func TestNewCampaignProblemCellIsText(t *testing.T) {
	o := newOrg(t)
	o.readyToDial()
	tb := newTab(t)
	tb.signIn(o.key)
	csv := "phone_number,first_name\n" + xssName + "," + xssName + "\n" + o.number(1) + ",\"" + xssName + "\"\n" + o.number(1) + ",x\n"
	tb.createExpectingProblems(csv)
	rows := tb.problemRows()
	if len(rows) == 0 || rows[0][0] != "2" || rows[0][2] != xssName {
		t.Fatalf("problems table = %q, want row 2 with the cell %q as text", rows, xssName)
	}
	evalJS[bool](tb, `Promise.all([...document.images].map(i => i.complete ? 0 :
		new Promise(r => { i.addEventListener('load', r); i.addEventListener('error', r); }))).then(() => true)`)
	if got := tb.takeDialogs(); len(got) != 0 {
		t.Errorf("dialogs opened: %q", got)
	}
	if n := tb.count("#csv-problems img, img[src=\"x\"]"); n != 0 {
		t.Errorf("the page holds %d img elements made from the cell", n)
	}
	if fetched := evalJS[bool](tb, `performance.getEntriesByType('resource').some(e => new URL(e.name).pathname.endsWith('/x'))`); fetched {
		t.Error(`the page fetched the cell's src "x"`)
	}
}

// At a phone's width (390 px) the form fits, with a rejected file's
// problems table too: nothing sticks out sideways.
func TestNewCampaignFitsPhone(t *testing.T) {
	o := newOrg(t)
	o.readyToDial()
	tb := newTab(t)
	tb.setViewport(phoneView)
	tb.signIn(o.key)
	tb.createExpectingProblems("phone_number,first_name\n12345,Ada\n" + o.number(1) + "\n")
	tb.checkFits("new campaign")
	tb.screenshot(filepath.Join(screenshotDir(t), "new-campaign-phone.png"))
}

// A file that is not a CSV is refused before anything is sent, and says
// so; the form holds no key.
func TestNewCampaignRefusesOtherFiles(t *testing.T) {
	o := newOrg(t)
	tb := newTab(t)
	tb.signIn(o.key)
	tb.goTo(newCampaignPath)
	tb.waitVisible("#csv-file")
	tb.chooseFile("#csv-file", "contacts.txt", "phone_number\n+14155550100\n")
	tb.waitText("#upload-status", "Choose a .csv file")
	if got := evalJS[string](tb, `document.getElementById('csv-file').getAttribute('aria-invalid') + ' ' + document.getElementById('source_id').value`); got != "true " {
		t.Errorf("aria-invalid and source_id = %q, want true and no key", got)
	}
	if sent := evalJS[bool](tb, `performance.getEntriesByType('resource').some(e => e.name.includes('presigned-upload-url'))`); sent {
		t.Error("an upload of a .txt file was presigned")
	}
}
