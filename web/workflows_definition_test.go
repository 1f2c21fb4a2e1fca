package web_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// oddDefinition exercises everything that must survive byte for byte: white
// space inside and between tokens, key order, number spellings, escapes,
// <, > and &, raw unicode, U+2028, a repeated key, and unknown keys at
// every level.
const oddDefinition = "{\n\t\"zeta\" : 1.50 ,  \"nodes\" :[ {\"type\":\"startCall\" , \"id\":\"n1\",\r\n" +
	"   \"data\":{\"prompt\":\"a < b && c > d\",\"name\":\"<Start>\",\"x-custom\":{\"deep\":[1e2, -0.0, 1E-7, true, null, \"\\u00e9\\/\\u2028\"]}},\n" +
	"   \"position\" : {\"y\":-3,\"x\":4.000}} ],\n \"edges\":[ ],  \"unknown\":{\"a\":[{ }],\"é\":\"😀\u2028\"},\n" +
	" \"dup\":1, \"dup\":2, \"html\":\"<script>alert('&amp;')</script>\"\n}"

// wantBody checks a 200 whose body is the JSON value want (compared as
// values, not bytes).
func wantBody(t *testing.T, r response, want string) {
	t.Helper()
	wantStatus(t, r, http.StatusOK)
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad want %q: %v", want, err)
	}
	if !equalJSON(r.Body, w) {
		t.Fatalf("body = %s, want %s", r.Raw, want)
	}
}

// TestWorkflowDefinitionBytes checks that a definition comes back as the
// exact bytes it was sent with, from create, get, update and after a
// restart.
func TestWorkflowDefinitionBytes(t *testing.T) {
	t.Parallel()
	e, clock := newWorkflowEnv(t)
	body := rawBody("{ \"workflow_definition\" :  \n\t" + oddDefinition + "\n  , \"name\": \"odd\" }")
	r := e.a(http.MethodPost, workflowsPath, body)
	wid := id(t, r.obj(t), "id")
	wantWorkflow(t, r, wid, "odd", oddDefinition, t0Text, t0Text)
	wantWorkflow(t, e.a(http.MethodGet, workflowPath(wid), nil), wid, "odd", oddDefinition, t0Text, t0Text)

	// A name-only update keeps the bytes.
	clock.advance(time.Second)
	const t1 = "2026-11-21T19:04:36.123Z"
	wantWorkflow(t, e.a(http.MethodPut, workflowPath(wid), rawBody(`{"name": "odd2"}`)), wid, "odd2", oddDefinition, t0Text, t1)

	// A new definition replaces the old one whole, again byte for byte.
	def2 := strings.ReplaceAll(oddDefinition, "\n", "\r\n")
	clock.advance(time.Second)
	const t2 = "2026-11-21T19:04:37.123Z"
	wantWorkflow(t, e.a(http.MethodPut, workflowPath(wid), rawBody(`{"workflow_definition":`+def2+`}`)), wid, "odd2", def2, t0Text, t2)

	e.restart()
	wantWorkflow(t, e.a(http.MethodGet, workflowPath(wid), nil), wid, "odd2", def2, t0Text, t2)
	// Validation reads the stored text: one startCall node "n1" with a name
	// and a prompt and nothing else is valid.
	wantBody(t, e.a(http.MethodPost, validatePath(wid), nil), `{"is_valid":true,"errors":[]}`)
}

