package browsertest_test

// The workflows pages in a real browser: validation errors beside the
// nodes and edges they name, the drawing of the graph, a JSON syntax error
// with its place, saving a fix; creating and deleting (a confirmation page,
// no dialog); a large definition that keeps the page responsive; a phone's
// width.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// wfBroken has an edge to a missing node (e2 → ghost) and a node without a
// prompt (bye); one node has a position, the other is laid out.
const wfBroken = `{"nodes":[` +
	`{"id":"start","type":"startCall","position":{"x":0,"y":0},"data":{"name":"Greeting","prompt":"Say hello."}},` +
	`{"id":"bye","type":"endCall","data":{"name":"Goodbye"}}],` +
	`"edges":[{"id":"e1","source":"start","target":"bye","data":{"label":"Done","condition":"Said"}},` +
	`{"id":"e2","source":"start","target":"ghost","data":{"label":"Lost","condition":"Never"}}]}`

// wfFixed is wfBroken fixed: bye has a prompt, e2 is gone, and a third
// node joins in between.
const wfFixed = `{"nodes": [
{"id": "start", "type": "startCall", "position": {"x": 0, "y": 0}, "data": {"name": "Greeting", "prompt": "Say hello."}},
{"id": "ask", "type": "agentNode", "data": {"name": "Ask", "prompt": "Ask how they are."}},
{"id": "bye", "type": "endCall", "data": {"name": "Goodbye", "prompt": "Hang up."}}],
"edges": [
{"id": "e1", "source": "start", "target": "ask", "data": {"label": "Done", "condition": "Said"}},
{"id": "e3", "source": "ask", "target": "bye", "data": {"label": "Answered", "condition": "They answered"}}]}`

// createWorkflow creates a workflow through the API and returns its id.
func (o *org) createWorkflow(name, def string) int64 {
	o.t.Helper()
	wf := o.call(http.MethodPost, "/api/v1/workflow",
		map[string]any{"name": name, "workflow_definition": json.RawMessage(def)}, http.StatusOK)
	return idOf(o.t, wf, "id")
}

// setDefinition replaces the editor's definition with text, as pasting it
// does (one input event).
func (tb *tab) setDefinition(text string) {
	tb.t.Helper()
	evalJS[bool](tb, fmt.Sprintf(`(() => { const a = document.getElementById('wf-definition');
		a.focus(); a.select(); return document.execCommand('insertText', false, %s); })()`, jsString(text)))
}

// takeRefusal takes the browser's log of the API's refusal of a save (the
// status the test meant to get) and fails the test for any other error of
// the page.
func (tb *tab) takeRefusal(status string) {
	tb.t.Helper()
	for _, p := range tb.takeProblems() {
		if !strings.Contains(p, "status of "+status) || !strings.Contains(p, "/api/v1/workflow/") {
			tb.t.Errorf("the page reported an error: %s", p)
		}
	}
}

// waitDrawn waits until the drawing shows the current definition.
func (tb *tab) waitDrawn() {
	tb.t.Helper()
	tb.waitVisible(`#wf-drawing[data-state="ready"] svg`)
}

