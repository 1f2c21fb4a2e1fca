package workflow

import (
	"encoding/json"
	"reflect"
	"testing"
)

// The origin system's (Dograh's) template forms of API.md 5.1: "| text",
// "| fallback", "| fallback:text" and "initial_context.". Its rule: the text
// after "|" is used when the value is missing or empty.

func TestParseFilter(t *testing.T) {
	tests := []struct {
		filter, name, want string
	}{
		{"friend", "nickname", "friend"},
		{"dear friend", "nickname", "dear friend"},
		{"Hi: there", "x", "Hi: there"},
		{"10:00", "t", "10:00"},
		{`"quoted"`, "x", `"quoted"`},
		{"x | y", "a", "x | y"},
		{"fallback", "first_name", "First_Name"},
		{"fallback", "first name", "First Name"},
		{"fallback:dear friend", "x", "dear friend"},
		{"fallback:  spaced  ", "x", "spaced"},
		{"fallback:", "x", ""},
		{"fallback:a:b", "x", "a:b"},
		{"fallback :y", "x", "fallback :y"},
		{"fallback text", "x", "fallback text"},
		{"Fallback", "x", "Fallback"},
		{"fallbacks", "x", "fallbacks"},
		{"default there", "x", "there"},
		{"default", "x", ""},
		{`default "a b"`, "x", "a b"},
		{"default:there", "x", "default:there"},
		{"defaults x", "x", "defaults x"},
		{"DEFAULT x", "x", "DEFAULT x"},
	}
	for _, tt := range tests {
		if got := parseFilter(tt.filter, tt.name, true); got != tt.want {
			t.Fatalf("parseFilter(%q, %q) = %q, want %q", tt.filter, tt.name, got, tt.want)
		}
	}
}

