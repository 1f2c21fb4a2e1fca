package web_test

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

const workflowsPath = "/api/v1/workflow"

func workflowPath(id int64) string { return fmt.Sprintf("%s/%d", workflowsPath, id) }
func validatePath(id int64) string { return fmt.Sprintf("%s/%d/validate", workflowsPath, id) }

// validDefinition has one startCall with a greeting, one agentNode and one
// endCall, joined by two edges: it passes every rule of API.md 5.2.
const validDefinition = `{"nodes":[` +
	`{"id":"start","type":"startCall","position":{"x":0,"y":0},"data":{"name":"Greeting","prompt":"You are calling {{first_name}} about {{ plan.name | default our plan }}.","greeting":"Hi {{ first_name | default there }}!"}},` +
	`{"id":"pitch","type":"agentNode","position":{"x":200,"y":0},"data":{"name":"Pitch","prompt":"Explain the offer; the callee's number is {{phone_number}}."}},` +
	`{"id":"bye","type":"endCall","position":{"x":400,"y":0},"data":{"name":"Goodbye","prompt":"Thank them and hang up."}}],` +
	`"edges":[` +
	`{"id":"e1","source":"start","target":"pitch","data":{"label":"Interested","condition":"The callee wants to hear more"}},` +
	`{"id":"e2","source":"pitch","target":"bye","data":{"label":"Done","condition":"The offer has been explained"}}]}`

// wfClock is the database clock of workflow tests: a fixed instant that
// tests move forward, so timestamps are exact.
type wfClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *wfClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *wfClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// t0 is the time of the first write of a workflow test.
var t0 = time.Date(2026, 11, 21, 19, 4, 35, 123_000_000, time.UTC)

const t0Text = "2026-11-21T19:04:35.123Z"

// newWorkflowEnv returns a testEnv whose database clock is a wfClock at t0.
// The clock is set before any request reaches the server.
func newWorkflowEnv(t *testing.T) (*testEnv, *wfClock) {
	t.Helper()
	e := newEnv(t)
	c := &wfClock{t: t0}
	e.db.Now = c.now
	return e, c
}

// wfBody is a create or update body with def inserted as raw JSON text.
func wfBody(name, def string) rawBody {
	n, _ := json.Marshal(name)
	return rawBody(`{"name":` + string(n) + `,"workflow_definition":` + def + `}`)
}

// createWorkflow creates a workflow as the holder of key and returns its
// id, failing the test unless the answer is 200.
func (e *testEnv) createWorkflow(key, name, def string) int64 {
	e.t.Helper()
	r := e.do(http.MethodPost, workflowsPath, key, wfBody(name, def))
	wantStatus(e.t, r, http.StatusOK)
	return id(e.t, r.obj(e.t), "id")
}

// wantWorkflow checks that r is 200 with exactly the workflow body the
// server must write: the fields in order, the definition as the exact bytes
// def, and a trailing newline.
func wantWorkflow(t *testing.T, r response, id int64, name, def, created, updated string) {
	t.Helper()
	wantStatus(t, r, http.StatusOK)
	n, _ := json.Marshal(name)
	want := fmt.Sprintf(`{"id":%d,"name":%s,"workflow_definition":%s,"created_at":%q,"updated_at":%q}`+"\n", id, n, def, created, updated)
	if string(r.Raw) != want {
		t.Fatalf("body =\n%q\nwant\n%q", r.Raw, want)
	}
}

// definitionOf returns the exact bytes of workflow_definition in a workflow
// body written by the server.
func definitionOf(t *testing.T, raw []byte) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("body %q: %v", raw, err)
	}
	return string(m["workflow_definition"])
}