// Validation errors of a workflow show beside the node and the edge they
// name, and the node's box turns red; a JSON syntax error shows its line
// and column; the fix, saved, validates clean.
func TestWorkflowErrorsBesideNodes(t *testing.T) {
	o := newOrg(t)
	id := o.createWorkflow("broken", wfBroken)
	tb := newTab(t)
	tb.signIn(o.key)
	tb.goTo(fmt.Sprintf("/console/workflows/%d", id))
	tb.waitDrawn()
	if n := tb.count("#wf-drawing g.wf-box"); n != 2 {
		t.Errorf("the drawing has %d boxes, want 2", n)
	}
	if n := tb.count(`#wf-drawing path.wf-edge`); n != 1 {
		t.Errorf("the drawing has %d arrows, want 1 (e2's target is missing)", n)
	}

	tb.clickButton("Validate")
	tb.waitText(`li[data-node-id="bye"] .wf-entry-errors`, "data.prompt: Node prompt is required")
	tb.waitText(`li[data-edge-id="e2"] .wf-entry-errors`, "target: Edge references missing node")
	tb.waitText("#wf-result", "The saved definition has 2 problem(s).")
	if got := tb.text(`li[data-node-id="start"]`); strings.Contains(got, "required") || strings.Contains(got, "missing") {
		t.Errorf("the valid node start shows a problem: %q", got)
	}
	tb.waitVisible(`#wf-drawing g.wf-box.wf-bad[data-node-id="bye"]`)
	if n := tb.count(`#wf-drawing g.wf-box.wf-bad`); n != 1 {
		t.Errorf("%d boxes are marked bad, want 1 (bye)", n)
	}
	// The problem list links to the entry: following it focuses the node.
	tb.click(`#wf-problems a[href="#wf-node-1"]`)
	if focused := evalJS[string](tb, `document.activeElement.dataset.nodeId || ''`); focused != "bye" {
		t.Errorf("following the problem's link focused %q, want the entry of bye", focused)
	}
	tb.screenshot(filepath.Join(screenshotDir(t), "workflow-errors.png"))

	// JSON that does not parse: the place is named, the drawing stays.
	tb.setDefinition("{\n  \"nodes\": [}")
	tb.waitText("#wf-definition-error", "JSON syntax error at line 2, column 13")
	tb.waitVisible(`#wf-drawing[data-state="stale"] svg`)

	tb.setDefinition(wfFixed)
	tb.waitGone("#wf-definition-error:not(:empty)")
	tb.waitDrawn()
	if n := tb.count("#wf-drawing g.wf-box"); n != 3 {
		t.Errorf("after the fix the drawing has %d boxes, want 3", n)
	}
	tb.clickButton("Save")
	tb.waitText("#wf-status", "Saved.")
	tb.waitText("#wf-result", "The saved definition is valid.")
	tb.clickButton("Validate")
	tb.waitText("#wf-result", "The saved definition is valid.")
	tb.waitDrawn()
	if n := tb.count(".wf-entry-errors, #wf-drawing .wf-bad, #wf-problems li"); n != 0 {
		t.Errorf("after the fix %d problems are still shown", n)
	}
	wf := o.call(http.MethodGet, fmt.Sprintf("/api/v1/workflow/%d", id), nil, http.StatusOK)
	nodes, _ := wf["workflow_definition"].(map[string]any)["nodes"].([]any)
	if len(nodes) != 3 {
		t.Errorf("the saved definition has %d nodes, want 3: %v", len(nodes), wf["workflow_definition"])
	}
}

// A save the API refuses shows the problem at its field, with the text
// kept: a name in use (409) at the name, a definition that is not an
// object (422) at the definition; nothing is saved.
func TestWorkflowSaveRefusedAtFields(t *testing.T) {
	o := newOrg(t)
	o.createWorkflow("taken", wfFixed)
	id := o.createWorkflow("mine", wfBroken)
	tb := newTab(t)
	tb.signIn(o.key)
	tb.goTo(fmt.Sprintf("/console/workflows/%d", id))
	tb.waitDrawn()
	tb.fill("Name", "taken")
	tb.clickButton("Save")
	tb.waitText("#wf-name-error", `a workflow named "taken" already exists`)
	if got := evalJS[string](tb, `document.getElementById('wf-name').getAttribute('aria-invalid') || ''`); got != "true" {
		t.Errorf("the name field's aria-invalid = %q after a name in use", got)
	}
	tb.takeRefusal("409")
	tb.fill("Name", "mine")
	tb.setDefinition("[1, 2]")
	tb.clickButton("Save")
	tb.waitText("#wf-definition-error", "Input should be a valid dictionary")
	if got := evalJS[string](tb, `document.getElementById('wf-definition').value`); got != "[1, 2]" {
		t.Errorf("the definition after the refusal reads %q", got)
	}
	tb.takeRefusal("422")
	wf := o.call(http.MethodGet, fmt.Sprintf("/api/v1/workflow/%d", id), nil, http.StatusOK)
	if wf["name"] != "mine" {
		t.Errorf("the workflow's name after the refusals: %v", wf["name"])
	}
	if def, _ := json.Marshal(wf["workflow_definition"]); !strings.Contains(string(def), `"ghost"`) {
		t.Errorf("the definition changed: %s", def)
	}
}

// A new workflow is created from the editor and opens as saved; deleting
// it asks on a page of its own (no dialog) and goes back to the list.
func TestWorkflowCreateAndDelete(t *testing.T) {
	o := newOrg(t)
	tb := newTab(t)
	tb.signIn(o.key)
	tb.goTo("/console/workflows")
	tb.clickButton("New workflow")
	tb.waitPath("/console/workflows/new")
	tb.waitDrawn()
	tb.fill("Name", "outreach")
	tb.clickButton("Create")
	tb.waitText("#wf-status", "Saved.")
	if !strings.HasPrefix(tb.path(), "/console/workflows/") || tb.path() == "/console/workflows/new" {
		t.Fatalf("after create the page is %s", tb.path())
	}
	tb.clickButton("Delete…")
	tb.waitText("h1", "Delete the workflow “outreach”?")
	tb.clickButton("Delete")
	tb.waitPath("/console/workflows")
	tb.waitText("main", "Deleted the workflow “outreach”.")
	if got := o.call(http.MethodGet, "/api/v1/workflow", nil, http.StatusOK); len(got["workflows"].([]any)) != 0 {
		t.Errorf("workflows after delete: %v", got)
	}
}

