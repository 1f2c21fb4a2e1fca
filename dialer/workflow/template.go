package workflow

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// ErrMalformedTemplate is wrapped by every *TemplateError.
var ErrMalformedTemplate = errors.New("malformed template")

// TemplateError describes why a template does not parse. Offset is the byte
// offset of the "{{" that starts the faulty expression; Pos is the same place
// as a 1-based character (rune) position, for people.
type TemplateError struct {
	Offset int
	Pos    int
	Reason string
}

// Error implements error.
func (e *TemplateError) Error() string {
	return fmt.Sprintf("malformed template: %s (at character %d)", e.Reason, e.Pos)
}

// Unwrap returns ErrMalformedTemplate so errors.Is works.
func (e *TemplateError) Unwrap() error { return ErrMalformedTemplate }

// Var is one "{{ }}" expression of a template.
type Var struct {
	// Path is the trimmed variable path, e.g. "first_name" or "a.b".
	Path string
	// Default is the text used when the variable is missing or empty, as
	// the text after "|" gives it (see ParseTemplate).
	Default string
	// HasDefault reports whether the expression has a "|" part, so a
	// default (possibly "").
	HasDefault bool
}

// Root returns the first segment of the path: the CSV column a dotted path
// would come from ("a" for "a.b"), trimmed.
func (v Var) Root() string {
	root, _, _ := strings.Cut(v.Path, ".")
	return strings.TrimSpace(root)
}

// Dotted reports whether the path has more than one segment.
func (v Var) Dotted() bool { return strings.Contains(v.Path, ".") }

// part is a literal run of text or, when isVar, one expression.
type part struct {
	text  string
	v     Var
	isVar bool
}

// Template is a parsed template. The zero value renders as "". A Template is
// immutable and safe for concurrent use.
type Template struct {
	parts []part
	// zone is the location of the template's first zoned built-in
	// (current_time_<zone>, current_weekday_<zone>), nil when it has none:
	// plain current_time and current_weekday are given in it, as in the
	// origin system.
	zone *time.Location
}

// ParseTemplate parses s. A malformed template returns a *TemplateError
// (wrapping ErrMalformedTemplate) for its first problem; ParseTemplate never
// panics, whatever s holds.
//
// Syntax (API.md 5.1), as implemented here:
//
//   - Text outside "{{" ... "}}" is literal. A lone "}}" or single braces are
//     literal too.
//   - "{{ path }}" inserts a variable. White space around the path is ignored.
//     path is one or more segments separated by "."; a segment is any text
//     without "{", "}" or "|" and must not be blank ("a..b", ".a" are errors).
//     So "{{ first name }}" names the CSV column "first name".
//   - "{{ path | text }}": the text after the first "|", trimmed, is used
//     when the variable is missing or empty (see parseFilter for the
//     keywords): "| default text" (text trimmed, one pair of matching
//     surrounding quotes removed, so "{{ x | default ' ' }}" defaults to a
//     space; "| default" alone to ""), "| fallback:text" (text trimmed),
//     "| fallback" (the variable's name in title case, "first_name" →
//     "First_Name" as in the origin system), and any other text, which is
//     the default verbatim ("{{ nickname | friend }}").
//   - "{{ initial_context.name }}" is the variable name (see Var.Name).
//   - current_time_<zone> and current_weekday_<zone> (also after
//     "initial_context.") must name a zone time.LoadLocation knows, e.g.
//     "current_time_America/New_York".
//   - Malformed: "{{" with no "}}" before the end or before the next "{{";
//     "{{ }}" with nothing inside; a missing path ("{{ | default x }}"); a
//     blank segment; "{" or "}" inside the path; nothing after "|"; an
//     unknown zone in a zoned built-in.
func ParseTemplate(s string) (*Template, error) {
	t := &Template{}
	if err := parseTemplate(s, t); err != nil {
		return nil, err
	}
	return t, nil
}

// checkTemplate reports the first problem of s like ParseTemplate, without
// building a Template (validation of large definitions stays allocation
// free).
func checkTemplate(s string) *TemplateError {
	return parseTemplate(s, nil)
}

// parseTemplate scans s, appending its parts to t when t is not nil.
func parseTemplate(s string, t *Template) *TemplateError {
	i := 0 // start of the text not yet consumed
	for {
		open := strings.Index(s[i:], "{{")
		if open < 0 {
			t.addText(s[i:])
			return nil
		}
		open += i
		t.addText(s[i:open])
		body := s[open+2:]
		end := strings.Index(body, "}}")
		if end < 0 || strings.Contains(body[:end], "{{") {
			return templateErr(s, open, "unclosed {{")
		}
		v, loc, reason := parseExpr(body[:end], t != nil)
		if reason != "" {
			return templateErr(s, open, reason)
		}
		if t != nil {
			t.parts = append(t.parts, part{v: v, isVar: true})
			if t.zone == nil {
				t.zone = loc
			}
		}
		i = open + 2 + end + 2
	}
}

// addText appends a literal run, skipping empty ones.
func (t *Template) addText(s string) {
	if t != nil && s != "" {
		t.parts = append(t.parts, part{text: s})
	}
}