func TestTitleCase(t *testing.T) {
	// Python's str.title() gives these.
	tests := []struct{ in, want string }{
		{"", ""},
		{"first_name", "First_Name"},
		{"FIRST_NAME", "First_Name"},
		{"first name", "First Name"},
		{"o'neil", "O'Neil"},
		{"3rd_party", "3Rd_Party"},
		{"a.b", "A.B"},
		{"éLAN vital", "Élan Vital"},
		{"ǆemal", "ǅemal"},
		{"current_time_Europe/Paris", "Current_Time_Europe/Paris"},
		{"a\xffb", "A\xffB"},
	}
	for _, tt := range tests {
		if got := titleCase(tt.in); got != tt.want {
			t.Fatalf("titleCase(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestVarName(t *testing.T) {
	tests := []struct{ path, name string }{
		{"first_name", "first_name"},
		{"initial_context.first_name", "first_name"},
		{"initial_context . first name", "first name"},
		{"initial_context.a.b", "a.b"},
		{"initial_context", "initial_context"},
		{"Initial_Context.x", "Initial_Context.x"},
		{"gathered_context.x", "gathered_context.x"},
	}
	for _, tt := range tests {
		if got := (Var{Path: tt.path}).Name(); got != tt.name {
			t.Fatalf("Var{%q}.Name() = %q, want %q", tt.path, got, tt.name)
		}
	}
}

func TestParseTemplateDograh(t *testing.T) {
	tests := []struct {
		in   string
		want []Var
	}{
		{"{{ nickname | friend }}", []Var{{Path: "nickname", Default: "friend", HasDefault: true}}},
		{"{{nickname|dear friend}}", []Var{{Path: "nickname", Default: "dear friend", HasDefault: true}}},
		{"{{ first_name | fallback }}", []Var{{Path: "first_name", Default: "First_Name", HasDefault: true}}},
		{"{{ x | fallback:Unknown }}", []Var{{Path: "x", Default: "Unknown", HasDefault: true}}},
		{"{{ initial_context.first_name }}", []Var{{Path: "initial_context.first_name"}}},
		{"{{ initial_context.first_name | fallback }}", []Var{{Path: "initial_context.first_name", Default: "First_Name", HasDefault: true}}},
		{"{{ current_time_America/New_York }} {{ current_weekday }} {{ current_weekday_UTC | ? }}", []Var{
			{Path: "current_time_America/New_York"}, {Path: "current_weekday"},
			{Path: "current_weekday_UTC", Default: "?", HasDefault: true},
		}},
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

func TestRenderDograhDefaults(t *testing.T) {
	missing := map[string]string{}
	empty := map[string]string{"nickname": "", "first_name": "", "x": ""}
	present := map[string]string{"nickname": "Ace", "first_name": "Ada", "x": "X"}
	tests := []struct {
		in                      string
		missing, empty, present string
	}{
		{"{{ nickname | friend }}", "friend", "friend", "Ace"},
		{"{{ nickname | dear friend }}", "dear friend", "dear friend", "Ace"},
		{"{{ nickname | Hi: there }}", "Hi: there", "Hi: there", "Ace"},
		{`{{ nickname | "pal" }}`, `"pal"`, `"pal"`, "Ace"},
		{"{{ nickname | fallback:dear friend }}", "dear friend", "dear friend", "Ace"},
		{"{{ nickname | fallback: }}", "", "", "Ace"},
		{"{{ first_name | fallback }}", "First_Name", "First_Name", "Ada"},
		{"{{ x | Fallback }}", "Fallback", "Fallback", "X"},
		{"{{ nickname | default there }}", "there", "there", "Ace"},
		{"{{ nickname | default }}", "", "", "Ace"},
		{"{{ initial_context.first_name }}", "", "", "Ada"},
		{"{{ initial_context.first_name | friend }}", "friend", "friend", "Ada"},
		{"{{ initial_context.first_name | fallback }}", "First_Name", "First_Name", "Ada"},
		{"{{ initial_context.x | fallback:none }}", "none", "none", "X"},
		{"Hi {{ first_name | there }}, {{ initial_context.nickname | pal }}!", "Hi there, pal!", "Hi there, pal!", "Hi Ada, Ace!"},
	}
	for _, tt := range tests {
		for _, c := range []struct {
			label string
			vars  map[string]string
			want  string
		}{{"missing", missing, tt.missing}, {"empty", empty, tt.empty}, {"present", present, tt.present}} {
			got, err := Render(tt.in, c.vars, Builtins{})
			if err != nil {
				t.Fatalf("Render(%q) error = %v, want nil", tt.in, err)
			}
			if got != c.want {
				t.Fatalf("Render(%q) with the value %s = %q, want %q", tt.in, c.label, got, c.want)
			}
		}
	}
}

func TestRenderInitialContext(t *testing.T) {
	b := Builtins{PhoneNumber: "+14155550100", CampaignID: 7}
	tests := []struct {
		in   string
		vars map[string]string
		want string
	}{
		// A key literally named "initial_context.x" is read first, as before.
		{"{{ initial_context.first_name }}", map[string]string{"initial_context.first_name": "Lit", "first_name": "Ada"}, "Lit"},
		{"{{ initial_context.first_name }}", map[string]string{"initial_context.first_name": "", "first_name": "Ada"}, "Ada"},
		// Built-ins are the same after the prefix.
		{"{{ initial_context.phone_number }} {{ initial_context.campaign_id }}", map[string]string{"phone_number": "csv"}, "+14155550100 7"},
		{"{{ initial_context.a.b }}", map[string]string{"a.b": "dotted"}, "dotted"},
		{"{{ initial_context }}", map[string]string{"initial_context": "whole"}, "whole"},
	}
	for _, tt := range tests {
		got, err := Render(tt.in, tt.vars, b)
		if err != nil {
			t.Fatalf("Render(%q) error = %v, want nil", tt.in, err)
		}
		if got != tt.want {
			t.Fatalf("Render(%q, %v) = %q, want %q", tt.in, tt.vars, got, tt.want)
		}
	}
}

func TestRequiredVariablesDograh(t *testing.T) {
	tests := []struct {
		name   string
		prompt string
		want   []string
	}{
		{"defaults of every form", "{{ a | friend }} {{ b | fallback }} {{ c | fallback:x }} {{ d | default y }}", nil},
		{"initial_context never counts", "{{ initial_context.first_name }} {{ initial_context.last_name | fallback }}", nil},
		{"initial_context beside the plain name", "{{ initial_context.first_name }} {{ first_name }}", []string{"first_name"}},
		{"time built-ins", "{{ current_time }} {{ current_weekday }} {{ current_time_America/New_York }} {{ current_weekday_Asia/Tokyo }} {{ initial_context.current_time_UTC }}", nil},
		{"plain names", "{{ nickname }} {{ nickname | pal }} {{ current_timezone }}", []string{"current_timezone", "nickname"}},
		{"malformed zone skips the field", "{{ current_time_Mars/Olympus }} {{ orphan }}", nil},
	}
	for _, tt := range tests {
		d := MustParse(`{"nodes":[{"id":"s","type":"startCall","data":{"name":"s","prompt":` + quote(tt.prompt) + `}}]}`)
		if got := RequiredVariables(d); !reflect.DeepEqual(got, tt.want) {
			t.Fatalf("RequiredVariables(%s) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// quote returns s as a JSON string literal.
func quote(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}
