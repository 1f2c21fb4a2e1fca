package workflow

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// fuzzSeeds are nasty definitions for the fuzz corpus.
var fuzzSeeds = []string{
	``, `null`, `[]`, `{}`, `0`, `-1e400`, `"x"`, `true`, `{"nodes":null}`, `{"nodes":{}}`,
	`{"nodes":[null,1,"s",[],{}],"edges":[null,1,"e",[],{}]}`,
	`{"nodes":[{"id":1,"type":2,"data":3}],"edges":[{"id":1,"source":1,"target":[],"data":[]}]}`,
	`{"nodes":[{"id":"a","type":"startCall","data":{"name":"n","prompt":"{{"}}],"edges":[{"id":"e","source":"a","target":"a"}]}`,
	`{"nodes":[{"id":"a","type":"agentNode"},{"id":"a","type":"agentNode"}],"edges":[{"id":"e","source":"a","target":"b"},{"id":"e","source":"b","target":"a"}]}`,
	`{"n\u006fdes":[{"\u0069d":"\ud800","type":"startCall","data":{"name":"\"}","prompt":"\\{{x}}"}}]}`,
	"{\"nodes\":[{\"id\":\"\xff\xfe\",\"type\":\"startCall\",\"data\":{\"name\":\"\xc3\",\"prompt\":\"{{ \xff }}\"}}]}",
	`{"nodes":[{"id":"s","type":"startCall","data":{"name":"n","prompt":"p","greeting":"{{ a | default }}"}}],"agent_url":"ws://"}`,
	`{"nodes":[{"data":{"data":{"name":"x"}},"id":"x"}],"edges":[{"data":{"label":"A","condition":"c"},"source":"x","target":"x","id":"y"},{"data":{"label":"a","condition":"c"},"source":"x","target":"x","id":"z"}]}`,
	`{"nodes":[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]}`,
	`{"nodes":[{"id":"s","type":"startCall","data":{"name":"n","prompt":"p"},"id":null}]}`,
	`{"nodes":"nodes","edges":"edges","agent_url":{}}`,
	`{"edges":[{"id":"e","source":"s","target":"a","data":{"label":"L","condition":"c"}}],"nodes":[{"id":"s","type":"startCall","data":{"name":"n","prompt":"p"}},{"id":"a","type":"endCall","data":{"name":"n","prompt":"p"}}]}`,
	`{"nodes":[],"nodes":[{"id":"s","type":"startCall","data":{"name":"n","prompt":"p"}}],"edges":[1],"edges":[]}`,
	odd,
	def(basic, basicEdges...),
}

// FuzzValidate checks that no input makes the decoder or the validator
// panic, that Parse keeps bytes, that the parser reads exactly what
// encoding/json reads, and that the error list is well formed.
func FuzzValidate(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := Parse(data)
		if valid := json.Valid(data); (err == nil) != valid {
			t.Fatalf("Parse error = %v, json.Valid = %v", err, valid)
		}
		if err != nil {
			return
		}
		if got, _ := d.MarshalJSON(); !bytes.Equal(got, data) {
			t.Fatalf("MarshalJSON = %q, want %q", got, data)
		}
		compareWithReference(t, d, data)

		errs := Validate(d)
		if errs == nil {
			t.Fatalf("Validate = nil, want non-nil")
		}
		rank := map[string]int{KindWorkflow: 0, KindNode: 1, KindEdge: 2}
		last := 0
		for _, e := range errs {
			r, ok := rank[e.Kind]
			if !ok || r < last {
				t.Fatalf("error kinds out of order or unknown: %s", errsString(errs))
			}
			last = r
			if e.Message == "" || (e.ID != nil && strings.TrimSpace(*e.ID) == "") || (e.Field != nil && *e.Field == "") {
				t.Fatalf("malformed error %+v", e)
			}
		}
		if again := Validate(d); !reflect.DeepEqual(errs, again) {
			t.Fatalf("Validate is not deterministic: %s vs %s", errsString(errs), errsString(again))
		}
		if _, err := json.Marshal(errs); err != nil {
			t.Fatalf("Marshal errors = %v", err)
		}
		_ = RequiredVariables(d)
		if len(errs) == 0 {
			if _, err := Render(d.Greeting(), nil, Builtins{}); err != nil {
				t.Fatalf("valid definition has a greeting that does not render: %v", err)
			}
		}
	})
}

