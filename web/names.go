package web

import (
	"fmt"

	"github.com/outdial/outdial/store"
)

// Name reads a name or label field like String, and also refuses a value
// holding a character store.NameRefuses: a control character (Unicode
// category Cc: U+0000–U+001F and U+007F–U+009F, so NUL, tab and line breaks
// too), a line or paragraph separator, a bidirectional formatting character
// (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069) or an invisible
// one (U+200B, U+2060, U+FEFF): 422 control_character, msg "Value error,
// <field> must not contain control or invisible formatting characters", ctx
// {"character": "U+0000", "position": <0-based character index>}. Names
// are shown in lists, logs, CSV files and provider consoles, where such
// characters hide text, break lines or make a name read differently than
// it is. The rule is store's, which applies it to organization and API key
// names too.
func (f fields) Name(name string, required, nullable bool, minLen, maxLen int) (val string, present, ok bool) {
	val, present, ok = f.String(name, required, nullable, minLen, maxLen)
	if !present || !ok {
		return val, present, ok
	}
	if pos, r, found := store.RefusedNameChar(val); found {
		f.p.Add(at(f.loc, name), "control_character", "Value error, "+name+" must not contain control or invisible formatting characters", val,
			map[string]any{"character": fmt.Sprintf("U+%04X", r), "position": pos})
		return val, present, false
	}
	return val, present, true
}
