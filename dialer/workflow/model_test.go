package workflow

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// odd is a definition with unknown keys at every level, unusual white space,
// escapes, HTML characters, huge and precise numbers and duplicate keys, all
// of which must survive untouched.
const odd = "{ \"version\" : 3,\n\t\"meta\":{\"owner\":\"ops\",\"tags\":[\"a\",{\"b\":null}]},\n" +
	`"agent_url":"wss://agent.example/ws?x=1&y=<2>",` + "\n" +
	`"nodes":[{"id":"n1","type":"startCall","position":{"x":1.50,"y":-0e0,"zoom":12345678901234567890123},` +
	`"selected":true,"data":{"name":"Greet\u0069ng","prompt":"Hi {{first_name}} \ud83d\ude00 <b>&amp;</b>","greeting":"Hello {{ first_name | default there }}!",` +
	`"voice":{"id":"v1","speed":1e400},"name_extra":"x"},"width":150},` +
	`{"id":"n2","type":"endCall","data":{"name":"Bye","prompt":"Good\u0062ye","extra":[1,2,3]},"dragging":false}],` + "\n" +
	`"edges":[{"id":"e1","source":"n1","target":"n2","animated":true,"data":{"label":"Done","condition":"always","priority":1},"style":{}}],` +
	`"viewport":{"x":0,"y":0,"zoom":1},"viewport":{"x":1}  }`

func TestParseKeepsBytes(t *testing.T) {
	d, err := Parse([]byte(odd))
	if err != nil {
		t.Fatalf("Parse error = %v, want nil", err)
	}
	got, err := d.MarshalJSON()
	if err != nil {
		t.Fatalf("MarshalJSON error = %v", err)
	}
	if !bytes.Equal(got, []byte(odd)) {
		t.Fatalf("MarshalJSON = %s, want %s", got, odd)
	}
	if raw := d.Raw(); !bytes.Equal(raw, []byte(odd)) {
		t.Fatalf("Raw = %s, want %s", raw, odd)
	}
	if errs := Validate(d); len(errs) != 0 {
		t.Fatalf("Validate = %s, want []", errsString(errs))
	}
}

func TestParseCopiesInput(t *testing.T) {
	in := []byte(`{"nodes":[]}`)
	d, err := Parse(in)
	if err != nil {
		t.Fatalf("Parse error = %v", err)
	}
	copy(in, `{"edges":[]}`)
	if got, want := string(d.Raw()), `{"nodes":[]}`; got != want {
		t.Fatalf("Raw after caller reused buffer = %s, want %s", got, want)
	}
	r := d.Raw()
	r[0] = 'X'
	if got, want := string(d.Raw()), `{"nodes":[]}`; got != want {
		t.Fatalf("Raw after modifying a returned copy = %s, want %s", got, want)
	}
}

// wrapper is how an HTTP request or a store row embeds a definition.
type wrapper struct {
	Name string      `json:"name"`
	Def  *Definition `json:"workflow_definition"`
}