func TestWorkflowValidate(t *testing.T) {
	t.Parallel()
	e, clock := newWorkflowEnv(t)
	tests := []struct {
		name string
		def  string
		want string // the whole answer
	}{
		{"empty definition", `{}`,
			`{"is_valid":false,"errors":[{"kind":"workflow","id":null,"field":null,"message":"Workflow has no nodes"}]}`},
		{"empty nodes", `{"nodes": [], "edges": []}`,
			`{"is_valid":false,"errors":[{"kind":"workflow","id":null,"field":null,"message":"Workflow has no nodes"}]}`},
		{"valid", validDefinition, `{"is_valid":true,"errors":[]}`},
		{"nodes and edges of the wrong type", `{"nodes": {}, "edges": "x"}`, `{"is_valid":false,"errors":[
			{"kind":"workflow","id":null,"field":"nodes","message":"nodes must be an array"},
			{"kind":"workflow","id":null,"field":"edges","message":"edges must be an array"}]}`},
		{"several problems", severalProblems, severalProblemsWant},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wid := e.createWorkflow(e.keyA, tt.name, tt.def)
			clock.advance(time.Second)
			r := e.a(http.MethodPost, validatePath(wid), nil)
			wantBody(t, r, tt.want)
			if strings.Contains(tt.want, `"errors":[]`) && !bytes.Contains(r.Raw, []byte(`"errors":[]`)) {
				t.Errorf("errors is not an empty list: %s", r.Raw)
			}
			// Any body is ignored, and validating changes nothing.
			wantBody(t, e.a(http.MethodPost, validatePath(wid), rawBody(`not json at all`)), tt.want)
			wantWorkflow(t, e.a(http.MethodGet, workflowPath(wid), nil), wid, tt.name, tt.def,
				t0Text, t0Text)
			clock.advance(-time.Second)
		})
	}

	// Validation reads the stored definition: fixing it fixes the answer.
	wid := e.createWorkflow(e.keyA, "draft", `{}`)
	wantStatus(t, e.a(http.MethodPut, workflowPath(wid), rawBody(`{"workflow_definition": `+validDefinition+`}`)), http.StatusOK)
	wantBody(t, e.a(http.MethodPost, validatePath(wid), nil), `{"is_valid":true,"errors":[]}`)
}

// severalProblems breaks many rules at once; severalProblemsWant is the
// exact answer of API.md 5.2's rules in the validator's documented order:
// workflow errors, then nodes in array order, then edges in array order.
const severalProblems = `{"nodes":[
	{"id":"start","type":"startCall","data":{"name":"Start","prompt":"Hello {{first_name","greeting":"Hi {{ }}"}},
	{"id":"ask","type":"agentNode","data":{"name":"  ","prompt":"Ask"}},
	{"id":"ask","type":"agentNode","data":{"name":"Dup","prompt":"p"}},
	{"type":"endCall","data":{"name":"End"}},
	{"id":"orphan","type":"endCall","data":{"name":"Orphan","prompt":"bye"}},
	{"id":"g1","type":"globalNode","data":{"name":"G1","prompt":"g"}},
	{"id":"g2","type":"globalNode","data":{"name":"G2","prompt":"g"}},
	{"id":"x","type":"mystery","data":{"name":"X","prompt":"x"}},
	7],
 "edges":[
	{"id":"e1","source":"start","target":"ask","data":{"label":"Yes!","condition":"They agree"}},
	{"id":"e1","source":"start","target":"nowhere","data":{"label":"YES?","condition":" "}},
	{"source":"g1","target":"start","data":{"label":"Back","condition":"c"}}]}`

const severalProblemsWant = `{"is_valid":false,"errors":[
	{"kind":"workflow","id":null,"field":null,"message":"Workflow has 2 globalNode nodes; at most one is allowed"},
	{"kind":"node","id":"start","field":"data.prompt","message":"Malformed template: unclosed {{ (at character 7)"},
	{"kind":"node","id":"start","field":"data.greeting","message":"Malformed template: empty {{ }} (at character 4)"},
	{"kind":"node","id":"start","field":null,"message":"startCall node must not have incoming edges"},
	{"kind":"node","id":"ask","field":"data.name","message":"Node name is required"},
	{"kind":"node","id":"ask","field":"id","message":"Duplicate node id (first used by the node at index 1)"},
	{"kind":"node","id":null,"field":"id","message":"Node at index 3 has no id"},
	{"kind":"node","id":null,"field":"data.prompt","message":"Node prompt is required"},
	{"kind":"node","id":"orphan","field":null,"message":"Node has no incoming edges"},
	{"kind":"node","id":"orphan","field":null,"message":"Node is not reachable from the startCall node"},
	{"kind":"node","id":"g1","field":null,"message":"globalNode must not have edges"},
	{"kind":"node","id":"x","field":"type","message":"Unknown node type \"mystery\" (expected startCall, agentNode, endCall or globalNode)"},
	{"kind":"node","id":null,"field":null,"message":"Node at index 8 is not a JSON object"},
	{"kind":"edge","id":"e1","field":"id","message":"Duplicate edge id (first used by the edge at index 0)"},
	{"kind":"edge","id":"e1","field":"target","message":"Edge references missing node"},
	{"kind":"edge","id":"e1","field":"data.condition","message":"Edge condition is required"},
	{"kind":"edge","id":"e1","field":"data.label","message":"Edge label gives transition name \"yes_\", already used by edge \"e1\" from the same node"},
	{"kind":"edge","id":null,"field":"id","message":"Edge at index 2 has no id"}]}`

