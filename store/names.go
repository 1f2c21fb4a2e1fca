package store

import "unicode"

// The rule for names and labels (organization and API key names here; the
// names and labels of the HTTP API in web): which characters they refuse.
// It lives in store, which imports neither web nor dialer, so that both
// layers apply the same rule.

// NameRefuses reports whether a name or label must not hold r: a control
// character (Unicode category Cc: U+0000–U+001F, U+007F–U+009F), a line or
// paragraph separator (U+2028, U+2029), a bidirectional formatting
// character (Unicode's Bidi_Control: U+061C, U+200E, U+200F,
// U+202A–U+202E, U+2066–U+2069) or an invisible character that separates
// nothing visibly (U+200B zero width space, U+2060 word joiner, U+FEFF zero
// width no-break space). Such characters hide text, break lines, or make a
// name read differently on screen (in the console, a CSV file, a provider's
// console) than it is.
//
// The zero width non-joiner and joiner (U+200C, U+200D) are allowed: Persian
// and Indic scripts need them to be written correctly, and emoji sequences
// (👩‍💻) are made with the joiner. They cannot reorder text.
func NameRefuses(r rune) bool {
	switch r {
	case '\u2028', '\u2029', '\u200B', '\u2060', '\uFEFF':
		return true
	}
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)
}

// RefusedNameChar returns the character index (not the byte offset) and
// value of the first character of s that NameRefuses; found is false when
// s has none.
func RefusedNameChar(s string) (pos int, r rune, found bool) {
	i := 0
	for _, c := range s {
		if NameRefuses(c) {
			return i, c, true
		}
		i++
	}
	return 0, 0, false
}