func TestDefinitionEmbedded(t *testing.T) {
	body := `{"name":"w","workflow_definition":` + odd + `}`
	var w wrapper
	if err := json.Unmarshal([]byte(body), &w); err != nil {
		t.Fatalf("Unmarshal error = %v", err)
	}
	if !bytes.Equal(w.Def.Raw(), []byte(odd)) {
		t.Fatalf("embedded Raw = %s, want %s", w.Def.Raw(), odd)
	}
	// Through an encoder the text is compacted (a json package rule for
	// Marshalers) but nothing else changes when HTML escaping is off.
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(w); err != nil {
		t.Fatalf("Encode error = %v", err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(body)); err != nil {
		t.Fatalf("Compact error = %v", err)
	}
	if got, want := bytes.TrimSpace(out.Bytes()), compact.Bytes(); !bytes.Equal(got, want) {
		t.Fatalf("Encode = %s, want %s", got, want)
	}

	var null wrapper
	if err := json.Unmarshal([]byte(`{"name":"w","workflow_definition":null}`), &null); err != nil {
		t.Fatalf("Unmarshal null error = %v", err)
	}
	if got, want := len(Validate(null.Def)), 1; got != want {
		t.Fatalf("len(Validate(null)) = %d, want %d", got, want)
	}
	b, _ := json.Marshal(null)
	if got, want := string(b), `{"name":"w","workflow_definition":null}`; got != want {
		t.Fatalf("Marshal(null def) = %s, want %s", got, want)
	}

	var value struct {
		Def Definition `json:"d"`
	}
	if err := json.Unmarshal([]byte(`{"d":{"nodes":"x"}}`), &value); err != nil {
		t.Fatalf("Unmarshal value error = %v", err)
	}
	if got, want := string(value.Def.Raw()), `{"nodes":"x"}`; got != want {
		t.Fatalf("value Raw = %s, want %s", got, want)
	}
}

func TestParseInvalidJSON(t *testing.T) {
	for _, in := range []string{``, ` `, `{`, `{"nodes":[}`, `{} {}`, `nul`, "{\"a\":\"\x01\"}", `[1,]`} {
		d, err := Parse([]byte(in))
		if !errors.Is(err, ErrInvalidJSON) || d != nil {
			t.Fatalf("Parse(%q) = %v, %v; want nil, ErrInvalidJSON", in, d, err)
		}
	}
	var d Definition
	if err := d.UnmarshalJSON([]byte(`{`)); !errors.Is(err, ErrInvalidJSON) {
		t.Fatalf("UnmarshalJSON error = %v, want ErrInvalidJSON", err)
	}
}

func TestAccessors(t *testing.T) {
	d := MustParse(odd)
	if got, want := d.AgentURL(), "wss://agent.example/ws?x=1&y=<2>"; got != want {
		t.Fatalf("AgentURL = %q, want %q", got, want)
	}
	if got, want := d.Greeting(), "Hello {{ first_name | default there }}!"; got != want {
		t.Fatalf("Greeting = %q, want %q", got, want)
	}
	nodes := d.Nodes()
	if got, want := len(nodes), 2; got != want {
		t.Fatalf("len(Nodes) = %d, want %d", got, want)
	}
	n := nodes[0]
	if n.ID != "n1" || n.Type != TypeStartCall || n.Name != "Greeting" || n.Prompt != "Hi {{first_name}} 😀 <b>&amp;</b>" {
		t.Fatalf("Nodes[0] = %+v, want n1/startCall/Greeting/decoded prompt", n)
	}
	if got, want := nodes[1].Prompt, "Goodbye"; got != want {
		t.Fatalf("Nodes[1].Prompt = %q, want %q", got, want)
	}
	edges := d.Edges()
	if len(edges) != 1 {
		t.Fatalf("len(Edges) = %d, want 1", len(edges))
	}
	e := edges[0]
	if e.ID != "e1" || e.Source != "n1" || e.Target != "n2" || e.Label != "Done" || e.Condition != "always" || e.Index != 0 {
		t.Fatalf("Edges[0] = %+v, want e1 n1→n2 Done/always", e)
	}

	tests := []struct {
		def            string
		agent, greet   string
		nodes, edgeCnt int
	}{
		{`null`, "", "", 0, 0},
		{`{"agent_url":5,"nodes":[1,"x",{"id":"s","type":"startCall","data":{"greeting":7}}]}`, "", "", 3, 0},
		{`{"nodes":[{"type":"agentNode","data":{"greeting":"no"}},{"type":"startCall","data":{"greeting":"yes"}},{"type":"startCall","data":{"greeting":"second"}}]}`, "", "yes", 3, 0},
		{`{"agent_url":" ws://x ","edges":[1,2]}`, " ws://x ", "", 0, 2},
	}
	for _, tt := range tests {
		d := MustParse(tt.def)
		if got := d.AgentURL(); got != tt.agent {
			t.Fatalf("AgentURL(%s) = %q, want %q", tt.def, got, tt.agent)
		}
		if got := d.Greeting(); got != tt.greet {
			t.Fatalf("Greeting(%s) = %q, want %q", tt.def, got, tt.greet)
		}
		if got := len(d.Nodes()); got != tt.nodes {
			t.Fatalf("len(Nodes(%s)) = %d, want %d", tt.def, got, tt.nodes)
		}
		if got := len(d.Edges()); got != tt.edgeCnt {
			t.Fatalf("len(Edges(%s)) = %d, want %d", tt.def, got, tt.edgeCnt)
		}
	}

	var nilDef *Definition
	if nilDef.AgentURL() != "" || nilDef.Greeting() != "" || nilDef.Nodes() != nil || nilDef.Edges() != nil {
		t.Fatalf("nil Definition accessors returned values, want zero values")
	}
	if got, _ := nilDef.MarshalJSON(); string(got) != "null" {
		t.Fatalf("nil MarshalJSON = %s, want null", got)
	}
	if got := nilDef.String(); got != "null" {
		t.Fatalf("nil String = %s, want null", got)
	}
	if got := d.String(); got != odd {
		t.Fatalf("String = %s, want %s", got, odd)
	}
}

// nest returns open repeated n times, then inner, then close n times.
func nest(n int, open, inner, close string) string {
	return strings.Repeat(open, n) + inner + strings.Repeat(close, n)
}

func TestParseAgreesWithJSONValid(t *testing.T) {
	inputs := []string{
		`0`, `-0`, `01`, `-`, `1.`, `.5`, `1e`, `1E+2`, `1e-0`, `-1.5e+300`, `+1`, `1.0e+`, `0x10`, `Infinity`, `NaN`,
		`""`, `"\u00e9"`, `"\u00G9"`, `"\x"`, `"\/"`, "\"a\tb\"", "\"a\x7fb\"", "\"\xff\"", `"\`, `"abc`, `"\u12"`,
		`true`, `tru`, `nulll`, `false `, ` null`, "\ufeff{}", "{}\f", "\t{ }\r\n",
		`{"a":1,}`, `{"a" 1}`, `{a:1}`, `{"a":1 "b":2}`, `[1 2]`, `[,]`, `[1,]`, `{,}`, `{"a"}`, `{"a":}`, `[]]`, `{}}`, `[`, `]`,
		`{"nodes":[1,]}`, `{"nodes":[{"id":"x",}]}`, `{"nodes":[{"data":{"name":"x",}}]}`, `{"nodes":[{"data":{"name":"x"}}]`,
		`{"edges":[{"data":{"label":01}}]}`, `{"nodes":[{"id":"a""b"}]}`, `{"agent_url":"x"`, `{"x":{"y":[1,{"z":[]}],"w":{}}}`,
		nest(10000, "[", "", "]"), nest(10001, "[", "", "]"),
		nest(9999, `{"a":`, "1", "}"), nest(10000, `{"a":`, "{}", "}"),
		`{"nodes":` + nest(9999, "[", "", "]") + `}`, `{"nodes":` + nest(10000, "[", "", "]") + `}`,
		`{"nodes":[{"x":` + nest(9997, "[", "", "]") + `}]}`, `{"nodes":[{"x":` + nest(9998, "[", "", "]") + `}]}`,
		`{"nodes":[{"data":` + nest(9997, "[", "", "]") + `}]}`, `{"nodes":[{"data":` + nest(9997, "[", "{}", "]") + `}]}`,
		`{"edges":[{"data":{"q":` + nest(9996, "[", "", "]") + `}}]}`, `{"edges":[{"data":{"q":` + nest(9997, "[", "", "]") + `}}]}`,
	}
	for _, in := range inputs {
		_, err := Parse([]byte(in))
		if got, want := err == nil, json.Valid([]byte(in)); got != want {
			short := in
			if len(short) > 60 {
				short = short[:60] + "..."
			}
			t.Fatalf("Parse(%q) ok = %v, json.Valid = %v", short, got, want)
		}
	}
}

func TestStringScanning(t *testing.T) {
	// Put each tricky byte sequence at every offset of strings of several
	// lengths, so it falls inside, before and after 8-byte words, and check
	// validity and decoded text against encoding/json.
	specials := []string{`\"`, `\\`, `\n`, `\u00e9`, `\ud83d\ude00`, "\x01", "\x1f", "\x7f", "\x80", "\xff", "é", "日", "\"", `\`, `\x`, " "}
	for n := 0; n <= 20; n++ {
		for pos := 0; pos <= n; pos++ {
			for _, sp := range specials {
				body := strings.Repeat("a", pos) + sp + strings.Repeat("b", n-pos)
				doc := `{"agent_url":"` + body + `"}`
				d, err := Parse([]byte(doc))
				var want struct {
					AgentURL *string `json:"agent_url"`
				}
				wantErr := json.Unmarshal([]byte(doc), &want)
				if (err == nil) != (wantErr == nil) {
					t.Fatalf("Parse(%q) error = %v, encoding/json error = %v", doc, err, wantErr)
				}
				if err != nil {
					continue
				}
				if got := d.AgentURL(); want.AgentURL == nil || got != *want.AgentURL {
					t.Fatalf("AgentURL of %q = %q, want %q", doc, got, *want.AgentURL)
				}
				if got, want := d.view.agentURL.blank, strings.TrimSpace(*want.AgentURL) == ""; got != want {
					t.Fatalf("blank of %q = %v, want %v", doc, got, want)
				}
			}
		}
	}
}