func TestWorkflowCreateAndGet(t *testing.T) {
	t.Parallel()
	e, _ := newWorkflowEnv(t)
	r := e.a(http.MethodPost, workflowsPath, wfBody("Sales call", validDefinition))
	wid := id(t, r.obj(t), "id")
	wantWorkflow(t, r, wid, "Sales call", validDefinition, t0Text, t0Text)
	wantWorkflow(t, e.a(http.MethodGet, workflowPath(wid), nil), wid, "Sales call", validDefinition, t0Text, t0Text)

	// Names are stored as sent: not trimmed, any character but control
	// characters (TestNamesRefuseControlCharacters).
	for _, name := range []string{" padded ", "<b>&amp;</b>", "名前 😀", strings.Repeat("n", 255), strings.Repeat("é", 255), "a\u200db"} {
		r := e.a(http.MethodPost, workflowsPath, wfBody(name, `{}`))
		wid := id(t, r.obj(t), "id")
		wantWorkflow(t, r, wid, name, `{}`, t0Text, t0Text)
		wantWorkflow(t, e.a(http.MethodGet, workflowPath(wid), nil), wid, name, `{}`, t0Text, t0Text)
	}
}

func TestWorkflowCreateValidation(t *testing.T) {
	t.Parallel()
	e, _ := newWorkflowEnv(t)
	const strType, dictType = "Input should be a valid string", "Input should be a valid dictionary"
	long, longUnicode := strings.Repeat("n", 256), strings.Repeat("é", 256)
	tests := []struct {
		name string
		body rawBody
		want []wantProblem
	}{
		{"empty object", `{}`, []wantProblem{
			{"body.name", "missing", "Field required", map[string]any{}, nil},
			{"body.workflow_definition", "missing", "Field required", map[string]any{}, nil},
		}},
		{"name missing", `{"workflow_definition": {"nodes": []}}`, []wantProblem{
			{"body.name", "missing", "Field required", map[string]any{"workflow_definition": map[string]any{"nodes": []any{}}}, nil}}},
		{"name null", `{"name": null, "workflow_definition": {}}`, []wantProblem{{"body.name", "string_type", strType, nil, nil}}},
		{"name number", `{"name": 7, "workflow_definition": {}}`, []wantProblem{{"body.name", "string_type", strType, 7, nil}}},
		{"name object", `{"name": {"a": 1}, "workflow_definition": {}}`, []wantProblem{
			{"body.name", "string_type", strType, map[string]any{"a": 1}, nil}}},
		{"name empty", `{"name": "", "workflow_definition": {}}`, []wantProblem{
			{"body.name", "string_too_short", "String should have at least 1 character", "", map[string]any{"min_length": 1}}}},
		{"name 256 characters", wfBody(long, `{}`), []wantProblem{
			{"body.name", "string_too_long", "String should have at most 255 characters", long, map[string]any{"max_length": 255}}}},
		{"name 256 unicode characters", wfBody(longUnicode, `{}`), []wantProblem{
			{"body.name", "string_too_long", "String should have at most 255 characters", longUnicode, map[string]any{"max_length": 255}}}},
		{"definition missing", `{"name": "w"}`, []wantProblem{
			{"body.workflow_definition", "missing", "Field required", map[string]any{"name": "w"}, nil}}},
		{"definition null", `{"name": "w", "workflow_definition": null}`, []wantProblem{
			{"body.workflow_definition", "dict_type", dictType, nil, nil}}},
		{"definition array", `{"name": "w", "workflow_definition": [{"nodes": []}]}`, []wantProblem{
			{"body.workflow_definition", "dict_type", dictType, []any{map[string]any{"nodes": []any{}}}, nil}}},
		{"definition string", `{"name": "w", "workflow_definition": "{\"nodes\": []}"}`, []wantProblem{
			{"body.workflow_definition", "dict_type", dictType, `{"nodes": []}`, nil}}},
		{"definition number", `{"name": "w", "workflow_definition": 1}`, []wantProblem{
			{"body.workflow_definition", "dict_type", dictType, 1, nil}}},
		{"definition bool", `{"name": "w", "workflow_definition": false}`, []wantProblem{
			{"body.workflow_definition", "dict_type", dictType, false, nil}}},
		{"both wrong", `{"name": "", "workflow_definition": []}`, []wantProblem{
			{"body.name", "string_too_short", "String should have at least 1 character", "", map[string]any{"min_length": 1}},
			{"body.workflow_definition", "dict_type", dictType, []any{}, nil},
		}},
		{"empty body", ``, []wantProblem{{"body", "missing", "Field required", nil, nil}}},
		{"not an object", `[{"name": "w"}]`, []wantProblem{
			{"body", "model_type", "Input should be a valid dictionary or object to extract fields from", []any{map[string]any{"name": "w"}}, nil}}},
		{"invalid JSON in the definition", `{"name": "w", "workflow_definition": {"nodes": [}}`, []wantProblem{
			{"body.48", "json_invalid", "JSON decode error", map[string]any{}, map[string]any{"error": "invalid character '}' looking for beginning of value"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantExactProblems(t, e.a(http.MethodPost, workflowsPath, tt.body), tt.want...)
		})
	}
	wantBody(t, e.a(http.MethodGet, workflowsPath, nil), `{"workflows":[]}`)
}

func TestWorkflowNameUniqueness(t *testing.T) {
	t.Parallel()
	e, _ := newWorkflowEnv(t)
	main := e.createWorkflow(e.keyA, "main", `{}`)
	wantDetail(t, e.a(http.MethodPost, workflowsPath, wfBody("main", validDefinition)), http.StatusConflict, `a workflow named "main" already exists`)
	other := e.createWorkflow(e.keyA, "Main", `{}`) // names are case-sensitive
	e.createWorkflow(e.keyA, "main ", `{}`)         // and not trimmed
	e.createWorkflow(e.keyB, "main", `{}`)          // and unique per organization only

	// Renaming onto a taken name is a 409 and changes nothing.
	r := e.a(http.MethodPut, workflowPath(other), rawBody(`{"name": "main", "workflow_definition": {"changed": true}}`))
	wantDetail(t, r, http.StatusConflict, `a workflow named "main" already exists`)
	wantWorkflow(t, e.a(http.MethodGet, workflowPath(other), nil), other, "Main", `{}`, t0Text, t0Text)
	// Keeping one's own name is not a conflict.
	wantStatus(t, e.a(http.MethodPut, workflowPath(main), rawBody(`{"name": "main"}`)), http.StatusOK)
	// A deleted workflow's name is free again.
	wantStatus(t, e.a(http.MethodDelete, workflowPath(main), nil), http.StatusNoContent)
	e.createWorkflow(e.keyA, "main", `{}`)
	wantStatus(t, e.a(http.MethodPut, workflowPath(other), rawBody(`{"name": "renamed"}`)), http.StatusOK)
	e.createWorkflow(e.keyA, "Main", `{}`)
}

// TestWorkflowConcurrentCreates sends the same name from many clients at
// once: exactly one wins, every other one gets 409, none 500.
func TestWorkflowConcurrentCreates(t *testing.T) {
	t.Parallel()
	e, _ := newWorkflowEnv(t)
	const n = 12
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			req, err := http.NewRequest(http.MethodPost, e.srv.URL+workflowsPath, strings.NewReader(string(wfBody("race", validDefinition))))
			if err != nil {
				return
			}
			req.Header.Set("X-API-Key", e.keyA)
			res, err := e.srv.Client().Do(req)
			if err != nil {
				return
			}
			res.Body.Close()
			statuses[i] = res.StatusCode
		})
	}
	wg.Wait()
	count := map[int]int{}
	for _, s := range statuses {
		count[s]++
	}
	if count[http.StatusOK] != 1 || count[http.StatusConflict] != n-1 {
		t.Fatalf("statuses = %v, want one 200 and %d 409", count, n-1)
	}
}