// bigDefinition returns a chain of n nodes (startCall, n-2 agentNodes,
// endCall) joined by n-1 edges; with edges false it has no edges.
func bigDefinition(n int, edges bool) string {
	var b strings.Builder
	b.WriteString(`{"nodes":[`)
	for i := range n {
		typ := "agentNode"
		switch i {
		case 0:
			typ = "startCall"
		case n - 1:
			typ = "endCall"
		}
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"n%d","type":%q,"position":{"x":%d,"y":0},"data":{"name":"Step %d","prompt":"Say step %d to {{first_name}}."}}`, i, typ, i*10, i, i)
	}
	b.WriteString(`],"edges":[`)
	if edges {
		for i := 1; i < n; i++ {
			if i > 1 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"id":"e%d","source":"n%d","target":"n%d","data":{"label":"Next","condition":"Step %d is done"}}`, i, i-1, i, i-1)
		}
	}
	b.WriteString(`]}`)
	return b.String()
}

// TestWorkflowLarge saves, reads and validates 4,000-node definitions
// (0.95 MB, just under the default limit of 1 MiB).
func TestWorkflowLarge(t *testing.T) {
	t.Parallel()
	e, _ := newWorkflowEnv(t)
	create := func(name, def string) int64 {
		t.Helper()
		status, raw := e.rawDo(http.MethodPost, workflowsPath, e.keyA, string(wfBody(name, def)))
		var out struct{ ID int64 }
		if err := json.Unmarshal(raw, &out); status != http.StatusOK || err != nil || out.ID == 0 {
			t.Fatalf("create: status %d (%v): %s", status, err, short(string(raw)))
		}
		if got := definitionOf(t, raw); got != def {
			t.Fatalf("create answered a definition of %d bytes, want the %d sent", len(got), len(def))
		}
		return out.ID
	}
	type answer struct {
		IsValid bool `json:"is_valid"`
		Errors  []struct {
			Kind, Message string
			ID, Field     *string
		} `json:"errors"`
	}
	validate := func(wid int64) answer {
		t.Helper()
		status, raw := e.rawDo(http.MethodPost, validatePath(wid), e.keyA, "")
		var a answer
		if err := json.Unmarshal(raw, &a); status != http.StatusOK || err != nil || a.Errors == nil {
			t.Fatalf("validate: status %d (%v): %s", status, err, short(string(raw)))
		}
		return a
	}

	def := bigDefinition(4_000, true)
	wid := create("big", def)
	status, raw := e.rawDo(http.MethodGet, workflowPath(wid), e.keyA, "")
	if got := definitionOf(t, raw); status != http.StatusOK || got != def {
		t.Fatalf("get: status %d, definition of %d bytes, want %d", status, len(got), len(def))
	}
	if a := validate(wid); !a.IsValid || len(a.Errors) != 0 {
		t.Fatalf("is_valid %v with %d errors, want true with none: %+v", a.IsValid, len(a.Errors), a.Errors[:min(3, len(a.Errors))])
	}

	// Without edges every node but the start has no incoming edge and is
	// unreachable: 2 errors each, all reported.
	wid = create("big, no edges", bigDefinition(4_000, false))
	a := validate(wid)
	if a.IsValid || len(a.Errors) != 2*3_999 {
		t.Fatalf("is_valid %v with %d errors, want false with %d", a.IsValid, len(a.Errors), 2*3_999)
	}
	if last := a.Errors[len(a.Errors)-1]; last.Kind != "node" || last.ID == nil || *last.ID != "n3999" || last.Field != nil ||
		last.Message != "Node is not reachable from the startCall node" {
		t.Errorf("last error = %+v", last)
	}

	// A body over 8 MiB is refused whole.
	huge := `{"pad":"` + strings.Repeat("x", 8<<20) + `"}`
	status, raw = e.rawDo(http.MethodPost, workflowsPath, e.keyA, string(wfBody("huge", huge)))
	if status != http.StatusRequestEntityTooLarge || string(raw) != "{\"detail\":\"Request body too large\"}\n" {
		t.Errorf("9 MiB body: status %d: %s", status, short(string(raw)))
	}
	status, raw = e.rawDo(http.MethodPut, workflowPath(wid), e.keyA, string(wfBody("huge", huge)))
	if status != http.StatusRequestEntityTooLarge {
		t.Errorf("9 MiB update: status %d: %s", status, short(string(raw)))
	}
}