// compareWithReference decodes data with encoding/json and checks that the
// parser's view agrees field by field.
func compareWithReference(t *testing.T, d *Definition, data []byte) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var top any
	if err := dec.Decode(&top); err != nil {
		t.Fatalf("reference decode error = %v", err)
	}
	if got, want := d.view.top, refKind(top, true); got != want {
		t.Fatalf("top kind = %v, want %v", got, want)
	}
	obj, _ := top.(map[string]any)
	if got, want := d.view.agentURL, refField(obj, "agent_url"); got != want {
		t.Fatalf("agent_url = %+v, want %+v", got, want)
	}
	nodes, _ := obj["nodes"].([]any)
	if len(d.nodes) != len(nodes) {
		t.Fatalf("len(nodes) = %d, want %d", len(d.nodes), len(nodes))
	}
	for i, raw := range nodes {
		n := &d.nodes[i]
		m, isObj := raw.(map[string]any)
		data, _ := m["data"].(map[string]any)
		got := []any{n.isObject(), n.id(), n.typ(), n.dataKind, n.name(), n.prompt(), n.greeting()}
		want := []any{isObj, refField(m, "id"), refField(m, "type"), refKind(m["data"], hasKey(m, "data")),
			refField(data, "name"), refField(data, "prompt"), refField(data, "greeting")}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("node %d = %+v, want %+v", i, got, want)
		}
	}
	edges, _ := obj["edges"].([]any)
	if len(d.edges) != len(edges) {
		t.Fatalf("len(edges) = %d, want %d", len(d.edges), len(edges))
	}
	for i, raw := range edges {
		e := &d.edges[i]
		m, isObj := raw.(map[string]any)
		data, _ := m["data"].(map[string]any)
		got := []any{e.isObject(), e.id(), e.source(), e.target(), e.dataKind, e.label(), e.condition()}
		want := []any{isObj, refField(m, "id"), refField(m, "source"), refField(m, "target"),
			refKind(m["data"], hasKey(m, "data")), refField(data, "label"), refField(data, "condition")}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("edge %d = %+v, want %+v", i, got, want)
		}
	}
}

func hasKey(m map[string]any, k string) bool {
	_, ok := m[k]
	return ok
}

// refKind maps an encoding/json value to the parser's kind.
func refKind(v any, present bool) kind {
	if !present {
		return kindAbsent
	}
	switch v.(type) {
	case nil:
		return kindNull
	case bool:
		return kindBool
	case json.Number:
		return kindNumber
	case string:
		return kindString
	case []any:
		return kindArray
	case map[string]any:
		return kindObject
	}
	return kindAbsent
}

// refField is what the parser should report for key k of m.
func refField(m map[string]any, k string) field {
	v, ok := m[k]
	f := field{kind: refKind(v, ok)}
	if s, isStr := v.(string); isStr {
		f.s, f.blank = s, strings.TrimSpace(s) == ""
	}
	return f
}

// FuzzTemplate checks that parsing and rendering never panic and that text
// without "{{" is returned unchanged.
func FuzzTemplate(f *testing.F) {
	for _, s := range []string{"", "{{", "}}", "{{}}", "{{ a | default b }}", "{{a.b}}", "{{ | }}", "{{{{}}}}", "x{{ a }}}}{{", "é{{ \xff }}",
		"{{ a | b }}", "{{ a | fallback }}", "{{ a | fallback:b }}", "{{ initial_context.a }}", "{{ current_time_UTC }}",
		"{{ current_weekday }} {{ current_weekday_Europe/Paris }}", "{{ current_time_Nowhere }}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var ref strings.Builder
		for _, r := range strings.ToLower(s) {
			if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
				ref.WriteRune(r)
			} else {
				ref.WriteByte('_')
			}
		}
		if got := TransitionName(s); got != ref.String() {
			t.Fatalf("TransitionName(%q) = %q, want %q", s, got, ref.String())
		}
		tmpl, err := ParseTemplate(s)
		if err != nil {
			if !strings.Contains(s, "{{") {
				t.Fatalf("ParseTemplate(%q) error = %v for text without {{", s, err)
			}
			return
		}
		ctx := map[string]string{}
		for _, v := range tmpl.Vars() {
			if strings.TrimSpace(v.Path) != v.Path || v.Path == "" || strings.ContainsAny(v.Path, "{}|") {
				t.Fatalf("ParseTemplate(%q) gave bad path %q", s, v.Path)
			}
			ctx[v.Path] = "v"
		}
		out := tmpl.Render(ctx, Builtins{})
		if !strings.Contains(s, "{{") && out != s {
			t.Fatalf("Render(%q) = %q, want the text unchanged", s, out)
		}
	})
}