func TestWorkflowList(t *testing.T) {
	t.Parallel()
	e, clock := newWorkflowEnv(t)
	wantBody(t, e.a(http.MethodGet, workflowsPath, nil), `{"workflows":[]}`)
	if got := string(e.a(http.MethodGet, workflowsPath, nil).Raw); got != "{\"workflows\":[]}\n" {
		t.Errorf("empty list = %q", got)
	}
	var ids []int64
	for _, name := range []string{"zeta", "alpha", "mid"} {
		ids = append(ids, e.createWorkflow(e.keyA, name, validDefinition))
		clock.advance(time.Second)
	}
	idB := e.createWorkflow(e.keyB, "b-only", `{}`)
	// An update moves updated_at only.
	clock.advance(time.Minute)
	wantStatus(t, e.a(http.MethodPut, workflowPath(ids[0]), rawBody(`{"name": "zeta2"}`)), http.StatusOK)

	wantBody(t, e.a(http.MethodGet, workflowsPath, nil), fmt.Sprintf(`{"workflows":[
		{"id":%d,"name":"zeta2","created_at":"2026-11-21T19:04:35.123Z","updated_at":"2026-11-21T19:05:38.123Z"},
		{"id":%d,"name":"alpha","created_at":"2026-11-21T19:04:36.123Z","updated_at":"2026-11-21T19:04:36.123Z"},
		{"id":%d,"name":"mid","created_at":"2026-11-21T19:04:37.123Z","updated_at":"2026-11-21T19:04:37.123Z"}]}`, ids[0], ids[1], ids[2]))
	wantBody(t, e.b(http.MethodGet, workflowsPath, nil), fmt.Sprintf(`{"workflows":[
		{"id":%d,"name":"b-only","created_at":"2026-11-21T19:04:38.123Z","updated_at":"2026-11-21T19:04:38.123Z"}]}`, idB))
}

