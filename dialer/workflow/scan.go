package workflow

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"unicode/utf8"
)

// This file holds a small validating JSON parser that reads a definition in
// one pass. It exists because encoding/json matches struct fields
// case-insensitively (a node with "ID" would pass for "id"), and because
// json.Valid followed by a decode visits every byte of a 10,000-node
// definition several times. The parser accepts exactly what json.Valid
// accepts (including its nesting limit; FuzzValidate checks the two agree),
// reads only the few keys the validator needs with exact key matching, and
// skips everything else, which stays in the raw definition untouched.
// Duplicate keys resolve to the last occurrence, as in encoding/json.

// maxDepth is encoding/json's nesting limit: json.Valid rejects documents
// with more nested objects and arrays.
const maxDepth = 10000

// kind is the JSON type of a value.
type kind uint8

const (
	kindAbsent kind = iota // the key was not present
	kindNull
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

// field is a decoded scalar the validator looks at: its kind and, when it is
// a string, its unescaped text and whether that text is only white space
// (worked out while the bytes are in cache).
type field struct {
	kind  kind
	s     string
	blank bool
}

// isString reports whether f is a JSON string.
func (f field) isString() bool { return f.kind == kindString }

// isBlank reports whether f is a string made only of white space.
func (f field) isBlank() bool { return f.kind == kindString && f.blank }

// missing reports whether f is absent or null.
func (f field) missing() bool { return f.kind == kindAbsent || f.kind == kindNull }

// value is one parsed JSON value: its kind, its bounds in the document and,
// for strings, whether it contains escapes and bytes outside ASCII.
type value struct {
	kind       kind
	start, end int
	esc, wide  bool
}

// plain[c] is true for bytes that stand for themselves inside a string.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// parser reads one document. After the first syntax error err is set, i is
// moved to the end, and every method becomes a no-op.
type parser struct {
	b   []byte
	src string // the same bytes as b, so strings can be sliced without copying
	i   int
	err bool
}

// fail records a syntax error.
func (p *parser) fail() {
	p.err = true
	p.i = len(p.b)
}

// ws skips white space.
func (p *parser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// peek returns the byte at p.i after white space, or 0 at the end.
func (p *parser) peek() byte {
	p.ws()
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

// Masks for testing eight bytes at once.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// special reports whether any byte of w is '"', '\\' or below 0x20: the
// classic "has zero byte" / "has byte less than n" tests, exact as to
// whether such a byte exists.
func special(w uint64) bool {
	q := w ^ (ones * '"')
	bs := w ^ (ones * '\\')
	return ((q-ones)&^q|(bs-ones)&^bs|(w-ones*0x20)&^w)&highs != 0
}

// str reads the string at p.i (which is '"') and reports whether it holds
// escapes and whether it holds bytes outside ASCII.
func (p *parser) str() (esc, wide bool) {
	b, i := p.b, p.i+1
	var acc uint64 // OR of the bytes seen; its high bits tell of non-ASCII
	for {
		for i+8 <= len(b) {
			w := binary.LittleEndian.Uint64(b[i:])
			if special(w) {
				break
			}
			acc |= w
			i += 8
		}
		for i < len(b) && plain[b[i]] {
			acc |= uint64(b[i])
			i++
		}
		if i >= len(b) {
			p.fail()
			return false, false
		}
		switch c := b[i]; {
		case c == '"':
			p.i = i + 1
			return esc, acc&highs != 0
		case c == '\\':
			esc = true
			if i+1 >= len(b) {
				p.fail()
				return false, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
					p.fail()
					return false, false
				}
				i += 6
			default:
				p.fail()
				return false, false
			}
		default: // a control character
			p.fail()
			return false, false
		}
	}
}

// isHex reports whether c is a hexadecimal digit.
func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// digits consumes a run of decimal digits and reports whether there was one.
func (p *parser) digits() bool {
	start := p.i
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		p.i++
	}
	return p.i > start
}

// number reads a number with JSON's grammar.
func (p *parser) number() {
	b := p.b
	if p.i < len(b) && b[p.i] == '-' {
		p.i++
	}
	switch {
	case p.i < len(b) && b[p.i] == '0':
		p.i++
	case !p.digits():
		p.fail()
		return
	}
	if p.i < len(b) && b[p.i] == '.' {
		p.i++
		if !p.digits() {
			p.fail()
			return
		}
	}
	if p.i < len(b) && (b[p.i] == 'e' || b[p.i] == 'E') {
		p.i++
		if p.i < len(b) && (b[p.i] == '+' || b[p.i] == '-') {
			p.i++
		}
		if !p.digits() {
			p.fail()
		}
	}
}

// literal reads true, false or null.
func (p *parser) literal(word string) {
	if !bytes.HasPrefix(p.b[p.i:], []byte(word)) {
		p.fail()
		return
	}
	p.i += len(word)
}

// value reads any value after white space; depth is the number of
// containers around it.
func (p *parser) value(depth int) value {
	c := p.peek()
	v := value{start: p.i}
	switch c {
	case '"':
		v.kind = kindString
		v.esc, v.wide = p.str()
	case '{', '[':
		v.kind = kindArray
		if c == '{' {
			v.kind = kindObject
		}
		p.skipContainer(depth)
	case 't':
		v.kind = kindBool
		p.literal("true")
	case 'f':
		v.kind = kindBool
		p.literal("false")
	case 'n':
		v.kind = kindNull
		p.literal("null")
	default:
		v.kind = kindNumber
		p.number()
	}
	if p.err {
		return value{}
	}
	v.end = p.i
	return v
}

// scalar reads a value that is not a container, or returns false when the
// next value is a container.
func (p *parser) scalar() bool {
	switch p.peek() {
	case '"':
		p.str()
	case 't':
		p.literal("true")
	case 'f':
		p.literal("false")
	case 'n':
		p.literal("null")
	case '{', '[':
		return false
	default:
		p.number()
	}
	return true
}

// skipContainer reads the object or array at p.i, whose own depth is
// depth+1, without recursion, so nesting is only limited by maxDepth.
func (p *parser) skipContainer(depth int) {
	var buf [64]byte
	stack := buf[:0] // the closing byte of every open container
	for !p.err {
		// A value is expected at p.i.
		if !p.scalar() {
			open := p.b[p.i]
			if depth+len(stack)+1 > maxDepth {
				p.fail()
				return
			}
			closer := byte(']')
			if open == '{' {
				closer = '}'
			}
			p.i++
			if p.peek() == closer {
				p.i++
			} else {
				stack = append(stack, closer)
				if open == '{' {
					p.key()
				}
				continue
			}
		}
		// After a value: close containers until one has another element.
		for !p.err {
			if len(stack) == 0 {
				return
			}
			closer := stack[len(stack)-1]
			c := p.peek()
			if c == closer {
				p.i++
				stack = stack[:len(stack)-1]
				continue
			}
			if c != ',' {
				p.fail()
				return
			}
			p.i++
			if closer == '}' {
				p.key()
			}
			break
		}
	}
}

// key reads an object key and the colon after it and returns the key
// unescaped (a sub-slice of the document when it has no escapes).
func (p *parser) key() []byte {
	if p.peek() != '"' {
		p.fail()
		return nil
	}
	start := p.i
	esc, _ := p.str()
	end := p.i
	if p.peek() != ':' {
		p.fail()
		return nil
	}
	p.i++
	if esc {
		return []byte(unquote(p.b[start:end]))
	}
	return p.b[start+1 : end-1]
}

// begin consumes the opening byte of a container (already checked by the
// caller) whose own depth is depth, and reports whether an element follows.
func (p *parser) begin(depth int, closer byte) bool {
	if p.err || depth > maxDepth {
		p.fail()
		return false
	}
	p.i++
	if p.peek() == closer {
		p.i++
		return false
	}
	return !p.err
}

// more consumes "," (true: another element follows) or closer (false).
func (p *parser) more(closer byte) bool {
	switch p.peek() {
	case ',':
		p.i++
		return !p.err
	case closer:
		p.i++
		return false
	}
	p.fail()
	return false
}

// end checks that only white space follows the document's value.
func (p *parser) end() {
	p.ws()
	if p.i != len(p.b) {
		p.fail()
	}
}

// field decodes a scalar value: kind, unescaped text for strings, and
// whether the text is blank. Strings without escapes and with valid UTF-8
// are sliced from the document without copying; the others go through
// encoding/json so escapes and invalid UTF-8 (replaced by U+FFFD) come out
// exactly as json.Unmarshal gives them.
func (p *parser) field(v value) field {
	if v.kind != kindString || p.err {
		return field{kind: v.kind}
	}
	s := p.src[v.start+1 : v.end-1]
	if v.esc || (v.wide && !utf8.ValidString(s)) {
		s = unquote(p.b[v.start:v.end])
	}
	return field{kind: kindString, s: s, blank: isBlank(s)}
}

// unquote returns the text of the JSON string literal raw.
func unquote(raw []byte) string {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return ""
	}
	return s
}
