package workflow

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// Kinds of validation errors (API.md 5.2).
const (
	KindWorkflow = "workflow"
	KindNode     = "node"
	KindEdge     = "edge"
)

// Field names used in Error.Field.
const (
	fieldNodes     = "nodes"
	fieldEdges     = "edges"
	fieldAgentURL  = "agent_url"
	fieldID        = "id"
	fieldType      = "type"
	fieldData      = "data"
	fieldName      = "data.name"
	fieldPrompt    = "data.prompt"
	fieldGreeting  = "data.greeting"
	fieldSource    = "source"
	fieldTarget    = "target"
	fieldLabel     = "data.label"
	fieldCondition = "data.condition"
)

// MsgMissingNode is the message of an edge whose source or target is not a
// node id (API.md 5.2 fixes it).
const MsgMissingNode = "Edge references missing node"

// Error is one validation problem, serialised as
// {"kind":..,"id":..,"field":..,"message":..}. Kind is KindWorkflow, KindNode
// or KindEdge. ID is the offending node's or edge's id, nil for workflow
// errors and for elements without a usable (non-blank string) id. Field is
// the offending key ("id", "type", "data.name", "source", ...), nil when the
// problem is not about one key. Message is a human-readable sentence.
type Error struct {
	Kind    string  `json:"kind"`
	ID      *string `json:"id"`
	Field   *string `json:"field"`
	Message string  `json:"message"`
}

// ErrInvalid is wrapped by *InvalidError.
var ErrInvalid = errors.New("workflow definition is invalid")

// InvalidError carries the problems of a definition that had to be valid
// (for example when a campaign is created from it). It wraps ErrInvalid.
type InvalidError struct {
	Errors []Error
}

// Error implements error.
func (e *InvalidError) Error() string {
	return fmt.Sprintf("workflow definition is invalid: %d problem(s)", len(e.Errors))
}

// Unwrap returns ErrInvalid.
func (e *InvalidError) Unwrap() error { return ErrInvalid }

// Check returns nil when def is valid, else an *InvalidError with every
// problem Validate finds.
func Check(def *Definition) error {
	if errs := Validate(def); len(errs) > 0 {
		return &InvalidError{Errors: errs}
	}
	return nil
}

// Validate checks def against every rule of API.md 5.2 and returns all
// problems at once; an empty, non-nil slice when def is valid. A nil def is
// the null definition. Validate never panics and runs in time linear in the
// size of the definition.
//
// Order: workflow errors first, then node errors in the order of the "nodes"
// array, then edge errors in the order of the "edges" array. For one element
// the errors follow the order of the rules in the messages below.
//
// Workflow errors (id null):
//   - the definition is not an object: "Workflow definition must be a JSON
//     object" (field null; nothing else is checked);
//   - "nodes must be an array" (field "nodes"), "edges must be an array"
//     (field "edges") when present, not null and not arrays;
//   - no nodes (absent, null or []): "Workflow has no nodes";
//   - otherwise "Workflow has no startCall node", "Workflow has N startCall
//     nodes; exactly one is allowed", "Workflow has N globalNode nodes; at
//     most one is allowed" (field null);
//   - agent_url present, not null and not a string: "agent_url must be a
//     string"; a non-blank string that is not an absolute ws:// or wss://
//     URL: "agent_url must be a ws:// or wss:// URL" (field "agent_url").
//
// Node errors, in this order for each node (kind "node", id the node's id or
// null when it has no usable id, field in brackets):
//
//  1. "Node at index N is not a JSON object" [null]; nothing else is checked.
//  2. "Node at index N has no id" [id] (absent, null or blank string);
//     "Node at index N has an id that is not a string" [id];
//     "Duplicate node id (first used by the node at index N)" [id].
//  3. "Node has no type" [type] (absent, null or ""); "Node type must be a
//     string" [type]; `Unknown node type "x" (expected startCall, agentNode,
//     endCall or globalNode)` [type].
//  4. "Node data must be a JSON object" [data] when data is present, not
//     null and not an object; then 5 and 6 are skipped.
//  5. "Node name is required" [data.name] (absent, null or blank); "Node
//     name must be a string" [data.name].
//  6. "Node prompt is required" [data.prompt]; "Node prompt must be a
//     string" [data.prompt]; for startCall "Greeting must be a string"
//     [data.greeting] when present, not null and not a string.
//  7. Templates of the text fields (data.prompt of every node, data.greeting
//     of startCall): "Malformed template: <reason> (at character N)" [the
//     field], one per field, for its first problem (see ParseTemplate; an
//     unknown zone in current_time_<zone> or current_weekday_<zone> is one).
//  8. Graph rules (unique usable id only), field null: "startCall node must
//     not have incoming edges"; "Node has no incoming edges" (agentNode,
//     endCall); "endCall node must not have outgoing edges"; "globalNode must
//     not have edges"; "Node is not reachable from the startCall node".
//
// Edge errors, in this order for each edge (kind "edge", id the edge's id or
// null, field in brackets):
//
//  1. "Edge at index N is not a JSON object" [null]; nothing else is checked.
//  2. "Edge at index N has no id" [id]; "Edge at index N has an id that is
//     not a string" [id]; "Duplicate edge id (first used by the edge at
//     index N)" [id].
//  3. "Edge references missing node" [source], then the same [target], when
//     the end is absent, not a string, or no node has that id.
//  4. "Edge data must be a JSON object" [data] when present, not null and
//     not an object; then 5 to 7 are skipped.
//  5. "Edge label is required" / "Edge label must be a string" [data.label].
//  6. "Edge condition is required" / "Edge condition must be a string"
//     [data.condition].
//  7. `Edge label gives transition name "x", already used by edge "e1" from
//     the same node` [data.label] (or "by the edge at index N" when that edge
//     has no usable id), for every edge after the first with that name.
//
// Graph rules (edges in and out, reachability) apply only to nodes with a
// unique, non-blank string id; an edge counts as incoming to its target and
// outgoing from its source when that end resolves, even if the other end
// does not. A node is reachable when a path of resolved edges leads to it
// from a startCall node; the check is skipped when no startCall node has a
// usable id, and applies only to agentNode and endCall nodes. When a node id
// is duplicated, edges naming it resolve to the first node with that id.
func Validate(def *Definition) []Error {
	if def == nil {
		def = &Definition{}
	}
	v := newValidation(def)
	if def.view.top != kindObject {
		v.add(KindWorkflow, nil, nil, "Workflow definition must be a JSON object")
		return v.errs
	}
	v.workflow()
	v.graph()
	for i := range def.nodes {
		v.checkNode(i)
	}
	v.transitions()
	for i := range def.edges {
		v.checkEdge(i)
	}
	return v.errs
}