// TestWorkflowOddInputs sends definitions and names that must never give a
// 500: control characters, lone surrogates, deep nesting, huge strings.
func TestWorkflowOddInputs(t *testing.T) {
	t.Parallel()
	e, _ := newWorkflowEnv(t)
	deep := strings.Repeat(`{"a":`, 5000) + "1" + strings.Repeat("}", 5000)
	deepArr := strings.Repeat("[", 5000) + strings.Repeat("]", 5000)
	defs := []struct {
		def   string
		valid bool
	}{
		// NUL and a lone surrogate are non-blank strings.
		{`{"nodes":[{"id":"\u0000","type":"startCall","data":{"name":"\u0000","prompt":"\ud800"}}]}`, true},
		{`{"nodes":[{"id":1,"type":2,"data":3},{"id":null},[],"x",null],"edges":[{"id":{},"source":[],"target":1},null,1]}`, false},
		{`{"nodes":` + deepArr + `}`, false},
		{`{"x":` + deep + `}`, false},
		{`{"nodes":[{"id":"s","type":"startCall","data":{"name":"s","prompt":"` + strings.Repeat("{{", 50_000) + `"}}]}`, false},
		{`{"nodes":[{"id":"s","type":"startCall","data":{"name":"s","prompt":"{{ a.b.c | default \"x\" }} {{ | default }} {{a..b}} {{x|upper}}"}}]}`, false},
		{`{"agent_url": 5, "nodes": null, "edges": null}`, false},
	}
	for i, d := range defs {
		name := fmt.Sprintf("odd-%d", i)
		r := e.a(http.MethodPost, workflowsPath, wfBody(name, d.def))
		wid := id(t, r.obj(t), "id")
		if got := definitionOf(t, r.Raw); got != d.def {
			t.Errorf("%s: definition changed", name)
		}
		r = e.a(http.MethodPost, validatePath(wid), nil)
		wantStatus(t, r, http.StatusOK)
		if v, _ := r.obj(t)["is_valid"].(bool); v != d.valid {
			t.Errorf("%s: is_valid = %v, want %v: %s", name, v, d.valid, short(string(r.Raw)))
		}
	}
	// Nesting beyond what the JSON decoder accepts is a 422, not a 500.
	tooDeep := strings.Repeat("[", 20_000) + strings.Repeat("]", 20_000)
	r := e.a(http.MethodPost, workflowsPath, wfBody("too deep", `{"x":`+tooDeep+`}`))
	if ps := problems(t, r); len(ps) != 1 || ps[0].Type != "json_invalid" {
		t.Errorf("too deep: %s", short(string(r.Raw)))
	}
}