func TestWorkflowUpdate(t *testing.T) {
	t.Parallel()
	e, clock := newWorkflowEnv(t)
	const newDef = `{"nodes": [ ], "note":"new <one>"}`
	tests := []struct {
		name     string
		body     rawBody
		wantName string // "" keeps the original
		wantDef  string // "" keeps the original
	}{
		{"name only", `{"name": "renamed"}`, "renamed", ""},
		{"definition only", rawBody(`{"workflow_definition": ` + newDef + `}`), "", newDef},
		{"both", rawBody(`{"name": "both", "workflow_definition": ` + newDef + `}`), "both", newDef},
		{"name null keeps the name", rawBody(`{"name": null, "workflow_definition": ` + newDef + `}`), "", newDef},
		{"definition null keeps the definition", `{"name": "n2", "workflow_definition": null}`, "n2", ""},
		{"both null", `{"name": null, "workflow_definition": null}`, "", ""},
		{"empty object", `{}`, "", ""},
		{"read-only and unknown keys ignored", `{"id": 999, "created_at": "2000-01-01T00:00:00.000Z", "nodes": []}`, "", ""},
		{"definition with surrounding space", rawBody("{\"workflow_definition\" :  \n " + newDef + " \t}"), "", newDef},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			orig := fmt.Sprintf("wf-%d", i)
			wid := e.createWorkflow(e.keyA, orig, validDefinition)
			created := e.a(http.MethodGet, workflowPath(wid), nil).obj(t)["created_at"].(string)
			clock.advance(1500 * time.Millisecond)
			updated := clock.now().Format("2006-01-02T15:04:05.000Z")
			name, def := cmp.Or(tt.wantName, orig), cmp.Or(tt.wantDef, validDefinition)
			wantWorkflow(t, e.a(http.MethodPut, workflowPath(wid), tt.body), wid, name, def, created, updated)
			wantWorkflow(t, e.a(http.MethodGet, workflowPath(wid), nil), wid, name, def, created, updated)
		})
	}
}

