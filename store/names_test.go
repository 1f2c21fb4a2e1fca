package store_test

import (
	"testing"

	"github.com/outdial/outdial/store"
)

// TestNameRefuses: the name rule over the code points it refuses and the
// neighbours it keeps.
func TestNameRefuses(t *testing.T) {
	refused := []struct {
		r    rune
		what string
	}{
		{0x00, "NUL"}, {0x09, "tab"}, {0x0A, "line feed"}, {0x1B, "escape"}, {0x1F, "unit separator"},
		{0x7F, "delete"}, {0x85, "next line"}, {0x9F, "application program command"},
		{0x061C, "arabic letter mark"},
		{0x200B, "zero width space"},
		{0x200E, "left-to-right mark"}, {0x200F, "right-to-left mark"},
		{0x202A, "left-to-right embedding"}, {0x202B, "right-to-left embedding"},
		{0x202C, "pop directional formatting"}, {0x202D, "left-to-right override"},
		{0x202E, "right-to-left override"},
		{0x2028, "line separator"}, {0x2029, "paragraph separator"},
		{0x2060, "word joiner"},
		{0x2066, "left-to-right isolate"}, {0x2067, "right-to-left isolate"},
		{0x2068, "first strong isolate"}, {0x2069, "pop directional isolate"},
		{0xFEFF, "zero width no-break space (BOM)"},
	}
	for _, c := range refused {
		if !store.NameRefuses(c.r) {
			t.Errorf("NameRefuses(%U %s) = false, want true", c.r, c.what)
		}
	}
	kept := []struct {
		r    rune
		what string
	}{
		{' ', "space"}, {'a', "letter"}, {'é', "accented letter"}, {0xA0, "no-break space"},
		{0x061B, "arabic semicolon"}, {0x0627, "arabic alef"}, {0x05D0, "hebrew alef"},
		{0x200A, "hair space"}, {0x200C, "zero width non-joiner (Persian, Indic scripts)"},
		{0x200D, "zero width joiner (emoji sequences)"}, {0x2010, "hyphen"},
		{0x2027, "hyphenation point"}, {0x202F, "narrow no-break space"},
		{0x2065, "unassigned"},
		{0x6771, "CJK"}, {0x1F511, "emoji"}, {0xFEFE, "below BOM"}, {0xFF01, "fullwidth !"},
	}
	for _, c := range kept {
		if store.NameRefuses(c.r) {
			t.Errorf("NameRefuses(%U %s) = true, want false", c.r, c.what)
		}
	}
}

// TestRefusedNameChar: the first refused character, by character index.
func TestRefusedNameChar(t *testing.T) {
	for _, tt := range []struct {
		s     string
		pos   int
		r     rune
		found bool
	}{
		{"", 0, 0, false},
		{"Relance é 東京 👩‍💻", 0, 0, false},
		{"invoice\u202Efdp.exe", 7, 0x202E, true},
		{"é\u2066x\u2069", 1, 0x2066, true},
		{"\uFEFFname", 0, 0xFEFF, true},
		{"東京\u200B", 2, 0x200B, true},
		{"a\x00b\u202E", 1, 0, true},
	} {
		pos, r, found := store.RefusedNameChar(tt.s)
		if pos != tt.pos || r != tt.r || found != tt.found {
			t.Errorf("RefusedNameChar(%q) = %d, %U, %v; want %d, %U, %v", tt.s, pos, r, found, tt.pos, tt.r, tt.found)
		}
	}
}
