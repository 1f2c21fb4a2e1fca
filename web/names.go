package web

import (
	"fmt"
	"unicode"
)

// Name reads a name or label field like String, and also refuses a value
// holding a control character (Unicode category Cc: U+0000–U+001F and
// U+007F–U+009F, so NUL, tab and line breaks too): 422 control_character,
// msg "Value error, <field> must not contain control characters", ctx
// {"character": "U+0000", "position": <0-based character index>}.
// Names are shown in lists, logs, CSV files and provider consoles, where
// such characters hide text or break lines.
func (f fields) Name(name string, required, nullable bool, minLen, maxLen int) (val string, present, ok bool) {
	val, present, ok = f.String(name, required, nullable, minLen, maxLen)
	if !present || !ok {
		return val, present, ok
	}
	if pos, r, found := controlChar(val); found {
		f.p.Add(at(f.loc, name), "control_character", "Value error, "+name+" must not contain control characters", val,
			map[string]any{"character": fmt.Sprintf("U+%04X", r), "position": pos})
		return val, present, false
	}
	return val, present, true
}

// controlChar returns the character index and value of the first control
// character of s.
func controlChar(s string) (pos int, r rune, found bool) {
	i := 0
	for _, c := range s {
		if unicode.IsControl(c) {
			return i, c, true
		}
		i++
	}
	return 0, 0, false
}