// A definition near the API's limit (3,000 nodes, about 1 MiB) opens and
// stays responsive: the lists show 200 entries at first (more on demand),
// the drawing its first 400 nodes, and after an edit the page redraws in
// slices, never holding the browser for long.
func TestWorkflowLargeDefinitionStaysResponsive(t *testing.T) {
	o := newOrg(t)
	id := o.createWorkflow("large", largeWorkflow(3000))
	tb := newTab(t)
	tb.signIn(o.key)
	tb.goTo(fmt.Sprintf("/console/workflows/%d", id))
	tb.waitDrawn()
	if n := tb.count("#wf-drawing g.wf-box"); n != 400 {
		t.Errorf("the drawing has %d boxes, want the first 400", n)
	}
	tb.waitText("#wf-drawing-note", "3000 node(s), 2999 edge(s). The drawing shows the first 400 nodes")
	if n := tb.count("#wf-nodes li.wf-entry"); n != 200 {
		t.Errorf("the node list shows %d entries, want 200", n)
	}
	tb.clickButton("Show 200 more (2800 not listed)")
	tb.waitVisible("#wf-node-399")
	if focused := evalJS[string](tb, `document.activeElement.id`); focused != "wf-node-200" {
		t.Errorf("after Show more the focus is on %q, want the first new entry", focused)
	}

	// Edit, then measure the longest gap between timer ticks until the
	// redraw is done.
	gap := evalJS[float64](tb, `new Promise(resolve => {
		const d = document.getElementById('wf-drawing');
		const a = document.getElementById('wf-definition');
		a.value = a.value.replace('"Step 5"', '"Step five"');
		a.dispatchEvent(new Event('input'));
		let last = performance.now(), worst = 0, seen = false;
		const tick = setInterval(() => {
			const now = performance.now();
			worst = Math.max(worst, now - last);
			last = now;
			if (d.dataset.state === 'drawing') seen = true;
			if (seen && d.dataset.state === 'ready') { clearInterval(tick); resolve(worst); }
		}, 5);
	})`)
	t.Logf("longest pause of the page while redrawing 3,000 nodes: %.0f ms", gap)
	if gap > float64(time.Second/time.Millisecond) {
		t.Errorf("the page was held for %.0f ms while redrawing", gap)
	}
	if got := evalJS[string](tb, `document.querySelector('li[data-node-id="n5"]').textContent`); !strings.Contains(got, "Step five") {
		t.Errorf("after the edit the entry of n5 reads %q", got)
	}
}

// The editor fits a phone's width: nothing scrolls sideways, the controls
// are on screen.
func TestWorkflowEditorFitsPhone(t *testing.T) {
	o := newOrg(t)
	id := o.createWorkflow("phone", wfBroken)
	tb := newTab(t)
	tb.setViewport(phoneView)
	tb.signIn(o.key)
	tb.goTo(fmt.Sprintf("/console/workflows/%d", id))
	tb.waitDrawn()
	tb.clickButton("Validate")
	tb.waitText("#wf-result", "problem(s)")
	tb.checkFits("workflow editor")
	tb.screenshot(filepath.Join(screenshotDir(t), "workflow-phone.png"))
	tb.goTo("/console/workflows")
	tb.waitVisible("table.workflows")
	tb.checkFits("workflows")
}

// largeWorkflow is a valid chain of n nodes without positions.
func largeWorkflow(n int) string {
	var sb strings.Builder
	sb.WriteString(`{"nodes":[`)
	prompt := strings.Repeat("Talk about the offer and listen. ", 4)
	for i := range n {
		typ := "agentNode"
		switch i {
		case 0:
			typ = "startCall"
		case n - 1:
			typ = "endCall"
		}
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"id":"n%d","type":%q,"data":{"name":"Step %d","prompt":%q}}`, i, typ, i, prompt)
	}
	sb.WriteString(`],"edges":[`)
	for i := 1; i < n; i++ {
		if i > 1 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"id":"e%d","source":"n%d","target":"n%d","data":{"label":"Next %d","condition":"Done with step %d"}}`, i, i-1, i, i, i-1)
	}
	sb.WriteString(`]}`)
	return sb.String()
}