// FuzzValidateGraph builds random but well-formed JSON graphs from the fuzz
// input, drawing ids, types, labels and texts from small pools so duplicate
// ids, dangling edges, cycles and colliding labels are common, and checks
// the validator against simple reference facts.
func FuzzValidateGraph(f *testing.F) {
	f.Add([]byte{3, 0, 0, 1, 1, 2, 2, 0, 1, 2, 0, 1, 1, 2, 3, 0})
	f.Add([]byte{6, 5, 4, 3, 2, 1, 0, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add(bytes.Repeat([]byte{1, 2, 3}, 40))
	ids := []any{"a", "b", "c", "d", "a", " ", nil, 5, "", "e"}
	types := []any{TypeStartCall, TypeAgentNode, TypeEndCall, TypeGlobalNode, TypeAgentNode, "bogus", nil, 3}
	texts := []any{"Hello", "Hi {{ first_name }}", "{{ x | default y }}", "   ", "", nil, 7, "Bad {{", "{{ }}", "{{a..b}}"}
	labels := []any{"Go", "go!", "GO?", "Stop", "stop", "", " ", nil, 1, "Ünï"}
	f.Fuzz(func(t *testing.T, data []byte) {
		pick := func(pool []any) any {
			if len(data) == 0 {
				return pool[0]
			}
			b := data[0]
			data = data[1:]
			return pool[int(b)%len(pool)]
		}
		set := func(m map[string]any, k string, v any) {
			if v != nil || len(data)%2 == 0 { // sometimes absent, sometimes null
				m[k] = v
			}
		}
		count := 0
		if len(data) > 0 {
			count = int(data[0] % 12)
			data = data[1:]
		}
		var nodes, edges []any
		for range count {
			n := map[string]any{}
			set(n, "id", pick(ids))
			set(n, "type", pick(types))
			set(n, "data", map[string]any{"name": pick(texts), "prompt": pick(texts), "greeting": pick(texts)})
			nodes = append(nodes, n)
		}
		for len(data) >= 4 {
			e := map[string]any{}
			set(e, "id", pick(ids))
			set(e, "source", pick(ids))
			set(e, "target", pick(ids))
			set(e, "data", map[string]any{"label": pick(labels), "condition": pick(texts)})
			edges = append(edges, e)
		}
		raw, err := json.Marshal(map[string]any{"nodes": nodes, "edges": edges})
		if err != nil {
			t.Fatalf("Marshal error = %v", err)
		}
		d, err := Parse(raw)
		if err != nil {
			t.Fatalf("Parse(%s) error = %v", raw, err)
		}
		errs := Validate(d)

		// Reference: usable node ids and start nodes.
		usable := map[string]bool{}
		starts := 0
		for _, n := range nodes {
			m := n.(map[string]any)
			if id, ok := m["id"].(string); ok && strings.TrimSpace(id) != "" {
				usable[id] = true
			}
			if m["type"] == TypeStartCall {
				starts++
			}
		}
		has := func(kind string, id any, field, msg string) bool {
			for _, e := range errs {
				if e.Kind == kind && e.Field != nil && *e.Field == field && e.Message == msg {
					if s, ok := id.(string); ok && strings.TrimSpace(s) != "" {
						if e.ID != nil && *e.ID == s {
							return true
						}
						continue
					}
					if e.ID == nil {
						return true
					}
				}
			}
			return false
		}
		missing := 0
		for _, e := range edges {
			m := e.(map[string]any)
			for _, end := range []string{"source", "target"} {
				s, ok := m[end].(string)
				if !ok || !usable[s] {
					missing++
					if !has(KindEdge, m["id"], end, MsgMissingNode) {
						t.Fatalf("%s: edge %v has a dangling %s but no error in %s", raw, m["id"], end, errsString(errs))
					}
				}
			}
		}
		got := 0
		for _, e := range errs {
			if e.Message == MsgMissingNode {
				got++
			}
		}
		if got != missing {
			t.Fatalf("%s: %d missing-node errors, want %d: %s", raw, got, missing, errsString(errs))
		}
		noStart := false
		for _, e := range errs {
			noStart = noStart || e.Message == "Workflow has no startCall node"
		}
		if want := count > 0 && starts == 0; noStart != want {
			t.Fatalf("%s: no-startCall error = %v, want %v", raw, noStart, want)
		}
		_ = RequiredVariables(d)
	})
}
