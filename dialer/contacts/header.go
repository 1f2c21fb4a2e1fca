package contacts

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// header is the checked first row.
type header struct {
	names    []string // trimmed names, "" for ignored columns
	phone    int      // index of the phone_number column
	timezone int      // index of the timezone column, -1 if none
	required []int    // indexes of the required variables' columns
}

// parseHeader checks the first row. It returns the problems found; fatal
// reports whether reading must stop (the rows cannot be interpreted).
func parseHeader(rec []string, requiredVars []string) (h header, probs []Problem, fatal bool) {
	h = header{phone: -1, timezone: -1}
	for i, cell := range rec {
		if msg := cellEncodingProblem(cell); msg != "" {
			return h, []Problem{{Row: 1, Type: TypeCSVInvalid, Msg: fmt.Sprintf("the header %s (column %d)", msg, i+1)}}, true
		}
	}
	h.names = make([]string, len(rec))
	seen := make(map[string]int, len(rec))
	for i, cell := range rec {
		name := strings.TrimSpace(cell)
		h.names[i] = name
		if name == "" {
			continue
		}
		if j, dup := seen[name]; dup {
			return h, []Problem{{
				Row: 1, Type: TypeCSVInvalid, Column: name, Input: clip(name),
				Msg: fmt.Sprintf("column name %q appears twice in the header (columns %d and %d)", clip(name), j+1, i+1),
			}}, true
		}
		seen[name] = i
		for _, special := range []struct {
			name string
			idx  *int
		}{{PhoneColumn, &h.phone}, {TimezoneColumn, &h.timezone}} {
			if !strings.EqualFold(name, special.name) {
				continue
			}
			if *special.idx >= 0 {
				return h, []Problem{{
					Row: 1, Type: TypeCSVInvalid, Column: name, Input: clip(name),
					Msg: fmt.Sprintf("the header has more than one %s column (columns %d and %d)", special.name, *special.idx+1, i+1),
				}}, true
			}
			*special.idx = i
		}
	}
	if h.phone < 0 {
		return h, []Problem{{
			Type: TypeCSVNoPhoneColumn, Input: clipAll(h.names),
			Msg: "the header has no phone_number column",
		}}, true
	}
	var done []string
	for _, v := range requiredVars {
		if slices.Contains(done, v) {
			continue
		}
		done = append(done, v)
		i, ok := seen[v]
		switch {
		case !ok:
			probs = append(probs, Problem{
				Type: TypeTemplateVariableMissing, Column: v, Input: clip(v),
				Msg: fmt.Sprintf("the workflow uses {{%s}} but the file has no %s column", clip(v), clip(v)),
			})
		case i == h.phone:
			// Covered by phone_missing.
		default:
			h.required = append(h.required, i)
		}
	}
	return h, probs, false
}

// cellEncodingProblem describes why cell cannot be stored as text, or returns
// "".
func cellEncodingProblem(cell string) string {
	switch {
	case !utf8.ValidString(cell):
		return "is not valid UTF-8"
	case strings.IndexByte(cell, 0) >= 0:
		return "contains a NUL byte"
	}
	return ""
}

// clip shortens s to at most maxInputEcho bytes on a rune boundary, marking
// the cut with "…".
func clip(s string) string {
	if len(s) <= maxInputEcho {
		return s
	}
	cut := maxInputEcho
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// clipAll clips every name and bounds the list itself.
func clipAll(names []string) []string {
	const maxNames = 50
	out := make([]string, 0, min(len(names), maxNames))
	for _, n := range names[:min(len(names), maxNames)] {
		out = append(out, clip(n))
	}
	return out
}
