package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/outdial/outdial/store"
)

// wfDefinition is a valid workflow: a greeting, then goodbye.
const wfDefinition = `{"nodes":[` +
	`{"id":"start","type":"startCall","position":{"x":0,"y":0},"data":{"name":"Greeting","prompt":"Say hello.","greeting":"Hi!"}},` +
	`{"id":"bye","type":"endCall","position":{"x":250,"y":0},"data":{"name":"Goodbye","prompt":"Hang up."}}],` +
	`"edges":[{"id":"e1","source":"start","target":"bye","data":{"label":"Done","condition":"Said"}}]}`

// wfInvalid has an edge to a missing node and a node without a prompt.
const wfInvalid = `{"nodes":[` +
	`{"id":"start","type":"startCall","data":{"name":"Greeting","prompt":"Say hello."}},` +
	`{"id":"bye","type":"endCall","data":{"name":"Goodbye"}}],` +
	`"edges":[{"id":"e1","source":"start","target":"bye","data":{"label":"Done","condition":"Said"}},` +
	`{"id":"e2","source":"start","target":"ghost","data":{"label":"Lost","condition":"Never"}}]}`

// createWorkflowAs creates a workflow with an API key and returns its id.
func (e *env) createWorkflowAs(key, name, def string) int64 {
	e.t.Helper()
	n, _ := json.Marshal(name)
	status, body := e.apiWithKey(key, http.MethodPost, "/api/v1/workflow", `{"name":`+string(n)+`,"workflow_definition":`+def+`}`)
	if status != http.StatusOK {
		e.t.Fatalf("create workflow %q: status = %d, want 200: %s", name, status, body)
	}
	var wf struct{ ID int64 }
	if err := json.Unmarshal([]byte(body), &wf); err != nil || wf.ID == 0 {
		e.t.Fatalf("create workflow: %v: %s", err, body)
	}
	return wf.ID
}

// apiWithKey calls the API with an API key (no cookie) and returns the
// status and body.
func (e *env) apiWithKey(key, method, path, body string) (int, string) {
	e.t.Helper()
	b := e.browser()
	var headers []string
	if key != "" {
		headers = append(headers, "X-API-Key", key)
	}
	var rd *strings.Reader
	if body != "" {
		rd = strings.NewReader(body)
		headers = append(headers, "Content-Type", "application/json")
	} else {
		rd = strings.NewReader("")
	}
	a := b.do(method, path, rd, headers...)
	return a.status, a.body
}

// storedDefinition returns workflow id's definition as the API answers it
// ("" with the status when it is not 200).
func (e *env) storedWorkflow(id int64) (int, string, string) {
	e.t.Helper()
	status, body := e.apiWithKey(e.key, http.MethodGet, fmt.Sprintf("/api/v1/workflow/%d", id), "")
	if status != http.StatusOK {
		return status, "", ""
	}
	var wf struct {
		Name string          `json:"name"`
		Def  json.RawMessage `json:"workflow_definition"`
	}
	if err := json.Unmarshal([]byte(body), &wf); err != nil {
		e.t.Fatalf("workflow %d: %v", id, err)
	}
	return status, wf.Name, string(wf.Def)
}