func TestWorkflowUpdateValidation(t *testing.T) {
	t.Parallel()
	e, _ := newWorkflowEnv(t)
	wid := e.createWorkflow(e.keyA, "keep", validDefinition)
	e.createWorkflow(e.keyA, "taken", `{}`)
	const strType, dictType = "Input should be a valid string", "Input should be a valid dictionary"
	intParsing := wantProblem{"path.workflow_id", "int_parsing", "Input should be a valid integer, unable to parse string as an integer", "abc", nil}
	tests := []struct {
		name string
		path string
		body rawBody
		want []wantProblem
	}{
		{"name empty", workflowPath(wid), `{"name": ""}`, []wantProblem{
			{"body.name", "string_too_short", "String should have at least 1 character", "", map[string]any{"min_length": 1}}}},
		{"name too long", workflowPath(wid), wfBody(strings.Repeat("x", 256), `{}`), []wantProblem{
			{"body.name", "string_too_long", "String should have at most 255 characters", strings.Repeat("x", 256), map[string]any{"max_length": 255}}}},
		{"name number", workflowPath(wid), `{"name": 1}`, []wantProblem{{"body.name", "string_type", strType, 1, nil}}},
		{"definition array", workflowPath(wid), `{"workflow_definition": []}`, []wantProblem{
			{"body.workflow_definition", "dict_type", dictType, []any{}, nil}}},
		{"definition string", workflowPath(wid), `{"workflow_definition": "x"}`, []wantProblem{
			{"body.workflow_definition", "dict_type", dictType, "x", nil}}},
		{"valid name with a bad definition changes nothing", workflowPath(wid), `{"name": "other", "workflow_definition": 5}`, []wantProblem{
			{"body.workflow_definition", "dict_type", dictType, 5, nil}}},
		{"bad name with a valid definition changes nothing", workflowPath(wid), `{"name": "", "workflow_definition": {}}`, []wantProblem{
			{"body.name", "string_too_short", "String should have at least 1 character", "", map[string]any{"min_length": 1}}}},
		{"both wrong", workflowPath(wid), `{"name": false, "workflow_definition": true}`, []wantProblem{
			{"body.name", "string_type", strType, false, nil},
			{"body.workflow_definition", "dict_type", dictType, true, nil}}},
		{"bad path id and bad body", workflowsPath + "/abc", `{"name": ""}`, []wantProblem{
			intParsing,
			{"body.name", "string_too_short", "String should have at least 1 character", "", map[string]any{"min_length": 1}}}},
		{"bad path id and no body", workflowsPath + "/abc", ``, []wantProblem{intParsing, {"body", "missing", "Field required", nil, nil}}},
		{"bad path id and valid body", workflowsPath + "/abc", `{"name": "fine"}`, []wantProblem{intParsing}},
		{"body not an object", workflowPath(wid), `"renamed"`, []wantProblem{
			{"body", "model_type", "Input should be a valid dictionary or object to extract fields from", "renamed", nil}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantExactProblems(t, e.a(http.MethodPut, tt.path, tt.body), tt.want...)
		})
	}
	wantWorkflow(t, e.a(http.MethodGet, workflowPath(wid), nil), wid, "keep", validDefinition, t0Text, t0Text)
	if logs := e.logs.String(); strings.Contains(logs, "level=ERROR") {
		t.Errorf("refused updates logged errors:\n%s", logs)
	}
}

// TestWorkflowOtherOrganization checks that another organization's
// workflow is a 404 on every endpoint, exactly like a missing one, and that
// nothing the other organization sends changes it.
func TestWorkflowOtherOrganization(t *testing.T) {
	t.Parallel()
	e, _ := newWorkflowEnv(t)
	wid := e.createWorkflow(e.keyA, "mine", validDefinition)
	missing := wid + 1000
	calls := []struct {
		method string
		path   func(int64) string
		body   any
	}{
		{http.MethodGet, workflowPath, nil},
		{http.MethodPut, workflowPath, rawBody(`{"name": "stolen", "workflow_definition": {}}`)},
		{http.MethodPut, workflowPath, rawBody(`{}`)},
		{http.MethodDelete, workflowPath, nil},
		{http.MethodPost, validatePath, nil},
	}
	for _, c := range calls {
		detail := fmt.Sprintf("workflow %d not found", wid)
		wantDetail(t, e.b(c.method, c.path(wid), c.body), http.StatusNotFound, detail)
		wantDetail(t, e.a(c.method, c.path(missing), c.body), http.StatusNotFound, fmt.Sprintf("workflow %d not found", missing))
	}
	wantWorkflow(t, e.a(http.MethodGet, workflowPath(wid), nil), wid, "mine", validDefinition, t0Text, t0Text)
	wantBody(t, e.b(http.MethodGet, workflowsPath, nil), `{"workflows":[]}`)
	// B can use the same name; it is a different workflow.
	widB := e.createWorkflow(e.keyB, "mine", `{}`)
	if widB == wid {
		t.Fatalf("B's workflow has A's id %d", wid)
	}
	wantDetail(t, e.a(http.MethodGet, workflowPath(widB), nil), http.StatusNotFound, fmt.Sprintf("workflow %d not found", widB))
}