// parseExpr parses the inside of one "{{ }}". It returns a non-empty reason
// when the expression is malformed, and the location of a zoned built-in.
// When build is false the result is only checked: a "| fallback" default is
// not computed.
func parseExpr(inner string, build bool) (Var, *time.Location, string) {
	if isBlank(inner) {
		return Var{}, nil, "empty {{ }}"
	}
	path, filter, hasFilter := strings.Cut(inner, "|")
	path = strings.TrimSpace(path)
	if path == "" {
		return Var{}, nil, "missing variable name"
	}
	if strings.ContainsAny(path, "{}") {
		return Var{}, nil, fmt.Sprintf("invalid character in variable name %q", path)
	}
	for rest := path; ; {
		seg, after, more := strings.Cut(rest, ".")
		if isBlank(seg) {
			return Var{}, nil, fmt.Sprintf("empty segment in variable path %q", path)
		}
		if !more {
			break
		}
		rest = after
	}
	v := Var{Path: path}
	name := v.Name()
	loc, reason := checkZoned(name)
	if reason != "" {
		return Var{}, nil, reason
	}
	if !hasFilter {
		return v, loc, ""
	}
	filter = strings.TrimSpace(filter)
	if filter == "" {
		return Var{}, nil, "empty filter after |"
	}
	v.HasDefault = true
	v.Default = parseFilter(filter, name, build)
	return v, loc, ""
}

// Vars returns the template's expressions in order of appearance, repeats
// included.
func (t *Template) Vars() []Var {
	if t == nil {
		return nil
	}
	var out []Var
	for _, p := range t.parts {
		if p.isVar {
			out = append(out, p.v)
		}
	}
	return out
}

// Render fills the template in. A built-in name always takes its value from
// b (a context key of the same name is ignored); any other path, dotted or
// not, is looked up as one key of vars (a contact's initial_context: CSV
// column → cell), so "{{ a.b }}" reads a column literally named "a.b".
// "{{ initial_context.name }}" reads the key "initial_context.name" when vars
// has it non-empty (what it read before the prefix had a meaning), else
// stands for "{{ name }}", built-ins included. A missing or empty value gives the
// default when there is one, else "". Rendering never fails.
func (t *Template) Render(vars map[string]string, b Builtins) string {
	if t == nil {
		return ""
	}
	var sb strings.Builder
	for _, p := range t.parts {
		if !p.isVar {
			sb.WriteString(p.text)
			continue
		}
		sb.WriteString(t.value(p.v, vars, b))
	}
	return sb.String()
}

// value returns the text v renders as.
func (t *Template) value(v Var, vars map[string]string, b Builtins) string {
	var val string
	name := v.Name()
	if name != v.Path {
		val = vars[v.Path]
	}
	if val == "" {
		var ok bool
		if val, ok = b.value(name, t.zone); !ok {
			val = vars[name]
		}
	}
	if val == "" {
		val = v.Default
	}
	return val
}

// Render parses text and renders it (see Template.Render). The error is the
// *TemplateError of a malformed text.
func Render(text string, vars map[string]string, b Builtins) (string, error) {
	t, err := ParseTemplate(text)
	if err != nil {
		return "", fmt.Errorf("render template: %w", err)
	}
	return t.Render(vars, b), nil
}

// RequiredVariables lists the variables the contacts CSV must provide as
// columns for def: every variable used without a default (no "|" part) in a
// text field (see Validate: data.prompt of every node, data.greeting of
// startCall nodes), except built-ins (IsBuiltin, the zoned ones included)
// and dotted paths (API.md 5.1: "{{ a.b }}" paths never count as missing).
// "{{ initial_context.name }}" is a dotted path and does not count either:
// API.md 5.1 lists it among the origin system's forms of which "none counts
// as missing", and the origin system never requires a dotted path; it reads
// the column name when the file has one. A variable used both with and
// without a default is required. Malformed templates are skipped (Validate reports them). The
// result is sorted and has no duplicates; nil when nothing is required.
func RequiredVariables(def *Definition) []string {
	seen := map[string]bool{}
	var out []string
	var t Template // reused: its parts slice keeps its capacity
	nodes := def.Nodes()
	for i := range nodes {
		fields, count := textFields(&nodes[i])
		for _, text := range fields[:count] {
			t.parts, t.zone = t.parts[:0], nil
			if parseTemplate(text.value, &t) != nil {
				continue
			}
			for _, p := range t.parts {
				if !p.isVar {
					continue
				}
				v := p.v
				if v.HasDefault || v.Dotted() || IsBuiltin(v.Path) || seen[v.Path] {
					continue
				}
				seen[v.Path] = true
				out = append(out, v.Path)
			}
		}
	}
	slices.Sort(out)
	return out
}

// textField is one templated string of a node and the field it came from.
type textField struct {
	name  string // "data.prompt" or "data.greeting"
	value string
}

// textFields returns the templated strings of n: data.prompt of any node
// and data.greeting of a startCall node, when they are strings. Only the
// first count entries are set.
func textFields(n *Node) (fields [2]textField, count int) {
	if n.promptKind == kindString {
		fields[count] = textField{name: fieldPrompt, value: n.Prompt}
		count++
	}
	if n.isType(TypeStartCall) && n.greetingKind == kindString {
		fields[count] = textField{name: fieldGreeting, value: n.Greeting}
		count++
	}
	return fields, count
}

// templateErr builds the error for the expression starting at byte off of s.
func templateErr(s string, off int, reason string) *TemplateError {
	return &TemplateError{Offset: off, Pos: utf8.RuneCountInString(s[:off]) + 1, Reason: reason}
}

// isBlank reports whether s has only white space (Unicode white space, as
// strings.TrimSpace). The common case, a string starting with a visible
// ASCII character, is answered from its first byte.
func isBlank(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= utf8.RuneSelf:
			return strings.TrimSpace(s[i:]) == ""
		case c != ' ' && c != '\t' && c != '\n' && c != '\v' && c != '\f' && c != '\r':
			return false
		}
	}
	return true
}