// validation is the state of one Validate call.
type validation struct {
	def  *Definition
	errs []Error

	byID       map[string]int // usable node id → index of its first node
	dupNode    []int          // index of the first node with the same id, else -1
	graphNode  []bool         // node takes part in the graph rules (see isGraphNode)
	in, out    []int32        // edges into / out of each node
	reachable  []bool
	reachKnown bool  // false when there was no startCall root
	src, tgt   []int // resolved source / target node index of each edge, else -1
	dupEdge    []int // index of the first edge with the same id, else -1
	sameName   []int // index of an earlier edge from the same node with the same transition name, else -1
}

// newValidation allocates the per-call state.
func newValidation(def *Definition) *validation {
	return &validation{def: def, errs: []Error{}}
}

// add appends one error; id and field may be nil.
func (v *validation) add(kind string, id, field *string, msg string) {
	v.errs = append(v.errs, Error{Kind: kind, ID: id, Field: field, Message: msg})
}

// ptr returns a pointer to a copy of s.
func ptr(s string) *string { return &s }

// usableID reports whether the id of a node or edge is a non-blank string.
func usableID(f field) bool { return f.isString() && !f.isBlank() }

// idPtr returns the id to report for a node or edge: nil unless usable.
func idPtr(f field) *string {
	if usableID(f) {
		return ptr(f.s)
	}
	return nil
}

// workflow reports the top-level problems.
func (v *validation) workflow() {
	vw := v.def.view
	nodesOK := vw.nodesVal == kindAbsent || vw.nodesVal == kindNull || vw.nodesVal == kindArray
	if !nodesOK {
		v.add(KindWorkflow, nil, ptr(fieldNodes), "nodes must be an array")
	}
	if vw.edgesVal != kindAbsent && vw.edgesVal != kindNull && vw.edgesVal != kindArray {
		v.add(KindWorkflow, nil, ptr(fieldEdges), "edges must be an array")
	}
	if nodesOK {
		starts, globals := 0, 0
		for i := range v.def.nodes {
			n := &v.def.nodes[i]
			switch {
			case !n.isObject():
			case n.isType(TypeStartCall):
				starts++
			case n.isType(TypeGlobalNode):
				globals++
			}
		}
		switch {
		case len(v.def.nodes) == 0:
			v.add(KindWorkflow, nil, nil, "Workflow has no nodes")
		case starts == 0:
			v.add(KindWorkflow, nil, nil, "Workflow has no startCall node")
		case starts > 1:
			v.add(KindWorkflow, nil, nil, fmt.Sprintf("Workflow has %d startCall nodes; exactly one is allowed", starts))
		}
		if globals > 1 {
			v.add(KindWorkflow, nil, nil, fmt.Sprintf("Workflow has %d globalNode nodes; at most one is allowed", globals))
		}
	}
	switch au := vw.agentURL; {
	case au.missing():
	case !au.isString():
		v.add(KindWorkflow, nil, ptr(fieldAgentURL), "agent_url must be a string")
	case !au.isBlank() && !isWebsocketURL(au.s):
		v.add(KindWorkflow, nil, ptr(fieldAgentURL), "agent_url must be a ws:// or wss:// URL")
	}
}

