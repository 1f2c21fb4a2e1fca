package workflow

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

func TestParseTemplate(t *testing.T) {
	tests := []struct {
		in   string
		want []Var
	}{
		{"", nil},
		{"no variables at all", nil},
		{"single { and } and }} are literal", nil},
		{"{{name}}", []Var{{Path: "name"}}},
		{"Hi {{  first_name  }}!", []Var{{Path: "first_name"}}},
		{"{{ first name }}", []Var{{Path: "first name"}}},
		{"{{ a.b.c }}", []Var{{Path: "a.b.c"}}},
		{"{{ name | default there }}", []Var{{Path: "name", Default: "there", HasDefault: true}}},
		{"{{ name|default   dear  friend }}", []Var{{Path: "name", Default: "dear  friend", HasDefault: true}}},
		{"{{ name | default }}", []Var{{Path: "name", HasDefault: true}}},
		{`{{ name | default " " }}`, []Var{{Path: "name", Default: " ", HasDefault: true}}},
		{`{{ name | default 'x' }}`, []Var{{Path: "name", Default: "x", HasDefault: true}}},
		{`{{ name | default "x' }}`, []Var{{Path: "name", Default: `"x'`, HasDefault: true}}},
		{"{{ a | default x | y }}", []Var{{Path: "a", Default: "x | y", HasDefault: true}}},
		{"{{a}}{{b}} {{a}}", []Var{{Path: "a"}, {Path: "b"}, {Path: "a"}}},
		{"{{ a }}}", []Var{{Path: "a"}}},
		{"{{\n\tname\n}}", []Var{{Path: "name"}}},
		{"{{ a | default\u00a0x }}", []Var{{Path: "a", Default: "x", HasDefault: true}}},
		// Any other text after "|" is the default (the origin system's rule);
		// these were "unknown filter" errors before.
		{"{{ a | upper }}", []Var{{Path: "a", Default: "upper", HasDefault: true}}},
		{"{{ a | defaults x }}", []Var{{Path: "a", Default: "defaults x", HasDefault: true}}},
	}
	for _, tt := range tests {
		tmpl, err := ParseTemplate(tt.in)
		if err != nil {
			t.Fatalf("ParseTemplate(%q) error = %v, want nil", tt.in, err)
		}
		if got := tmpl.Vars(); !reflect.DeepEqual(got, tt.want) {
			t.Fatalf("ParseTemplate(%q).Vars() = %#v, want %#v", tt.in, got, tt.want)
		}
	}
}

func TestParseTemplateMalformed(t *testing.T) {
	tests := []struct {
		in     string
		reason string
		offset int
		pos    int
	}{
		{"{{", "unclosed {{", 0, 1},
		{"Hi {{ name", "unclosed {{", 3, 4},
		{"Hi {{ name }", "unclosed {{", 3, 4},
		{"{{ a {{ b }}", "unclosed {{", 0, 1},
		{"ok {{a}} then {{", "unclosed {{", 14, 15},
		{"é{{", "unclosed {{", 2, 2},
		{"{{}}", "empty {{ }}", 0, 1},
		{"x {{   }}", "empty {{ }}", 2, 3},
		{"{{ | default x }}", "missing variable name", 0, 1},
		{"{{ .a }}", `empty segment in variable path ".a"`, 0, 1},
		{"{{ a. }}", `empty segment in variable path "a."`, 0, 1},
		{"{{ a. .b }}", `empty segment in variable path "a. .b"`, 0, 1},
		{"{{{ a }}}", `invalid character in variable name "{ a"`, 0, 1},
		{"{{ a } }}", `invalid character in variable name "a }"`, 0, 1},
		{"{{ a | }}", "empty filter after |", 0, 1},
		{"{{ current_time_Mars/Olympus }}", `unknown time zone "Mars/Olympus" in "current_time_Mars/Olympus"`, 0, 1},
	}
	for _, tt := range tests {
		tmpl, err := ParseTemplate(tt.in)
		var te *TemplateError
		if !errors.As(err, &te) || tmpl != nil {
			t.Fatalf("ParseTemplate(%q) = %v, %v; want nil, *TemplateError", tt.in, tmpl, err)
		}
		if !errors.Is(err, ErrMalformedTemplate) {
			t.Fatalf("ParseTemplate(%q) error %v does not wrap ErrMalformedTemplate", tt.in, err)
		}
		if te.Reason != tt.reason || te.Offset != tt.offset || te.Pos != tt.pos {
			t.Fatalf("ParseTemplate(%q) error = %q at %d/%d, want %q at %d/%d", tt.in, te.Reason, te.Offset, te.Pos, tt.reason, tt.offset, tt.pos)
		}
	}
}

