// Package workflow holds the workflow definition model of API.md section 5:
// parsing a definition without losing any byte of it, the structural
// validation rules of section 5.2, and the {{ variable }} templates used in
// node prompts and the start node's greeting.
//
// A definition is kept as the exact JSON text it was saved with; Parse builds
// a lenient, read-only view of the few keys the service understands (nodes,
// edges, their ids, types, names, prompts, greetings, labels, conditions, and
// the top-level agent_url). Everything else, including keys this package has
// never heard of, is carried along byte-for-byte. Any JSON value is accepted
// by Parse; shape problems (a node that is a string, an id that is a number,
// a null definition) are reported by Validate, never by a panic.
//
// The package is pure: it places no call and needs no clock (the time of a
// call comes in Builtins), and its only I/O is reading the time zone
// database, through time.LoadLocation, for the current_time_<zone> and
// current_weekday_<zone> built-ins (the service binary embeds time/tzdata in
// cmd, so this works on hosts without /usr/share/zoneinfo).
package workflow

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// Node types of API.md 5.1.
const (
	TypeStartCall  = "startCall"
	TypeAgentNode  = "agentNode"
	TypeEndCall    = "endCall"
	TypeGlobalNode = "globalNode"
)

// ErrInvalidJSON is wrapped by Parse (and Definition.UnmarshalJSON) when the
// input is not a single well-formed JSON value.
var ErrInvalidJSON = errors.New("workflow definition is not valid JSON")

// Definition is a workflow definition: the exact JSON text it was created
// from plus a lenient view of it. The zero value, like a nil *Definition,
// behaves as the JSON null definition. A Definition is immutable and safe for
// concurrent use.
type Definition struct {
	src   string // the JSON text, exactly as parsed; "" for the zero value
	nodes []Node
	edges []Edge
	view  view
}

// view is what the parser read from the top level of the definition.
type view struct {
	top      kind  // JSON type of the whole definition; kindAbsent when empty
	nodesVal kind  // JSON type of "nodes"
	edgesVal kind  // JSON type of "edges"
	agentURL field // "agent_url"
}

// Node is the read-only view of one element of the "nodes" array. Fields
// that are absent or not strings read as "".
type Node struct {
	// Index is the position of the node in the "nodes" array.
	Index int
	// ID is the node's "id" when it is a string.
	ID string
	// Type is the node's "type" when it is a string (see the Type constants).
	Type string
	// Name is data.name when it is a string.
	Name string
	// Prompt is data.prompt when it is a string.
	Prompt string
	// Greeting is data.greeting when it is a string (meaningful on startCall).
	Greeting string

	// JSON types of the element and of the keys above.
	self, idKind, typeKind, dataKind, nameKind, promptKind, greetingKind kind
	// blanks has a bit (nodeID, ...) set for each of those keys whose
	// value is a string made only of white space.
	blanks uint8
}

// Bits of Node.blanks.
const (
	nodeID uint8 = 1 << iota
	nodeType
	nodeName
	nodePrompt
	nodeGreeting
)

func (n *Node) isObject() bool  { return n.self == kindObject }
func (n *Node) id() field       { return field{n.idKind, n.ID, n.blanks&nodeID != 0} }
func (n *Node) typ() field      { return field{n.typeKind, n.Type, n.blanks&nodeType != 0} }
func (n *Node) name() field     { return field{n.nameKind, n.Name, n.blanks&nodeName != 0} }
func (n *Node) prompt() field   { return field{n.promptKind, n.Prompt, n.blanks&nodePrompt != 0} }
func (n *Node) greeting() field { return field{n.greetingKind, n.Greeting, n.blanks&nodeGreeting != 0} }

// isType reports whether the node's type is the string t.
func (n *Node) isType(t string) bool { return n.typeKind == kindString && n.Type == t }

// Edge is the read-only view of one element of the "edges" array. Fields
// that are absent or not strings read as "".
type Edge struct {
	// Index is the position of the edge in the "edges" array.
	Index int
	// ID is the edge's "id" when it is a string.
	ID string
	// Source is the edge's "source" when it is a string.
	Source string
	// Target is the edge's "target" when it is a string.
	Target string
	// Label is data.label when it is a string.
	Label string
	// Condition is data.condition when it is a string.
	Condition string

	// JSON types of the element and of the keys above.
	self, idKind, sourceKind, targetKind, dataKind, labelKind, condKind kind
	// blanks has a bit (edgeID, ...) set for each of those keys whose
	// value is a string made only of white space.
	blanks uint8
}

// Bits of Edge.blanks.
const (
	edgeID uint8 = 1 << iota
	edgeSource
	edgeTarget
	edgeLabel
	edgeCondition
)

