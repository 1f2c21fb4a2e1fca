package workflow

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// bigDefinition builds a valid definition with nodes nodes and edges edges
// (edges ≥ nodes-1): a start node with a greeting, a chain of agent nodes
// with ~120-character prompts that use templates, an end node, and extra
// forward edges with distinct labels. 10,000 nodes and 20,000 edges make
// about 4.9 MB of JSON.
func bigDefinition(nodes, edges int) []byte {
	var sb strings.Builder
	sb.WriteString(`{"agent_url":"wss://agent.example/ws","nodes":[`)
	for i := range nodes {
		typ := TypeAgentNode
		switch i {
		case 0:
			typ = TypeStartCall
		case nodes - 1:
			typ = TypeEndCall
		}
		if i > 0 {
			sb.WriteByte(',')
		}
		greeting := ""
		if typ == TypeStartCall {
			greeting = `,"greeting":"Hello {{first_name}}, this is Acme calling."`
		}
		fmt.Fprintf(&sb, `{"id":"n%d","type":%q,"position":{"x":%d,"y":%d},"data":{"name":"Step %d",`+
			`"prompt":"You are talking to {{ first_name | default the customer }} about order {{ order_id }}. Step %d of the script, be brief."%s}}`,
			i, typ, i*10, i*20, i, i, greeting)
	}
	sb.WriteString(`],"edges":[`)
	for i := range edges {
		src, tgt := i, i+1
		if i >= nodes-1 {
			// Extra edges: from an agent node to a later node.
			src = 1 + (i*7)%(nodes-2)
			tgt = src + 1 + (i*13)%(nodes-1-src)
		}
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"id":"e%d","source":"n%d","target":"n%d","data":{"label":"Go to %d via %d","condition":"The callee agrees to step %d"}}`,
			i, src, tgt, tgt, i, tgt)
	}
	sb.WriteString(`]}`)
	return []byte(sb.String())
}

func TestBigDefinitionIsValid(t *testing.T) {
	raw := bigDefinition(10_000, 20_000)
	d, err := Parse(raw)
	if err != nil {
		t.Fatalf("Parse error = %v", err)
	}
	if errs := Validate(d); len(errs) != 0 {
		t.Fatalf("Validate = %d errors, first %+v; want none", len(errs), errs[0])
	}
	if got, want := len(d.Nodes()), 10_000; got != want {
		t.Fatalf("len(Nodes) = %d, want %d", got, want)
	}
	if got, want := len(d.Edges()), 20_000; got != want {
		t.Fatalf("len(Edges) = %d, want %d", got, want)
	}
}

func TestLongChainAndDeepNesting(t *testing.T) {
	// A long chain where every node is reachable only through all earlier
	// ones, and a document nested as deep as encoding/json allows.
	raw := bigDefinition(50_000, 49_999)
	if errs := Validate(MustParse(string(raw))); len(errs) != 0 {
		t.Fatalf("Validate(chain) = %d errors, want none", len(errs))
	}
	deep := `{"nodes":[` + strings.Repeat("[", 9_990) + strings.Repeat("]", 9_990) + `]}`
	want := []Error{
		wfErr("", "Workflow has no startCall node"),
		nodeErr("", "", "Node at index 0 is not a JSON object"),
	}
	if got := Validate(MustParse(deep)); len(got) != 2 || got[1].Message != want[1].Message {
		t.Fatalf("Validate(deep) = %s, want %s", errsString(got), errsString(want))
	}
}

// BenchmarkValidate10k measures the whole /validate path for a 10,000-node,
// 20,000-edge definition: Parse (one validating pass) and Validate.
func BenchmarkValidate10k(b *testing.B) {
	raw := bigDefinition(10_000, 20_000)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		d, err := Parse(raw)
		if err != nil {
			b.Fatal(err)
		}
		if errs := Validate(d); len(errs) != 0 {
			b.Fatalf("Validate = %d errors", len(errs))
		}
	}
}

// BenchmarkValidateOnly10k measures Validate alone on an already parsed
// 10,000-node, 20,000-edge definition.
func BenchmarkValidateOnly10k(b *testing.B) {
	d := MustParse(string(bigDefinition(10_000, 20_000)))
	b.ReportAllocs()
	for b.Loop() {
		if errs := Validate(d); len(errs) != 0 {
			b.Fatalf("Validate = %d errors", len(errs))
		}
	}
}

// BenchmarkRequiredVariables10k measures the campaign CSV check's variable
// listing on the same definition.
func BenchmarkRequiredVariables10k(b *testing.B) {
	d := MustParse(string(bigDefinition(10_000, 20_000)))
	for b.Loop() {
		if got := RequiredVariables(d); len(got) != 2 {
			b.Fatalf("RequiredVariables = %q", got)
		}
	}
}

// BenchmarkJSONValid10k is a yardstick, not a test of this package: the
// cost of json.Valid alone on the same document, so the figures above can
// be judged against the machine they ran on.
func BenchmarkJSONValid10k(b *testing.B) {
	raw := bigDefinition(10_000, 20_000)
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if !json.Valid(raw) {
			b.Fatal("invalid")
		}
	}
}