func TestRender(t *testing.T) {
	now := time.Date(2026, 11, 21, 19, 4, 35, 0, time.FixedZone("X", -5*3600))
	b := Builtins{PhoneNumber: "+14155550100", CallerNumber: "+14155550199", CampaignID: 7, CurrentTime: now}
	ctx := map[string]string{
		"first_name":   "Ada",
		"empty":        "",
		"first name":   "Grace",
		"a.b":          "dotted",
		"phone_number": "from csv",
	}
	tests := []struct {
		in   string
		ctx  map[string]string
		b    Builtins
		want string
	}{
		{"plain text", ctx, b, "plain text"},
		{"Hi {{first_name}}!", ctx, b, "Hi Ada!"},
		{"Hi {{ first name }}!", ctx, b, "Hi Grace!"},
		{"Hi {{ missing }}!", ctx, b, "Hi !"},
		{"Hi {{ missing | default there }}!", ctx, b, "Hi there!"},
		{"Hi {{ empty | default there }}!", ctx, b, "Hi there!"},
		{"Hi {{ first_name | default there }}!", ctx, b, "Hi Ada!"},
		{"{{ a.b }} {{ a.c | default none }} {{ x.y }}", ctx, b, "dotted none "},
		{"{{phone_number}} {{caller_number}} {{campaign_id}} {{current_time}}", ctx, b,
			"+14155550100 +14155550199 7 2026-11-21T19:04:35-05:00"},
		{"{{ campaign_id | default ? }} {{ current_time | default now }} {{ phone_number }}", ctx, Builtins{}, "? now "},
		{"{{first_name}}", nil, Builtins{}, ""},
		{"{{ a }}}} {x}", map[string]string{"a": "1"}, Builtins{}, "1}} {x}"},
		{"{{ a }}", map[string]string{"a": "{{ b }}", "b": "no"}, Builtins{}, "{{ b }}"},
	}
	for _, tt := range tests {
		got, err := Render(tt.in, tt.ctx, tt.b)
		if err != nil {
			t.Fatalf("Render(%q) error = %v, want nil", tt.in, err)
		}
		if got != tt.want {
			t.Fatalf("Render(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if _, err := Render("Hi {{", ctx, b); !errors.Is(err, ErrMalformedTemplate) {
		t.Fatalf("Render(malformed) error = %v, want ErrMalformedTemplate", err)
	}
	var nilTmpl *Template
	if got := nilTmpl.Render(ctx, b); got != "" {
		t.Fatalf("nil Template Render = %q, want empty", got)
	}
}

func TestRequiredVariables(t *testing.T) {
	tests := []struct {
		name string
		def  string
		want []string
	}{
		{"none", def(basic, basicEdges...), nil},
		{"null definition", `null`, nil},
		{"prompts and start greeting", `{"nodes":[` +
			`{"id":"s","type":"startCall","data":{"name":"{{ in_name }}","prompt":"Call {{ first_name }} about {{ product }}","greeting":"Hi {{first_name}}, {{ title | default there }} {{ city }}"}},` +
			`{"id":"a","type":"agentNode","data":{"name":"n","prompt":"{{ product }} {{ order.id }} {{ phone_number }} {{ current_time }}","greeting":"{{ agent_greeting }}"}},` +
			`{"id":"e","type":"endCall","data":{"name":"n","prompt":"{{ zip | default none }} {{ zip }} {{ broken"}},` +
			`{"id":"g","type":"globalNode","data":{"name":"n","prompt":"{{ \taccount }}"}},` +
			`"not a node",{"id":1,"type":7,"data":{"prompt":"{{ orphan }}"}}` +
			`]}`, []string{"account", "city", "first_name", "orphan", "product"}},
		{"used with and without default", `{"nodes":[{"type":"agentNode","data":{"prompt":"{{ x | default 1 }} {{x}}"}}]}`, []string{"x"}},
	}
	for _, tt := range tests {
		got := RequiredVariables(MustParse(tt.def))
		if !reflect.DeepEqual(got, tt.want) {
			t.Fatalf("RequiredVariables(%s) = %q, want %q", tt.name, got, tt.want)
		}
	}
	if got := RequiredVariables(nil); got != nil {
		t.Fatalf("RequiredVariables(nil) = %q, want nil", got)
	}
}

func TestVarRoot(t *testing.T) {
	tests := []struct {
		path, root string
		dotted     bool
	}{
		{"a", "a", false},
		{"a.b", "a", true},
		{"first name.x", "first name", true},
	}
	for _, tt := range tests {
		v := Var{Path: tt.path}
		if got := v.Root(); got != tt.root {
			t.Fatalf("Var{%q}.Root() = %q, want %q", tt.path, got, tt.root)
		}
		if got := v.Dotted(); got != tt.dotted {
			t.Fatalf("Var{%q}.Dotted() = %v, want %v", tt.path, got, tt.dotted)
		}
	}
}

func TestIsBuiltin(t *testing.T) {
	for _, name := range []string{"phone_number", "caller_number", "campaign_id", "current_time"} {
		if !IsBuiltin(name) {
			t.Fatalf("IsBuiltin(%q) = false, want true", name)
		}
	}
	for _, name := range []string{"", "Phone_Number", "first_name", "phone_number.x"} {
		if IsBuiltin(name) {
			t.Fatalf("IsBuiltin(%q) = true, want false", name)
		}
	}
}
