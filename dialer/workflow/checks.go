package workflow

import "fmt"

// checkNode reports the problems of node i (see Validate for the rules,
// their order and their messages).
func (v *validation) checkNode(i int) {
	n := &v.def.nodes[i]
	bad := func(field, msg string) {
		var f *string
		if field != "" {
			f = ptr(field)
		}
		v.add(KindNode, idPtr(n.id()), f, msg)
	}
	if !n.isObject() {
		bad("", fmt.Sprintf("Node at index %d is not a JSON object", i))
		return
	}
	switch nid := n.id(); {
	case nid.missing() || nid.isBlank():
		bad(fieldID, fmt.Sprintf("Node at index %d has no id", i))
	case !nid.isString():
		bad(fieldID, fmt.Sprintf("Node at index %d has an id that is not a string", i))
	case v.dupNode[i] >= 0:
		bad(fieldID, fmt.Sprintf("Duplicate node id (first used by the node at index %d)", v.dupNode[i]))
	}
	switch typ := n.typ(); {
	case typ.missing() || (typ.isString() && typ.s == ""):
		bad(fieldType, "Node has no type")
	case !typ.isString():
		bad(fieldType, "Node type must be a string")
	case !knownType(typ.s):
		bad(fieldType, fmt.Sprintf("Unknown node type %q (expected startCall, agentNode, endCall or globalNode)", typ.s))
	}
	if n.dataKind != kindAbsent && n.dataKind != kindNull && n.dataKind != kindObject {
		bad(fieldData, "Node data must be a JSON object")
	} else {
		if msg := requireText(n.name(), "Node name"); msg != "" {
			bad(fieldName, msg)
		}
		if msg := requireText(n.prompt(), "Node prompt"); msg != "" {
			bad(fieldPrompt, msg)
		}
		if g := n.greeting(); n.isType(TypeStartCall) && !g.missing() && !g.isString() {
			bad(fieldGreeting, "Greeting must be a string")
		}
	}
	fields, count := textFields(n)
	for _, tf := range fields[:count] {
		if err := checkTemplate(tf.value); err != nil {
			bad(tf.name, templateMessage(err))
		}
	}
	if !v.isGraphNode(i) || n.typeKind != kindString {
		return
	}
	switch n.Type {
	case TypeStartCall:
		if v.in[i] > 0 {
			bad("", "startCall node must not have incoming edges")
		}
	case TypeAgentNode:
		if v.in[i] == 0 {
			bad("", "Node has no incoming edges")
		}
	case TypeEndCall:
		if v.in[i] == 0 {
			bad("", "Node has no incoming edges")
		}
		if v.out[i] > 0 {
			bad("", "endCall node must not have outgoing edges")
		}
	case TypeGlobalNode:
		if v.in[i] > 0 || v.out[i] > 0 {
			bad("", "globalNode must not have edges")
		}
	}
	if v.reachKnown && !v.reachable[i] && (n.Type == TypeAgentNode || n.Type == TypeEndCall) {
		bad("", "Node is not reachable from the startCall node")
	}
}

// knownType reports whether t is one of the four node types.
func knownType(t string) bool {
	switch t {
	case TypeStartCall, TypeAgentNode, TypeEndCall, TypeGlobalNode:
		return true
	}
	return false
}

// requireText returns the message for a required string field that is
// missing, blank or not a string ("<what> is required" / "<what> must be a
// string"), or "" when the field is fine.
func requireText(f field, what string) string {
	switch {
	case f.missing() || f.isBlank():
		return what + " is required"
	case !f.isString():
		return what + " must be a string"
	}
	return ""
}

// templateMessage turns a template parse error into a validation message.
func templateMessage(te *TemplateError) string {
	return fmt.Sprintf("Malformed template: %s (at character %d)", te.Reason, te.Pos)
}

// checkEdge reports the problems of edge i (see Validate for the rules,
// their order and their messages).
func (v *validation) checkEdge(i int) {
	e := &v.def.edges[i]
	bad := func(field, msg string) {
		var f *string
		if field != "" {
			f = ptr(field)
		}
		v.add(KindEdge, idPtr(e.id()), f, msg)
	}
	if !e.isObject() {
		bad("", fmt.Sprintf("Edge at index %d is not a JSON object", i))
		return
	}
	switch eid := e.id(); {
	case eid.missing() || eid.isBlank():
		bad(fieldID, fmt.Sprintf("Edge at index %d has no id", i))
	case !eid.isString():
		bad(fieldID, fmt.Sprintf("Edge at index %d has an id that is not a string", i))
	case v.dupEdge[i] >= 0:
		bad(fieldID, fmt.Sprintf("Duplicate edge id (first used by the edge at index %d)", v.dupEdge[i]))
	}
	if v.src[i] < 0 {
		bad(fieldSource, MsgMissingNode)
	}
	if v.tgt[i] < 0 {
		bad(fieldTarget, MsgMissingNode)
	}
	if e.dataKind != kindAbsent && e.dataKind != kindNull && e.dataKind != kindObject {
		bad(fieldData, "Edge data must be a JSON object")
		return
	}
	if msg := requireText(e.label(), "Edge label"); msg != "" {
		bad(fieldLabel, msg)
	}
	if msg := requireText(e.condition(), "Edge condition"); msg != "" {
		bad(fieldCondition, msg)
	}
	if j := v.sameName[i]; j >= 0 {
		other := fmt.Sprintf("the edge at index %d", j)
		if first := &v.def.edges[j]; usableID(first.id()) {
			other = fmt.Sprintf("edge %q", first.ID)
		}
		bad(fieldLabel, fmt.Sprintf("Edge label gives transition name %q, already used by %s from the same node",
			TransitionName(e.Label), other))
	}
}