func (e *Edge) isObject() bool   { return e.self == kindObject }
func (e *Edge) id() field        { return field{e.idKind, e.ID, e.blanks&edgeID != 0} }
func (e *Edge) source() field    { return field{e.sourceKind, e.Source, e.blanks&edgeSource != 0} }
func (e *Edge) target() field    { return field{e.targetKind, e.Target, e.blanks&edgeTarget != 0} }
func (e *Edge) label() field     { return field{e.labelKind, e.Label, e.blanks&edgeLabel != 0} }
func (e *Edge) condition() field { return field{e.condKind, e.Condition, e.blanks&edgeCondition != 0} }

// store copies f into one key's kind and text and sets or clears its bit
// in blanks.
func store(f field, k *kind, s *string, blanks *uint8, bit uint8) {
	*k, *s = f.kind, f.s
	if f.blank {
		*blanks |= bit
	} else {
		*blanks &^= bit
	}
}

// Parse reads a workflow definition. It fails only when raw is not valid
// JSON (exactly the documents json.Valid rejects; the error wraps
// ErrInvalidJSON); any valid JSON value, including null, [] or 42, gives a
// Definition whose problems Validate reports. raw is copied, and MarshalJSON
// / Raw return exactly these bytes, white space and key order and unknown
// keys included. Parse reads the document once and runs in linear time.
func Parse(raw []byte) (*Definition, error) {
	// One copy of the text: strings of the view are slices of it.
	d := &Definition{src: string(raw)}
	p := &parser{b: raw, src: d.src}
	d.decode(p)
	if p.err {
		var probe json.RawMessage
		if err := json.Unmarshal(raw, &probe); err != nil {
			return nil, fmt.Errorf("parse workflow definition: %w: %w", ErrInvalidJSON, err)
		}
		return nil, fmt.Errorf("parse workflow definition: %w", ErrInvalidJSON)
	}
	return d, nil
}

// MustParse is Parse for definitions known to be valid JSON (tests, built-in
// examples); it panics on invalid JSON.
func MustParse(raw string) *Definition {
	d, err := Parse([]byte(raw))
	if err != nil {
		panic(err)
	}
	return d
}

// decode reads the whole document with p and fills the view. Nesting depths
// passed to p count the containers around a value: the top-level object is
// depth 1, "nodes" 2, a node 3, its data 4.
func (d *Definition) decode(p *parser) {
	if p.peek() != '{' {
		d.view.top = p.value(0).kind
		p.end()
		return
	}
	d.view.top = kindObject
	for more := p.begin(1, '}'); more; more = p.more('}') {
		switch string(p.key()) {
		case "nodes":
			d.nodes, d.view.nodesVal = p.nodeList()
		case "edges":
			d.edges, d.view.edgesVal = p.edgeList()
		case "agent_url":
			d.view.agentURL = p.field(p.value(1))
		default:
			p.value(1)
		}
	}
	p.end()
}

// grow makes room for one more element, doubling the capacity when the
// slice is full. append alone grows large slices by about 1.25x, which on a
// 20,000-edge definition copies the array several times over.
func grow[T any](s []T) []T {
	if len(s) < cap(s) {
		return s
	}
	return slices.Grow(s, max(cap(s), 16))
}

// nodeList reads the value of "nodes".
func (p *parser) nodeList() ([]Node, kind) {
	if p.peek() != '[' {
		return nil, p.value(1).kind
	}
	var nodes []Node
	for more := p.begin(2, ']'); more; more = p.more(']') {
		nodes = grow(nodes)
		nodes = append(nodes, Node{Index: len(nodes)})
		p.node(&nodes[len(nodes)-1])
	}
	return nodes, kindArray
}

// node reads one element of "nodes". A repeated key overrides the earlier
// one, kind and text together.
func (p *parser) node(n *Node) {
	if p.peek() != '{' {
		n.self = p.value(2).kind
		return
	}
	n.self = kindObject
	for more := p.begin(3, '}'); more; more = p.more('}') {
		switch string(p.key()) {
		case "id":
			store(p.field(p.value(3)), &n.idKind, &n.ID, &n.blanks, nodeID)
		case "type":
			store(p.field(p.value(3)), &n.typeKind, &n.Type, &n.blanks, nodeType)
		case "data":
			p.nodeData(n)
		default:
			p.value(3)
		}
	}
}

// nodeData reads a node's "data".
func (p *parser) nodeData(n *Node) {
	n.nameKind, n.promptKind, n.greetingKind = kindAbsent, kindAbsent, kindAbsent
	n.Name, n.Prompt, n.Greeting = "", "", ""
	n.blanks &^= nodeName | nodePrompt | nodeGreeting
	if p.peek() != '{' {
		n.dataKind = p.value(3).kind
		return
	}
	n.dataKind = kindObject
	for more := p.begin(4, '}'); more; more = p.more('}') {
		switch string(p.key()) {
		case "name":
			store(p.field(p.value(4)), &n.nameKind, &n.Name, &n.blanks, nodeName)
		case "prompt":
			store(p.field(p.value(4)), &n.promptKind, &n.Prompt, &n.blanks, nodePrompt)
		case "greeting":
			store(p.field(p.value(4)), &n.greetingKind, &n.Greeting, &n.blanks, nodeGreeting)
		default:
			p.value(4)
		}
	}
}

