package workflow

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// node returns the JSON of a well-formed node.
func node(id, typ string) string {
	return fmt.Sprintf(`{"id":%q,"type":%q,"position":{"x":0,"y":0},"data":{"name":"N %s","prompt":"Prompt of %s"}}`, id, typ, id, id)
}

// edge returns the JSON of a well-formed edge.
func edge(id, src, tgt, label string) string {
	return fmt.Sprintf(`{"id":%q,"source":%q,"target":%q,"data":{"label":%q,"condition":"when %s"}}`, id, src, tgt, label, label)
}

// def joins node and edge JSON into a definition.
func def(nodes []string, edges ...string) string {
	return `{"nodes":[` + strings.Join(nodes, ",") + `],"edges":[` + strings.Join(edges, ",") + `]}`
}

// ns is shorthand for a list of node JSON texts.
func ns(n ...string) []string { return n }

// basic is the smallest valid definition: start → agent → end.
var basic = ns(node("s", "startCall"), node("a", "agentNode"), node("e", "endCall"))

// basicEdges connect basic.
var basicEdges = []string{edge("e1", "s", "a", "Next"), edge("e2", "a", "e", "Done")}

// opt turns "" into nil.
func opt(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func wfErr(field, msg string) Error {
	return Error{Kind: KindWorkflow, Field: opt(field), Message: msg}
}

func nodeErr(id, field, msg string) Error {
	return Error{Kind: KindNode, ID: opt(id), Field: opt(field), Message: msg}
}

func edgeErr(id, field, msg string) Error {
	return Error{Kind: KindEdge, ID: opt(id), Field: opt(field), Message: msg}
}

const (
	msgNoIncoming  = "Node has no incoming edges"
	msgUnreachable = "Node is not reachable from the startCall node"
)

// errsString renders an error list readably for failure messages.
func errsString(errs []Error) string {
	b, _ := json.MarshalIndent(errs, "", "  ")
	return string(b)
}

func TestValidate(t *testing.T) {
	withEdges := func(extra ...string) string {
		return def(basic, append(append([]string{}, basicEdges...), extra...)...)
	}
	withNodes := func(extra ...string) []string { return append(append([]string{}, basic...), extra...) }
	tests := []struct {
		name string
		def  string
		want []Error
	}{
		{"valid", def(basic, basicEdges...), nil},
		{"valid without edges key", `{"nodes":[` + node("s", "startCall") + `]}`, nil},
		{"valid with global node and agent_url", `{"agent_url":"wss://agent.example/ws","nodes":[` +
			strings.Join(withNodes(node("g", "globalNode")), ",") + `],"edges":[` + strings.Join(basicEdges, ",") + `]}`, nil},
		{"valid cycle", def(basic, append(basicEdges, edge("e3", "a", "a", "Again"))...), nil},

		// Workflow level.
		{"empty object", `{}`, []Error{wfErr("", "Workflow has no nodes")}},
		{"null", `null`, []Error{wfErr("", "Workflow definition must be a JSON object")}},
		{"array", `[]`, []Error{wfErr("", "Workflow definition must be a JSON object")}},
		{"number", ` 42 `, []Error{wfErr("", "Workflow definition must be a JSON object")}},
		{"string", `"nodes"`, []Error{wfErr("", "Workflow definition must be a JSON object")}},
		{"nodes null", `{"nodes":null,"edges":null}`, []Error{wfErr("", "Workflow has no nodes")}},
		{"nodes empty", `{"nodes":[],"edges":[]}`, []Error{wfErr("", "Workflow has no nodes")}},
		{"nodes not array", `{"nodes":{"id":"s"}}`, []Error{wfErr("nodes", "nodes must be an array")}},
		{"edges not array", `{"nodes":[` + strings.Join(basic, ",") + `],"edges":"e1"}`, []Error{
			wfErr("edges", "edges must be an array"),
			nodeErr("a", "", msgNoIncoming), nodeErr("a", "", msgUnreachable),
			nodeErr("e", "", msgNoIncoming), nodeErr("e", "", msgUnreachable),
		}},
		{"no startCall", def(ns(node("a", "agentNode"))), []Error{
			wfErr("", "Workflow has no startCall node"),
			nodeErr("a", "", msgNoIncoming),
		}},
		{"two startCalls", def(withNodes(node("s2", "startCall")), basicEdges...), []Error{
			wfErr("", "Workflow has 2 startCall nodes; exactly one is allowed"),
		}},
		{"two globalNodes", def(withNodes(node("g1", "globalNode"), node("g2", "globalNode")), basicEdges...), []Error{
			wfErr("", "Workflow has 2 globalNode nodes; at most one is allowed"),
		}},
		{"agent_url not a string", `{"agent_url":7,"nodes":[` + node("s", "startCall") + `]}`, []Error{
			wfErr("agent_url", "agent_url must be a string"),
		}},
		{"agent_url http", `{"agent_url":"https://agent.example","nodes":[` + node("s", "startCall") + `]}`, []Error{
			wfErr("agent_url", "agent_url must be a ws:// or wss:// URL"),
		}},
		{"agent_url empty or null is fine", `{"agent_url":"","nodes":[` + node("s", "startCall") + `],"x":{"agent_url":1}}`, nil},
		{"key names are case-sensitive", `{"Nodes":[` + node("s", "startCall") + `]}`, []Error{wfErr("", "Workflow has no nodes")}},
		{"escaped key is the same key", `{"n\u006fdes":[` + node("s", "startCall") + `]}`, nil},
		{"last duplicate key wins", `{"nodes":[` + node("s", "startCall") + `],"nodes":[]}`, []Error{wfErr("", "Workflow has no nodes")}},

		// Nodes: shape, id, type.
		{"node not an object", def(withNodes(`"x"`, `17`, `null`), basicEdges...), []Error{
			nodeErr("", "", "Node at index 3 is not a JSON object"),
			nodeErr("", "", "Node at index 4 is not a JSON object"),
			nodeErr("", "", "Node at index 5 is not a JSON object"),
		}},
		{"only non-object nodes", `{"nodes":["x"]}`, []Error{
			wfErr("", "Workflow has no startCall node"),
			nodeErr("", "", "Node at index 0 is not a JSON object"),
		}},
		{"node id missing, null, blank", def(withNodes(
			`{"type":"agentNode","data":{"name":"x","prompt":"y"}}`,
			`{"id":null,"type":"agentNode","data":{"name":"x","prompt":"y"}}`,
			`{"id":"  ","type":"agentNode","data":{"name":"x","prompt":"y"}}`), basicEdges...), []Error{
			nodeErr("", "id", "Node at index 3 has no id"),
			nodeErr("", "id", "Node at index 4 has no id"),
			nodeErr("", "id", "Node at index 5 has no id"),
		}},
		{"node id is a number", def(withNodes(`{"id":5,"type":"agentNode","data":{"name":"x","prompt":"y"}}`),
			append(basicEdges, `{"id":"e3","source":"a","target":5,"data":{"label":"Five","condition":"c"}}`)...), []Error{
			nodeErr("", "id", "Node at index 3 has an id that is not a string"),
			edgeErr("e3", "target", MsgMissingNode),
		}},
		{"duplicate node id", def(withNodes(node("a", "agentNode")), basicEdges...), []Error{
			nodeErr("a", "id", "Duplicate node id (first used by the node at index 1)"),
		}},
		{"node type missing, null, empty", def(withNodes(
			`{"id":"t1","data":{"name":"x","prompt":"y"}}`,
			`{"id":"t2","type":null,"data":{"name":"x","prompt":"y"}}`,
			`{"id":"t3","type":"","data":{"name":"x","prompt":"y"}}`), basicEdges...), []Error{
			nodeErr("t1", "type", "Node has no type"),
			nodeErr("t2", "type", "Node has no type"),
			nodeErr("t3", "type", "Node has no type"),
		}},
		{"node type not a string", def(withNodes(`{"id":"t","type":["agentNode"],"data":{"name":"x","prompt":"y"}}`), basicEdges...), []Error{
			nodeErr("t", "type", "Node type must be a string"),
		}},
		{"node type unknown", def(withNodes(node("t", "AgentNode")), basicEdges...), []Error{
			nodeErr("t", "type", `Unknown node type "AgentNode" (expected startCall, agentNode, endCall or globalNode)`),
		}},

		// Nodes: data.
		{"node data missing", def(withNodes(`{"id":"g","type":"globalNode"}`), basicEdges...), []Error{
			nodeErr("g", "data.name", "Node name is required"),
			nodeErr("g", "data.prompt", "Node prompt is required"),
		}},
		{"node data not an object", def(withNodes(`{"id":"g","type":"globalNode","data":"name"}`), basicEdges...), []Error{
			nodeErr("g", "data", "Node data must be a JSON object"),
		}},
		{"node name missing, blank, not a string", def(withNodes(
			`{"id":"g1","type":"globalNode","data":{"prompt":"p"}}`,
			`{"id":"g2","type":"globalNode","data":{"name":" \t","prompt":"p"}}`,
			`{"id":"g3","type":"globalNode","data":{"name":1,"prompt":"p"}}`), basicEdges...), []Error{
			wfErr("", "Workflow has 3 globalNode nodes; at most one is allowed"),
			nodeErr("g1", "data.name", "Node name is required"),
			nodeErr("g2", "data.name", "Node name is required"),
			nodeErr("g3", "data.name", "Node name must be a string"),
		}},
		{"node prompt missing, blank, not a string", def(ns(
			`{"id":"s","type":"startCall","data":{"name":"n"}}`,
			`{"id":"a","type":"agentNode","data":{"name":"n","prompt":"\n "}}`,
			`{"id":"e","type":"endCall","data":{"name":"n","prompt":{"text":"x"}}}`), basicEdges...), []Error{
			nodeErr("s", "data.prompt", "Node prompt is required"),
			nodeErr("a", "data.prompt", "Node prompt is required"),
			nodeErr("e", "data.prompt", "Node prompt must be a string"),
		}},
		{"greeting not a string", def(ns(
			`{"id":"s","type":"startCall","data":{"name":"n","prompt":"p","greeting":["hi"]}}`,
			`{"id":"a","type":"agentNode","data":{"name":"n","prompt":"p","greeting":1}}`,
			node("e", "endCall")), basicEdges...), []Error{
			nodeErr("s", "data.greeting", "Greeting must be a string"),
		}},

		// Nodes: templates.
		{"malformed templates", def(ns(
			`{"id":"s","type":"startCall","data":{"name":"{{ not checked","prompt":"Hi {{ name","greeting":"Hello {{ }}"}}`,
			`{"id":"a","type":"agentNode","data":{"name":"n","prompt":"Dear {{ current_time_Mars/Olympus }} {{ x | upper }}","greeting":"{{ ignored"}}`,
			`{"id":"e","type":"endCall","data":{"name":"n","prompt":"Bye {{first}} {{ a..b }}"}}`), basicEdges...), []Error{
			nodeErr("s", "data.prompt", "Malformed template: unclosed {{ (at character 4)"),
			nodeErr("s", "data.greeting", "Malformed template: empty {{ }} (at character 7)"),
			nodeErr("a", "data.prompt", `Malformed template: unknown time zone "Mars/Olympus" in "current_time_Mars/Olympus" (at character 6)`),
			nodeErr("e", "data.prompt", `Malformed template: empty segment in variable path "a..b" (at character 15)`),
		}},

		// Nodes: graph.
		{"startCall with incoming edge", withEdges(edge("e3", "a", "s", "Restart")), []Error{
			nodeErr("s", "", "startCall node must not have incoming edges"),
		}},
		{"agentNode without incoming edge", def(withNodes(node("b", "agentNode")), append(basicEdges, edge("e3", "b", "e", "Done"))...), []Error{
			nodeErr("b", "", msgNoIncoming),
			nodeErr("b", "", msgUnreachable),
		}},
		{"endCall without incoming edge", def(withNodes(node("e2", "endCall")), basicEdges...), []Error{
			nodeErr("e2", "", msgNoIncoming),
			nodeErr("e2", "", msgUnreachable),
		}},
		{"endCall with outgoing edge", withEdges(edge("e3", "e", "a", "Back")), []Error{
			nodeErr("e", "", "endCall node must not have outgoing edges"),
		}},
		{"globalNode with incoming and outgoing edges", def(withNodes(node("g", "globalNode"), node("g2", "globalNode")),
			append(basicEdges, edge("e3", "a", "g", "Help"), edge("e4", "g2", "e", "Stop"))...), []Error{
			wfErr("", "Workflow has 2 globalNode nodes; at most one is allowed"),
			nodeErr("g", "", "globalNode must not have edges"),
			nodeErr("g2", "", "globalNode must not have edges"),
		}},
		{"unreachable cycle", def(withNodes(node("x", "agentNode"), node("y", "agentNode")),
			append(basicEdges, edge("e3", "x", "y", "Go"), edge("e4", "y", "x", "Go"))...), []Error{
			nodeErr("x", "", msgUnreachable),
			nodeErr("y", "", msgUnreachable),
		}},
		{"reachable only through global node is unreachable", def(withNodes(node("g", "globalNode"), node("x", "agentNode")),
			append(basicEdges, edge("e3", "g", "x", "Go"))...), []Error{
			nodeErr("g", "", "globalNode must not have edges"),
			nodeErr("x", "", msgUnreachable),
		}},
		{"edge to missing node still counts as outgoing", withEdges(edge("e3", "e", "nowhere", "Go")), []Error{
			nodeErr("e", "", "endCall node must not have outgoing edges"),
			edgeErr("e3", "target", MsgMissingNode),
		}},

		// Edges.
		{"edge not an object", withEdges(`"e3"`, `[]`), []Error{
			edgeErr("", "", "Edge at index 2 is not a JSON object"),
			edgeErr("", "", "Edge at index 3 is not a JSON object"),
		}},
		{"edge id missing, blank, number", withEdges(
			`{"source":"a","target":"e","data":{"label":"L1","condition":"c"}}`,
			`{"id":"","source":"a","target":"e","data":{"label":"L2","condition":"c"}}`,
			`{"id":3,"source":"a","target":"e","data":{"label":"L3","condition":"c"}}`), []Error{
			edgeErr("", "id", "Edge at index 2 has no id"),
			edgeErr("", "id", "Edge at index 3 has no id"),
			edgeErr("", "id", "Edge at index 4 has an id that is not a string"),
		}},
		{"duplicate edge id", withEdges(edge("e1", "a", "e", "Other")), []Error{
			edgeErr("e1", "id", "Duplicate edge id (first used by the edge at index 0)"),
		}},
		{"edge source and target missing", withEdges(
			edge("e3", "zz", "e", "L"),
			edge("e4", "a", "zz", "M"),
			`{"id":"e5","source":1,"data":{"label":"N","condition":"c"}}`), []Error{
			edgeErr("e3", "source", MsgMissingNode),
			edgeErr("e4", "target", MsgMissingNode),
			edgeErr("e5", "source", MsgMissingNode),
			edgeErr("e5", "target", MsgMissingNode),
		}},
		{"edge label and condition", withEdges(
			`{"id":"e3","source":"a","target":"e"}`,
			`{"id":"e4","source":"a","target":"e","data":{"label":" ","condition":null}}`,
			`{"id":"e5","source":"a","target":"e","data":{"label":1,"condition":false}}`,
			`{"id":"e6","source":"a","target":"e","data":"label"}`), []Error{
			edgeErr("e3", "data.label", "Edge label is required"),
			edgeErr("e3", "data.condition", "Edge condition is required"),
			edgeErr("e4", "data.label", "Edge label is required"),
			edgeErr("e4", "data.condition", "Edge condition is required"),
			edgeErr("e5", "data.label", "Edge label must be a string"),
			edgeErr("e5", "data.condition", "Edge condition must be a string"),
			edgeErr("e6", "data", "Edge data must be a JSON object"),
		}},
		{"same transition name from one node", withEdges(
			edge("e3", "a", "e", "Not interested!"),
			edge("e4", "a", "e", "not interested?"),
			edge("e5", "s", "e", "Done"),
			`{"source":"a","target":"e","data":{"label":"DONE","condition":"c"}}`,
			edge("e7", "a", "e", "NOT-INTERESTED."),
		), []Error{
			edgeErr("e4", "data.label", `Edge label gives transition name "not_interested_", already used by edge "e3" from the same node`),
			edgeErr("", "id", "Edge at index 5 has no id"),
			edgeErr("", "data.label", `Edge label gives transition name "done", already used by edge "e2" from the same node`),
			edgeErr("e7", "data.label", `Edge label gives transition name "not_interested_", already used by edge "e3" from the same node`),
		}},
		{"same transition name among many edges from one node", withEdges(fanOut(20)...), []Error{
			edgeErr("f20", "data.label", `Edge label gives transition name "opt_3", already used by edge "f3" from the same node`),
			edgeErr("f21", "data.label", `Edge label gives transition name "opt_1", already used by edge "f1" from the same node`),
			edgeErr("f22", "data.label", `Edge label gives transition name "opt_3", already used by edge "f3" from the same node`),
		}},
		{"transition names count characters, not bytes", withEdges(edge("e3", "a", "e", "café"), edge("e4", "a", "e", "caf__"), edge("e5", "a", "e", "caf?")), []Error{
			edgeErr("e5", "data.label", `Edge label gives transition name "caf_", already used by edge "e3" from the same node`),
		}},

		// Combinations.
		{"everything wrong at once", `{"agent_url":"ftp://x","edges":[` + strings.Join([]string{
			`7`,
			`{"id":"e1","source":"s","target":"s","data":{"label":"Loop","condition":"c"}}`,
			`{"id":"e1","source":"g","data":{}}`,
		}, ",") + `],"nodes":[` + strings.Join([]string{
			`{"id":"s","type":"startCall","data":{"name":"","prompt":"{{x"}}`,
			`{"id":"s","type":"startCall"}`,
			`{"id":"g","type":"globalNode","data":{"name":"G","prompt":"p"}}`,
			`{"id":{"x":1},"type":"bogus","data":null}`,
			`{"id":"end","type":"endCall","data":{"name":"E","prompt":"{{ | default x }}"}}`,
		}, ",") + `]}`, []Error{
			wfErr("", "Workflow has 2 startCall nodes; exactly one is allowed"),
			wfErr("agent_url", "agent_url must be a ws:// or wss:// URL"),
			nodeErr("s", "data.name", "Node name is required"),
			nodeErr("s", "data.prompt", "Malformed template: unclosed {{ (at character 1)"),
			nodeErr("s", "", "startCall node must not have incoming edges"),
			nodeErr("s", "id", "Duplicate node id (first used by the node at index 0)"),
			nodeErr("s", "data.name", "Node name is required"),
			nodeErr("s", "data.prompt", "Node prompt is required"),
			nodeErr("g", "", "globalNode must not have edges"),
			nodeErr("", "id", "Node at index 3 has an id that is not a string"),
			nodeErr("", "type", `Unknown node type "bogus" (expected startCall, agentNode, endCall or globalNode)`),
			nodeErr("", "data.name", "Node name is required"),
			nodeErr("", "data.prompt", "Node prompt is required"),
			nodeErr("end", "data.prompt", "Malformed template: missing variable name (at character 1)"),
			nodeErr("end", "", msgNoIncoming),
			nodeErr("end", "", msgUnreachable),
			edgeErr("", "", "Edge at index 0 is not a JSON object"),
			edgeErr("e1", "id", "Duplicate edge id (first used by the edge at index 1)"),
			edgeErr("e1", "target", MsgMissingNode),
			edgeErr("e1", "data.label", "Edge label is required"),
			edgeErr("e1", "data.condition", "Edge condition is required"),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Parse([]byte(tt.def))
			if err != nil {
				t.Fatalf("Parse(%s) error = %v, want nil", tt.def, err)
			}
			got := Validate(d)
			if got == nil {
				t.Fatalf("Validate = nil, want a non-nil slice")
			}
			want := tt.want
			if want == nil {
				want = []Error{}
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("Validate(%s)\n got %s\nwant %s", tt.def, errsString(got), errsString(want))
			}
		})
	}
}

func TestValidateNilAndZero(t *testing.T) {
	want := []Error{wfErr("", "Workflow definition must be a JSON object")}
	if got := Validate(nil); !reflect.DeepEqual(got, want) {
		t.Fatalf("Validate(nil) = %s, want %s", errsString(got), errsString(want))
	}
	if got := Validate(&Definition{}); !reflect.DeepEqual(got, want) {
		t.Fatalf("Validate(zero) = %s, want %s", errsString(got), errsString(want))
	}
}

func TestErrorJSON(t *testing.T) {
	errs := []Error{
		wfErr("", "Workflow has no nodes"),
		nodeErr("n1", "data.name", "Node name is required"),
	}
	got, err := json.Marshal(errs)
	if err != nil {
		t.Fatalf("Marshal error = %v", err)
	}
	want := `[{"kind":"workflow","id":null,"field":null,"message":"Workflow has no nodes"},` +
		`{"kind":"node","id":"n1","field":"data.name","message":"Node name is required"}]`
	if string(got) != want {
		t.Fatalf("Marshal = %s, want %s", got, want)
	}
	empty, _ := json.Marshal(Validate(MustParse(def(basic, basicEdges...))))
	if string(empty) != "[]" {
		t.Fatalf("valid definition errors = %s, want []", empty)
	}
}

func TestCheck(t *testing.T) {
	if err := Check(MustParse(def(basic, basicEdges...))); err != nil {
		t.Fatalf("Check(valid) = %v, want nil", err)
	}
	err := Check(MustParse(`{}`))
	var inv *InvalidError
	if !errors.As(err, &inv) || !errors.Is(err, ErrInvalid) {
		t.Fatalf("Check({}) = %v, want *InvalidError wrapping ErrInvalid", err)
	}
	if got, want := len(inv.Errors), 1; got != want {
		t.Fatalf("len(Errors) = %d, want %d", got, want)
	}
}

// fanOut returns n edges from "a" to "e" with distinct labels, then three
// whose names repeat earlier ones.
func fanOut(n int) []string {
	var out []string
	for i := range n {
		out = append(out, edge(fmt.Sprintf("f%d", i), "a", "e", fmt.Sprintf("Opt %d", i)))
	}
	return append(out,
		edge(fmt.Sprintf("f%d", n), "a", "e", "opt-3"),
		edge(fmt.Sprintf("f%d", n+1), "a", "e", "OPT_1"),
		edge(fmt.Sprintf("f%d", n+2), "a", "e", "Opt 3"))
}

func TestTransitionName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Interested", "interested"},
		{"Not interested!", "not_interested_"},
		{"  call back 2 ", "__call_back_2_"},
		{"Ünïcode", "_n_code"},
		{"", ""},
		{"a_b-c", "a_b_c"},
		{"\u212Aelvin", "kelvin"}, // the Kelvin sign lower-cases to ASCII k
		{"İstanbul", "istanbul"},
		{"日本", "__"},
		{"a\xffb", "a_b"},
	}
	// reference is the rule of API.md 5.2 written the obvious way.
	reference := func(label string) string {
		var sb strings.Builder
		for _, r := range strings.ToLower(label) {
			if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
				sb.WriteRune(r)
			} else {
				sb.WriteByte('_')
			}
		}
		return sb.String()
	}
	for _, tt := range tests {
		if got := TransitionName(tt.in); got != tt.want {
			t.Fatalf("TransitionName(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if got, want := TransitionName(tt.in), reference(tt.in); got != want {
			t.Fatalf("TransitionName(%q) = %q, reference %q", tt.in, got, want)
		}
	}
}