// The workflow pages signed out send the browser to sign in (and back);
// signed in they show the list, the new editor and a workflow's editor;
// HEAD answers as GET does, without a body.
func TestWorkflowPagesSignedInAndOut(t *testing.T) {
	e := newEnv(t)
	id := e.createWorkflowAs(e.key, "greeting", wfDefinition)
	pages := []string{"/console/workflows", "/console/workflows/new", fmt.Sprintf("/console/workflows/%d", id),
		fmt.Sprintf("/console/workflows/%d/delete", id)}
	out := e.browser()
	for _, p := range pages {
		for _, method := range []string{http.MethodGet, http.MethodHead} {
			a := out.do(method, p, nil)
			want := "/console/sign-in?next=" + url.QueryEscape(p)
			if a.status != http.StatusSeeOther || a.header.Get("Location") != want {
				t.Errorf("signed out %s %s: %d, Location %q; want 303 to %s", method, p, a.status, a.header.Get("Location"), want)
			}
		}
	}
	in := e.browser()
	in.signIn(e.key)
	wants := map[string][]string{
		pages[0]: {`<h1>Workflows</h1>`, fmt.Sprintf(`<a href="/console/workflows/%d">greeting</a>`, id), `aria-current="page">Workflows`},
		pages[1]: {`<h1>New workflow</h1>`, `<label for="wf-definition">`, `&#34;startCall&#34;`, `>Create</button>`},
		pages[2]: {`Workflow “greeting”`, `value="greeting"`, `<label for="wf-name">Name</label>`, `id="wf-validate"`,
			"&#34;nodes&#34;: [\n", `&#34;prompt&#34;: &#34;Hang up.&#34;`},
		pages[3]: {`Delete the workflow “greeting”?`, fmt.Sprintf(`action="/console/workflows/%d/delete"`, id)},
	}
	for _, p := range pages {
		get := in.get(p)
		wantStatus(t, "GET "+p, get, http.StatusOK)
		for _, w := range wants[p] {
			if !strings.Contains(get.body, w) {
				t.Errorf("GET %s: no %q in the page:\n%s", p, w, get.body)
			}
		}
		head := in.do(http.MethodHead, p, nil)
		if head.status != http.StatusOK || len(head.raw) != 0 || head.header.Get("Content-Type") != get.header.Get("Content-Type") {
			t.Errorf("HEAD %s: %d, %d body bytes, %q", p, head.status, len(head.raw), head.header.Get("Content-Type"))
		}
	}
	// The editor's pages load the editor's module and stylesheet.
	if ed := in.get(pages[2]).body; !regexp.MustCompile(`/console/static/workflow\.[0-9a-f]{8}\.js`).MatchString(ed) ||
		!regexp.MustCompile(`/console/static/workflow\.[0-9a-f]{8}\.css`).MatchString(ed) {
		t.Errorf("the editor does not load workflow.js and workflow.css:\n%s", ed)
	}
}

// Every POST route of the workflow pages refuses a form without the
// session's CSRF token (403), and nothing changes.
func TestWorkflowFormsNeedCSRF(t *testing.T) {
	e := newEnv(t)
	id := e.createWorkflowAs(e.key, "keep", wfDefinition)
	b := e.browser()
	b.signIn(e.key)
	form := url.Values{"name": {"changed"}, "workflow_definition": {`{"nodes":[]}`}}
	for _, p := range []string{"/console/workflows/new", fmt.Sprintf("/console/workflows/%d", id),
		fmt.Sprintf("/console/workflows/%d/validate", id), fmt.Sprintf("/console/workflows/%d/delete", id)} {
		wantStatus(t, "POST "+p+" without a token", b.postForm(p, form), http.StatusForbidden)
		bad := url.Values{"csrf_token": {"not-the-token"}}
		for k, v := range form {
			bad[k] = v
		}
		wantStatus(t, "POST "+p+" with a wrong token", b.postForm(p, bad), http.StatusForbidden)
	}
	status, name, def := e.storedWorkflow(id)
	if status != http.StatusOK || name != "keep" || def != wfDefinition {
		t.Errorf("after refused forms: status %d, name %q, definition %s", status, name, def)
	}
	_, list := e.apiWithKey(e.key, http.MethodGet, "/api/v1/workflow", "")
	if strings.Count(list, `"id"`) != 1 {
		t.Errorf("workflows after refused forms: %s", list)
	}
}