// isWebsocketURL reports whether s is an absolute ws:// or wss:// URL with a
// host.
func isWebsocketURL(s string) bool {
	u, err := url.Parse(s)
	if err != nil {
		return false
	}
	scheme := strings.ToLower(u.Scheme)
	return (scheme == "ws" || scheme == "wss") && u.Host != ""
}

// graph resolves ids and edges and computes degrees and reachability.
func (v *validation) graph() {
	nodes, edges := v.def.nodes, v.def.edges
	v.byID = make(map[string]int, len(nodes))
	v.dupNode = make([]int, len(nodes))
	for i := range nodes {
		n := &nodes[i]
		v.dupNode[i] = -1
		if !n.isObject() || !usableID(n.id()) {
			continue
		}
		if first, ok := v.byID[n.ID]; ok {
			v.dupNode[i] = first
			continue
		}
		v.byID[n.ID] = i
	}
	v.graphNode = make([]bool, len(nodes))
	for i := range nodes {
		v.graphNode[i] = nodes[i].isObject() && usableID(nodes[i].id()) && v.dupNode[i] < 0
	}
	v.in = make([]int32, len(nodes))
	v.out = make([]int32, len(nodes))
	v.src = make([]int, len(edges))
	v.tgt = make([]int, len(edges))
	v.dupEdge = make([]int, len(edges))
	edgeIDs := make(map[string]int, len(edges))
	for i := range edges {
		e := &edges[i]
		v.src[i], v.tgt[i], v.dupEdge[i] = -1, -1, -1
		if !e.isObject() {
			continue
		}
		if usableID(e.id()) {
			if first, ok := edgeIDs[e.ID]; ok {
				v.dupEdge[i] = first
			} else {
				edgeIDs[e.ID] = i
			}
		}
		v.src[i] = v.resolve(e.source())
		v.tgt[i] = v.resolve(e.target())
		if v.src[i] >= 0 {
			v.out[v.src[i]]++
		}
		if v.tgt[i] >= 0 {
			v.in[v.tgt[i]]++
		}
	}
	v.reach()
}

// resolve returns the index of the node an edge end names, or -1.
func (v *validation) resolve(f field) int {
	if !f.isString() {
		return -1
	}
	if i, ok := v.byID[f.s]; ok {
		return i
	}
	return -1
}

// reach marks the nodes reachable from the startCall nodes over edges whose
// both ends resolve (breadth-first, iterative, so cycles and long chains are
// fine).
func (v *validation) reach() {
	nodes := v.def.nodes
	// Adjacency in compressed form: targets of node i are adj[start[i]:start[i+1]].
	start := make([]int32, len(nodes)+1)
	for i := range v.src {
		if v.src[i] >= 0 && v.tgt[i] >= 0 {
			start[v.src[i]+1]++
		}
	}
	for i := 1; i < len(start); i++ {
		start[i] += start[i-1]
	}
	adj := make([]int32, start[len(nodes)])
	fill := append([]int32(nil), start[:len(nodes)]...)
	for i := range v.src {
		if s, t := v.src[i], v.tgt[i]; s >= 0 && t >= 0 {
			adj[fill[s]] = int32(t)
			fill[s]++
		}
	}
	v.reachable = make([]bool, len(nodes))
	var queue []int32
	for i := range nodes {
		if v.isGraphNode(i) && nodes[i].isType(TypeStartCall) {
			v.reachable[i] = true
			queue = append(queue, int32(i))
		}
	}
	v.reachKnown = len(queue) > 0
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, t := range adj[start[n]:start[n+1]] {
			if !v.reachable[t] {
				v.reachable[t] = true
				queue = append(queue, t)
			}
		}
	}
}

// isGraphNode reports whether node i takes part in the graph rules: an
// object with a usable id that no earlier node has.
func (v *validation) isGraphNode(i int) bool { return v.graphNode[i] }