// edgeList reads the value of "edges".
func (p *parser) edgeList() ([]Edge, kind) {
	if p.peek() != '[' {
		return nil, p.value(1).kind
	}
	var edges []Edge
	for more := p.begin(2, ']'); more; more = p.more(']') {
		edges = grow(edges)
		edges = append(edges, Edge{Index: len(edges)})
		p.edge(&edges[len(edges)-1])
	}
	return edges, kindArray
}

// edge reads one element of "edges", like node.
func (p *parser) edge(e *Edge) {
	if p.peek() != '{' {
		e.self = p.value(2).kind
		return
	}
	e.self = kindObject
	for more := p.begin(3, '}'); more; more = p.more('}') {
		switch string(p.key()) {
		case "id":
			store(p.field(p.value(3)), &e.idKind, &e.ID, &e.blanks, edgeID)
		case "source":
			store(p.field(p.value(3)), &e.sourceKind, &e.Source, &e.blanks, edgeSource)
		case "target":
			store(p.field(p.value(3)), &e.targetKind, &e.Target, &e.blanks, edgeTarget)
		case "data":
			p.edgeData(e)
		default:
			p.value(3)
		}
	}
}

// edgeData reads an edge's "data".
func (p *parser) edgeData(e *Edge) {
	e.labelKind, e.condKind = kindAbsent, kindAbsent
	e.Label, e.Condition = "", ""
	e.blanks &^= edgeLabel | edgeCondition
	if p.peek() != '{' {
		e.dataKind = p.value(3).kind
		return
	}
	e.dataKind = kindObject
	for more := p.begin(4, '}'); more; more = p.more('}') {
		switch string(p.key()) {
		case "label":
			store(p.field(p.value(4)), &e.labelKind, &e.Label, &e.blanks, edgeLabel)
		case "condition":
			store(p.field(p.value(4)), &e.condKind, &e.Condition, &e.blanks, edgeCondition)
		default:
			p.value(4)
		}
	}
}

// Raw returns a copy of the definition's JSON text exactly as it was parsed;
// "null" for a nil or zero Definition.
func (d *Definition) Raw() json.RawMessage {
	if d == nil || d.src == "" {
		return json.RawMessage("null")
	}
	return json.RawMessage(d.src)
}

// String returns the definition's JSON text exactly as it was parsed;
// "null" for a nil or zero Definition.
func (d *Definition) String() string {
	if d == nil || d.src == "" {
		return "null"
	}
	return d.src
}

// MarshalJSON returns the definition's JSON text exactly as it was parsed
// ("null" for a nil or zero Definition). Note that json.Marshal and
// json.Encoder compact a Marshaler's output and, unless SetEscapeHTML(false)
// is used, escape <, > and &: the value is unchanged but the bytes are not.
// Write Raw directly where byte-for-byte output matters.
func (d *Definition) MarshalJSON() ([]byte, error) {
	return d.Raw(), nil
}

// UnmarshalJSON replaces d with the definition parsed from b (see Parse).
// A JSON null yields the null definition. The error wraps ErrInvalidJSON.
func (d *Definition) UnmarshalJSON(b []byte) error {
	p, err := Parse(b)
	if err != nil {
		return err
	}
	*d = *p
	return nil
}

// Nodes returns the view of every element of the "nodes" array, in order,
// including elements that are not objects (their fields are all ""). It is
// empty when "nodes" is absent or not an array. The slice is shared: do not
// modify it.
func (d *Definition) Nodes() []Node {
	if d == nil {
		return nil
	}
	return d.nodes
}

// Edges returns the view of every element of the "edges" array, in order,
// like Nodes. The slice is shared: do not modify it.
func (d *Definition) Edges() []Edge {
	if d == nil {
		return nil
	}
	return d.edges
}

// AgentURL returns the top-level "agent_url" when it is a string (as sent,
// not trimmed), else "". API.md 6: a non-empty value names the voice-agent
// websocket the answered call is connected to.
func (d *Definition) AgentURL() string {
	if d == nil {
		return ""
	}
	return d.view.agentURL.s
}

// Greeting returns data.greeting of the first startCall node (in definition
// order) when it is a string, else "". It is the raw template text: render it
// with ParseTemplate / Render before speaking it.
func (d *Definition) Greeting() string {
	for i := range d.Nodes() {
		if n := &d.nodes[i]; n.isObject() && n.isType(TypeStartCall) {
			return n.Greeting
		}
	}
	return ""
}