// Another organization's workflow is a 404 page on every workflow route,
// exactly like one that does not exist, and stays as it was.
func TestWorkflowOfAnotherOrganization(t *testing.T) {
	e := newEnv(t)
	_, otherKey, err := e.db.CreateAPIKey(context.Background(), "globex", "other", store.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	theirs := e.createWorkflowAs(otherKey.Reveal(), "secret plan", wfDefinition)
	b := e.browser()
	b.signIn(e.key)
	if list := b.get("/console/workflows"); strings.Contains(list.body, "secret plan") {
		t.Errorf("the list shows another organization's workflow:\n%s", list.body)
	}
	token := b.csrf()
	form := url.Values{"csrf_token": {token}, "name": {"mine now"}, "workflow_definition": {wfDefinition}}
	for _, id := range []string{fmt.Sprint(theirs), "999999", "abc", "-1", "99999999999999999999"} {
		for _, p := range []string{"/console/workflows/" + id, "/console/workflows/" + id + "/delete"} {
			a := b.get(p)
			wantStatus(t, "GET "+p, a, http.StatusNotFound)
			if strings.Contains(a.body, "secret plan") {
				t.Errorf("GET %s shows the other workflow's name", p)
			}
		}
		for _, p := range []string{"/console/workflows/" + id, "/console/workflows/" + id + "/validate", "/console/workflows/" + id + "/delete"} {
			wantStatus(t, "POST "+p, b.postForm(p, form), http.StatusNotFound)
		}
	}
	status, body := e.apiWithKey(otherKey.Reveal(), http.MethodGet, fmt.Sprintf("/api/v1/workflow/%d", theirs), "")
	if status != http.StatusOK || !strings.Contains(body, `"name":"secret plan"`) {
		t.Errorf("the other organization's workflow after the attempts: %d %s", status, body)
	}
}

// A workflow and a node named like a script are shown as text: escaped in
// the list, the heading, the name field and the definition's text.
func TestWorkflowNamesAreText(t *testing.T) {
	e := newEnv(t)
	const xss = `<script>alert(1)</script>`
	def := strings.Replace(wfDefinition, `"name":"Greeting"`, `"name":"`+xss+`"`, 1)
	id := e.createWorkflowAs(e.key, xss, def)
	b := e.browser()
	b.signIn(e.key)
	for _, p := range []string{"/console/workflows", fmt.Sprintf("/console/workflows/%d", id), fmt.Sprintf("/console/workflows/%d/delete", id)} {
		a := b.get(p)
		wantStatus(t, p, a, http.StatusOK)
		if strings.Contains(a.body, "<script>alert") || strings.Contains(a.body, `\u003cscript`) {
			t.Errorf("%s: the name is not escaped text:\n%s", p, a.body)
		}
		if !strings.Contains(a.body, html.EscapeString(xss)) && !strings.Contains(a.body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
			t.Errorf("%s: the name is not shown:\n%s", p, a.body)
		}
	}
	// In the editor, the node's name reads as the characters, not the API's \u003c escapes.
	ed := b.get(fmt.Sprintf("/console/workflows/%d", id)).body
	if !strings.Contains(ed, `&#34;name&#34;: &#34;&lt;script&gt;alert(1)&lt;/script&gt;&#34;`) {
		t.Errorf("the definition's node name is not shown as text:\n%s", ed)
	}
}

// The editor's forms work without JavaScript: create (the definition kept
// as written), a JSON syntax error shown with its line and column and the
// text kept (422), a name in use (409), update, validate (the problems
// listed with the element they name), delete after a confirmation page.
func TestWorkflowFormsWithoutScript(t *testing.T) {
	e := newEnv(t)
	b := e.browser()
	b.signIn(e.key)
	token := b.csrf()

	def := `{"nodes": [], "edges": [], "agent_url": "wss://a.example/ws", "z": 1.50}`
	a := b.postForm("/console/workflows/new", url.Values{"csrf_token": {token}, "name": {"first"}, "workflow_definition": {def}})
	loc := a.header.Get("Location")
	m := regexp.MustCompile(`^/console/workflows/(\d+)\?saved=1$`).FindStringSubmatch(loc)
	if a.status != http.StatusSeeOther || m == nil {
		t.Fatalf("create: %d, Location %q: %s", a.status, loc, a.body)
	}
	var id int64
	fmt.Sscan(m[1], &id)
	if _, name, stored := e.storedWorkflow(id); name != "first" || stored != `{"nodes":[],"edges":[],"agent_url":"wss://a.example/ws","z":1.50}` {
		t.Errorf("stored %q %s", name, stored)
	}
	if page := b.get(loc).body; !strings.Contains(page, "Saved.") || !strings.Contains(page, "&#34;z&#34;: 1.50") {
		t.Errorf("the saved page:\n%s", page)
	}

	broken := "{\n  \"nodes\": [\n    {\"id\": \"a\",}\n  ]\n}"
	a = b.postForm("/console/workflows/new", url.Values{"csrf_token": {token}, "name": {"second"}, "workflow_definition": {broken}})
	wantStatus(t, "create with a syntax error", a, http.StatusUnprocessableEntity)
	for _, w := range []string{"JSON syntax error at line 3, column 16", html.EscapeString(broken), `value="second"`} {
		if !strings.Contains(a.body, w) {
			t.Errorf("create with a syntax error: no %q in\n%s", w, a.body)
		}
	}
	a = b.postForm("/console/workflows/new", url.Values{"csrf_token": {token}, "name": {"first"}, "workflow_definition": {def}})
	wantStatus(t, "create with a name in use", a, http.StatusConflict)
	if !strings.Contains(a.body, `id="wf-name-error" class="error wf-field-error">a workflow named &#34;first&#34; already exists`) {
		t.Errorf("create with a name in use:\n%s", a.body)
	}
	a = b.postForm("/console/workflows/new", url.Values{"csrf_token": {token}, "name": {""}, "workflow_definition": {"[1]"}})
	wantStatus(t, "create with no name and a list", a, http.StatusUnprocessableEntity)
	for _, w := range []string{`id="wf-name-error" class="error wf-field-error">String should have at least 1 character`,
		`id="wf-definition-error" class="error">Input should be a valid dictionary`} {
		if !strings.Contains(a.body, w) {
			t.Errorf("create with no name and a list: no %q in\n%s", w, a.body)
		}
	}

	edit := fmt.Sprintf("/console/workflows/%d", id)
	a = b.postForm(edit, url.Values{"csrf_token": {token}, "name": {"first"}, "workflow_definition": {wfInvalid}})
	if a.status != http.StatusSeeOther || a.header.Get("Location") != edit+"?saved=1" {
		t.Fatalf("update: %d, Location %q: %s", a.status, a.header.Get("Location"), a.body)
	}
	a = b.postForm(edit+"/validate", url.Values{"csrf_token": {token}})
	wantStatus(t, "validate", a, http.StatusOK)
	for _, w := range []string{"The saved definition has 2 problem(s).",
		`data-kind="node" data-id="bye" data-field="data.prompt"`, "Node prompt is required",
		`data-kind="edge" data-id="e2" data-field="target"`, "Edge references missing node"} {
		if !strings.Contains(a.body, w) {
			t.Errorf("validate: no %q in\n%s", w, a.body)
		}
	}

	a = b.postForm(edit+"/delete", url.Values{"csrf_token": {token}})
	if a.status != http.StatusSeeOther || a.header.Get("Location") != "/console/workflows?deleted=first" {
		t.Fatalf("delete: %d, Location %q: %s", a.status, a.header.Get("Location"), a.body)
	}
	if status, _, _ := e.storedWorkflow(id); status != http.StatusNotFound {
		t.Errorf("after delete: GET status %d", status)
	}
	if list := b.get("/console/workflows?deleted=first").body; !strings.Contains(list, "Deleted the workflow “first”.") {
		t.Errorf("the list after delete:\n%s", list)
	}
}

// A definition near the API's limit (1 MiB, some 4,000 nodes) opens in the
// editor.
func TestWorkflowLargeDefinitionOpens(t *testing.T) {
	e := newEnv(t)
	def := largeDefinition(3000)
	if len(def) > 1<<20 {
		t.Fatalf("the definition is %d bytes, over the API's limit", len(def))
	}
	id := e.createWorkflowAs(e.key, "large", def)
	b := e.browser()
	b.signIn(e.key)
	a := b.get(fmt.Sprintf("/console/workflows/%d", id))
	wantStatus(t, "the large workflow", a, http.StatusOK)
	// Large, it is laid out one node or edge a line (a textarea slows down
	// with tens of thousands of lines).
	if !strings.Contains(a.body, "\n    {&#34;id&#34;:&#34;n2999&#34;,&#34;type&#34;:&#34;endCall&#34;,") {
		t.Errorf("the last node is not on a line of its own in the editor (%d bytes)", len(a.body))
	}
	if lines := strings.Count(a.body, "\n"); lines > 6100+100 {
		t.Errorf("the editor holds %d lines for 3,000 nodes and 2,999 edges", lines)
	}
}

// largeDefinition is a valid chain of n nodes (a startCall, agentNodes, an
// endCall) with long prompts and no positions.
func largeDefinition(n int) string {
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
