package phone

import (
	"context"
	"log/slog"
)

// Masking keeps phone numbers out of the service's logs (API.md 13): a log
// line may show the last four digits of a number, never the whole of it.

// keptDigits is how many trailing digits Mask and MaskText leave readable.
const keptDigits = 4

// Mask returns number with every digit but the last four replaced by '*';
// other characters (the leading '+', separators) stay where they are:
// Mask("+14155550100") is "+*******0100". A string of four digits or fewer
// is returned as it is.
func Mask(number string) string {
	digits := 0
	for i := 0; i < len(number); i++ {
		if isDigit(number[i]) {
			digits++
		}
	}
	if digits <= keptDigits {
		return number
	}
	b := []byte(number)
	hide := digits - keptDigits
	for i := 0; i < len(b) && hide > 0; i++ {
		if isDigit(b[i]) {
			b[i] = '*'
			hide--
		}
	}
	return string(b)
}

// MaskText returns s with every phone number in it masked as Mask does, for
// free text that may quote one: an error a provider answered ("The 'To'
// number +14155550100 is not valid"), a file name. A phone number here is
//
//   - a '+' followed by 8 or more digits (E.164 and anything longer), or
//   - a bare run of 10 to 15 digits (E.164 without its '+', as some
//     providers write numbers) that is not part of a longer token: the
//     characters on either side are not letters, digits, '_', '-' or '.'
//     (so identifiers, UUID groups and decimals are left alone).
//
// Numbers written with separators ("+1 415 555 0100") are not recognised.
// A string without 8 consecutive digits is returned as it is, without
// allocating.
func MaskText(s string) string {
	if !hasDigitRun(s, 8) {
		return s
	}
	var b []byte // nil until something is masked
	for i := 0; i < len(s); {
		if !isDigit(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		n := j - i
		plus := i > 0 && s[i-1] == '+'
		bare := n >= 10 && n <= 15 && !tokenChar(s, i-1) && !tokenChar(s, j)
		if (plus && n >= 8) || bare {
			if b == nil {
				b = []byte(s)
			}
			for k := i; k < j-keptDigits; k++ {
				b[k] = '*'
			}
		}
		i = j
	}
	if b == nil {
		return s
	}
	return string(b)
}

// hasDigitRun reports whether s holds n consecutive ASCII digits.
func hasDigitRun(s string, n int) bool {
	run := 0
	for i := 0; i < len(s); i++ {
		if isDigit(s[i]) {
			if run++; run >= n {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// tokenChar reports whether s[i] exists and would make a digit run beside
// it part of a longer token.
func tokenChar(s string, i int) bool {
	if i < 0 || i >= len(s) {
		return false
	}
	c := s[i]
	return isDigit(c) || c == '_' || c == '-' || c == '.' || (c|0x20 >= 'a' && c|0x20 <= 'z')
}

// NewMaskingHandler returns a slog.Handler that passes every record to h
// with MaskText applied to its message and to every string attribute value
// (in groups too, and in values a slog.LogValuer resolves to); an error
// value is logged as its masked Error() text. Other kinds (numbers, times,
// durations, other values of kind Any) are passed as they are, so ids and
// counts are never masked. Records that hold nothing to mask are passed
// unchanged, without copying.
//
// The service builds its one logger on it, so that no log line shows a
// full phone number whichever package wrote it.
func NewMaskingHandler(h slog.Handler) slog.Handler {
	if m, ok := h.(*maskingHandler); ok {
		return m
	}
	return &maskingHandler{h: h}
}

type maskingHandler struct{ h slog.Handler }

func (m *maskingHandler) Enabled(ctx context.Context, l slog.Level) bool { return m.h.Enabled(ctx, l) }

func (m *maskingHandler) Handle(ctx context.Context, r slog.Record) error {
	dirty := hasDigitRun(r.Message, 8)
	if !dirty {
		r.Attrs(func(a slog.Attr) bool {
			dirty = attrNeedsMask(a)
			return !dirty
		})
	}
	if !dirty {
		return m.h.Handle(ctx, r)
	}
	out := slog.NewRecord(r.Time, r.Level, MaskText(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(maskAttr(a))
		return true
	})
	return m.h.Handle(ctx, out)
}

func (m *maskingHandler) WithAttrs(as []slog.Attr) slog.Handler {
	masked := make([]slog.Attr, len(as))
	for i, a := range as {
		masked[i] = maskAttr(a)
	}
	return &maskingHandler{h: m.h.WithAttrs(masked)}
}

func (m *maskingHandler) WithGroup(name string) slog.Handler {
	return &maskingHandler{h: m.h.WithGroup(name)}
}

// attrNeedsMask reports whether maskAttr would change a.
func attrNeedsMask(a slog.Attr) bool {
	v := a.Value
	if v.Kind() == slog.KindLogValuer {
		return true // resolved (and checked) by maskAttr
	}
	switch v.Kind() {
	case slog.KindString:
		return hasDigitRun(v.String(), 8)
	case slog.KindGroup:
		for _, g := range v.Group() {
			if attrNeedsMask(g) {
				return true
			}
		}
	case slog.KindAny:
		_, isErr := v.Any().(error)
		return isErr
	}
	return false
}

// maskAttr returns a with its string values masked; see NewMaskingHandler.
func maskAttr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		if s := v.String(); hasDigitRun(s, 8) {
			return slog.String(a.Key, MaskText(s))
		}
	case slog.KindGroup:
		g := v.Group()
		masked := make([]slog.Attr, len(g))
		for i, x := range g {
			masked[i] = maskAttr(x)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(masked...)}
	case slog.KindAny:
		if err, ok := v.Any().(error); ok && err != nil {
			return slog.String(a.Key, MaskText(err.Error()))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
