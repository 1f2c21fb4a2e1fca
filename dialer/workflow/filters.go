package workflow

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file holds what follows the "|" of an expression and the
// "initial_context." prefix: the syntax of API.md 5.1, including the forms
// accepted so that workflows written for the origin system (Dograh) work
// unchanged. Dograh's rule is that the text after "|" is the value used when
// the variable is missing or empty, except for its legacy "fallback" filter;
// ours adds the "default" keyword.

// Filter keywords. Every other text after "|" is a default of its own.
const (
	filterDefault  = "default"
	filterFallback = "fallback"
)

// initialContext is the root Dograh prompts use for the contact's columns:
// "{{ initial_context.first_name }}" reads the column first_name.
const initialContext = "initial_context"

// parseFilter returns the default given by the text after "|" of a
// variable called name (see Var.Name); filter is trimmed and not empty.
// The forms, tried in this order:
//
//   - "fallback": name in title case, as Python's str.title() gives it in
//     the origin system: the first letter of each run of letters upper
//     case, the others lower case, everything else kept
//     ("first_name" → "First_Name", "ACME corp" → "Acme Corp"). Only
//     computed when build is true (validation needs no value).
//   - "fallback:text": text, trimmed ("fallback:" alone gives "").
//   - "default text": text, trimmed, with one pair of matching surrounding
//     quotes removed ("default" alone gives ""). "default" must be followed
//     by white space or the end.
//   - anything else is the default itself, verbatim (colons, quotes and
//     further "|" included): "{{ nickname | dear friend }}" defaults to
//     "dear friend", "{{ t | 10:00 }}" to "10:00".
//
// Keywords are case-sensitive: "Fallback" and "DEFAULT x" are plain text.
func parseFilter(filter, name string, build bool) string {
	if filter == filterFallback {
		if !build {
			return ""
		}
		return titleCase(name)
	}
	if text, ok := strings.CutPrefix(filter, filterFallback+":"); ok {
		return strings.TrimSpace(text)
	}
	word, rest := filter, ""
	if i := strings.IndexFunc(filter, unicode.IsSpace); i >= 0 {
		word, rest = filter[:i], filter[i:]
	}
	if word == filterDefault {
		return unquoteDefault(strings.TrimSpace(rest))
	}
	return filter
}

// unquoteDefault removes one pair of matching surrounding quotes.
func unquoteDefault(s string) string {
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}

// titleCase follows Python's str.title(): a cased character (a letter
// with case) that follows another cased character is lower-cased, every
// other character is title-cased (which leaves digits, "_" and
// punctuation alone). Bytes that are not valid UTF-8 are copied and count
// as uncased.
func titleCase(s string) string {
	var sb strings.Builder
	sb.Grow(len(s))
	prevCased := false
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			sb.WriteByte(s[i])
			i++
			prevCased = false
			continue
		}
		cased := unicode.IsUpper(r) || unicode.IsLower(r) || unicode.IsTitle(r)
		if prevCased {
			sb.WriteRune(unicode.ToLower(r))
		} else {
			sb.WriteRune(unicode.ToTitle(r))
		}
		prevCased = cased
		i += size
	}
	return sb.String()
}

// Name returns the name the variable stands for: Path, or for
// "initial_context.<rest>" the trimmed rest, so "{{ initial_context.name }}"
// is the same variable as "{{ name }}" (API.md 5.1) when rendering, for the
// built-ins and for the time-zone check. Path keeps what was written: such
// a variable is still dotted, so it never counts as missing (see
// RequiredVariables).
func (v Var) Name() string {
	root, rest, ok := strings.Cut(v.Path, ".")
	if ok && strings.TrimSpace(root) == initialContext {
		return strings.TrimSpace(rest)
	}
	return v.Path
}