func TestWorkflowPathIDs(t *testing.T) {
	t.Parallel()
	e, _ := newWorkflowEnv(t)
	e.createWorkflow(e.keyA, "w", validDefinition)
	type call struct {
		method, suffix string
		body           any
	}
	calls := []call{
		{http.MethodGet, "", nil},
		{http.MethodPut, "", rawBody(`{"name": "x"}`)},
		{http.MethodDelete, "", nil},
		{http.MethodPost, "/validate", nil},
	}
	const intParsing = "Input should be a valid integer, unable to parse string as an integer"
	for _, c := range calls {
		for _, raw := range []string{"abc", "1.5", "1e3", "0x1", "%E2%82%AC"} {
			t.Run(c.method+" "+raw, func(t *testing.T) {
				r := e.a(c.method, workflowsPath+"/"+raw+c.suffix, c.body)
				ps := wantProblems(t, r, "path.workflow_id int_parsing")
				if ps[0].Msg != intParsing {
					t.Errorf("msg = %q", ps[0].Msg)
				}
			})
		}
		for raw, detail := range map[string]string{
			"0":                    "workflow 0 not found",
			"-1":                   "workflow -1 not found",
			"99999999999999999999": "workflow not found",
			"+1000":                "workflow 1000 not found",
		} {
			t.Run(c.method+" "+raw, func(t *testing.T) {
				wantDetail(t, e.a(c.method, workflowsPath+"/"+raw+c.suffix, c.body), http.StatusNotFound, detail)
			})
		}
	}
}

func TestWorkflowDelete(t *testing.T) {
	t.Parallel()
	e, _ := newWorkflowEnv(t)
	wid := e.createWorkflow(e.keyA, "gone", validDefinition)
	keep := e.createWorkflow(e.keyA, "kept", validDefinition)
	r := e.a(http.MethodDelete, workflowPath(wid), nil)
	wantStatus(t, r, http.StatusNoContent)
	if len(r.Raw) != 0 {
		t.Errorf("204 body = %q, want empty", r.Raw)
	}
	detail := fmt.Sprintf("workflow %d not found", wid)
	wantDetail(t, e.a(http.MethodGet, workflowPath(wid), nil), http.StatusNotFound, detail)
	wantDetail(t, e.a(http.MethodPut, workflowPath(wid), rawBody(`{"name": "back"}`)), http.StatusNotFound, detail)
	wantDetail(t, e.a(http.MethodPost, validatePath(wid), nil), http.StatusNotFound, detail)
	wantDetail(t, e.a(http.MethodDelete, workflowPath(wid), nil), http.StatusNotFound, detail)
	wantBody(t, e.a(http.MethodGet, workflowsPath, nil), fmt.Sprintf(
		`{"workflows":[{"id":%d,"name":"kept","created_at":%q,"updated_at":%q}]}`, keep, t0Text, t0Text))
}

func TestWorkflowAuth(t *testing.T) {
	t.Parallel()
	e, _ := newWorkflowEnv(t)
	wid := e.createWorkflow(e.keyA, "w", validDefinition)
	calls := []struct {
		method, path string
		body         any
	}{
		{http.MethodPost, workflowsPath, wfBody("new", `{}`)},
		{http.MethodGet, workflowsPath, nil},
		{http.MethodGet, workflowPath(wid), nil},
		{http.MethodPut, workflowPath(wid), rawBody(`{"name": "x"}`)},
		{http.MethodDelete, workflowPath(wid), nil},
		{http.MethodPost, validatePath(wid), nil},
		{http.MethodGet, workflowsPath + "/abc", nil}, // authentication before path parsing
	}
	for _, c := range calls {
		r := e.do(c.method, c.path, "", c.body)
		wantDetail(t, r, http.StatusUnauthorized, "Not authenticated")
		if got := r.Header.Get("WWW-Authenticate"); got != "Bearer" {
			t.Errorf("%s %s: WWW-Authenticate = %q", c.method, c.path, got)
		}
		wantDetail(t, e.do(c.method, c.path, "odk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", c.body), http.StatusUnauthorized, "Invalid API key")
	}
	wantWorkflow(t, e.a(http.MethodGet, workflowPath(wid), nil), wid, "w", validDefinition, t0Text, t0Text)
	wantBody(t, e.a(http.MethodGet, workflowsPath, nil), fmt.Sprintf(
		`{"workflows":[{"id":%d,"name":"w","created_at":%q,"updated_at":%q}]}`, wid, t0Text, t0Text))
}
