package phone

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
)

// maxDFAStates bounds the automaton built for one pattern. A pattern whose
// automaton would be larger keeps using its regexp.
const maxDFAStates = 8192

// errDFATooLarge reports a pattern whose automaton exceeds maxDFAStates.
var errDFATooLarge = errors.New("automaton too large")

// digitMatcher answers the same question as regexp.MatchString for inputs made
// only of the ASCII digits 0-9, with a deterministic automaton over those ten
// symbols instead of the regexp engine.
//
// The automaton is built from the regexp's compiled program by subset
// construction, so it accepts exactly the language the regexp accepts: for a
// digit string s, match(s) == regexp.MustCompile(pattern).MatchString(s) (and,
// in anchored mode, "there is a match starting at offset 0"). It supports the
// begin-of-text and end-of-text assertions (^ and $ without the m flag), the only
// assertions libphonenumber's metadata uses; patterns using others, or whose
// automaton would be too large, fall back to the regexp itself.
//
// A digitMatcher is immutable after construction and safe for concurrent use.
type digitMatcher struct {
	re    *regexp.Regexp // non-nil: fallback, the automaton was not built
	next  []int32        // next[state*10+digit]
	flags []uint8        // per state: acceptNow, acceptAtEnd
}

const (
	acceptNow   = 1 << iota // a match ends here, more input may follow
	acceptAtEnd             // a match ends here if the input ends here
)

// newDigitMatcher builds the matcher for pattern. With anchored false it answers
// MatchString (a match anywhere); with anchored true it answers whether a match
// starts at offset 0. It returns an error only if pattern does not compile.
func newDigitMatcher(pattern string, anchored bool) (*digitMatcher, error) {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("compile %q: %w", pattern, err)
	}
	m, err := buildDFA(pattern, anchored)
	if err != nil {
		if anchored {
			// The fallback must answer the anchored question too.
			re, err = regexp.Compile(`^(?:` + pattern + `)`)
			if err != nil {
				return nil, fmt.Errorf("compile anchored %q: %w", pattern, err)
			}
		}
		return &digitMatcher{re: re}, nil
	}
	return m, nil
}

// match reports whether digits (ASCII 0-9 only) matches. Any other byte makes
// the answer meaningless; callers guarantee digits-only input.
func (m *digitMatcher) match(digits string) bool {
	if m.re != nil {
		return m.re.MatchString(digits)
	}
	s := int32(0)
	for i := 0; i < len(digits); i++ {
		if m.flags[s]&acceptNow != 0 {
			return true
		}
		s = m.next[int(s)*10+int(digits[i]-'0')]
	}
	return m.flags[s]&(acceptNow|acceptAtEnd) != 0
}

// dfaBuilder holds the state of one subset construction.
type dfaBuilder struct {
	prog     *syntax.Prog
	anchored bool
	index    map[string]int32 // state key -> state number
	kernels  [][]uint32       // per state: program counters reached by the last rune
	begins   []bool           // per state: at offset 0 (only the initial state)
	next     []int32
	flags    []uint8
	stack    []uint32
	seen     []uint32 // generation marks per instruction, for closures
	gen      uint32
}

// buildDFA runs the subset construction over the digits 0-9.
func buildDFA(pattern string, anchored bool) (*digitMatcher, error) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil, fmt.Errorf("parse %q: %w", pattern, err)
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return nil, fmt.Errorf("compile %q: %w", pattern, err)
	}
	for _, inst := range prog.Inst {
		switch inst.Op {
		case syntax.InstEmptyWidth:
			if syntax.EmptyOp(inst.Arg)&^(syntax.EmptyBeginText|syntax.EmptyEndText) != 0 {
				return nil, fmt.Errorf("pattern %q: unsupported assertion", pattern)
			}
		case syntax.InstAlt, syntax.InstAltMatch, syntax.InstCapture, syntax.InstNop,
			syntax.InstMatch, syntax.InstFail, syntax.InstRune, syntax.InstRune1,
			syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
		default:
			return nil, fmt.Errorf("pattern %q: unsupported instruction %v", pattern, inst.Op)
		}
	}
	b := &dfaBuilder{
		prog:     prog,
		anchored: anchored,
		index:    make(map[string]int32),
		seen:     make([]uint32, len(prog.Inst)),
	}
	b.state(nil, true)
	for s := 0; s < len(b.kernels); s++ {
		if len(b.kernels) > maxDFAStates {
			return nil, errDFATooLarge
		}
		runes, now := b.closure(b.kernels[s], b.begins[s], false)
		_, atEnd := b.closure(b.kernels[s], b.begins[s], true)
		var f uint8
		if now {
			f |= acceptNow
		}
		if atEnd {
			f |= acceptAtEnd
		}
		b.flags[s] = f
		for d := range 10 {
			var kernel []uint32
			for _, pc := range runes {
				if matchesDigit(&prog.Inst[pc], d) {
					kernel = append(kernel, prog.Inst[pc].Out)
				}
			}
			slices.Sort(kernel)
			kernel = slices.Compact(kernel)
			b.next[s*10+d] = b.state(kernel, false)
		}
	}
	return &digitMatcher{next: b.next, flags: b.flags}, nil
}

// state returns the number of the state (kernel, begin), adding it if new.
func (b *dfaBuilder) state(kernel []uint32, begin bool) int32 {
	var key strings.Builder
	if begin {
		key.WriteByte(1)
	} else {
		key.WriteByte(0)
	}
	for _, pc := range kernel {
		key.WriteByte(byte(pc))
		key.WriteByte(byte(pc >> 8))
		key.WriteByte(byte(pc >> 16))
	}
	if s, ok := b.index[key.String()]; ok {
		return s
	}
	s := int32(len(b.kernels))
	b.index[key.String()] = s
	b.kernels = append(b.kernels, kernel)
	b.begins = append(b.begins, begin)
	b.next = append(b.next, make([]int32, 10)...)
	b.flags = append(b.flags, 0)
	return s
}

// closure follows the empty transitions from kernel (plus the program start
// when the search may begin here) and returns the sorted rune instructions
// reached and whether a match instruction was reached. begin and end say
// whether the position is the start or the end of the input.
func (b *dfaBuilder) closure(kernel []uint32, begin, end bool) ([]uint32, bool) {
	b.gen++
	b.stack = b.stack[:0]
	for i := len(kernel) - 1; i >= 0; i-- {
		b.stack = append(b.stack, kernel[i])
	}
	if begin || !b.anchored {
		b.stack = append(b.stack, uint32(b.prog.Start))
	}
	var ctx syntax.EmptyOp
	if begin {
		ctx |= syntax.EmptyBeginText
	}
	if end {
		ctx |= syntax.EmptyEndText
	}
	var runes []uint32
	matched := false
	for len(b.stack) > 0 {
		pc := b.stack[len(b.stack)-1]
		b.stack = b.stack[:len(b.stack)-1]
		if b.seen[pc] == b.gen {
			continue
		}
		b.seen[pc] = b.gen
		inst := &b.prog.Inst[pc]
		switch inst.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			b.stack = append(b.stack, inst.Arg, inst.Out)
		case syntax.InstCapture, syntax.InstNop:
			b.stack = append(b.stack, inst.Out)
		case syntax.InstEmptyWidth:
			if syntax.EmptyOp(inst.Arg)&^ctx == 0 {
				b.stack = append(b.stack, inst.Out)
			}
		case syntax.InstMatch:
			matched = true
		case syntax.InstFail:
		default:
			runes = append(runes, pc)
		}
	}
	slices.Sort(runes)
	return runes, matched
}

// matchesDigit reports whether the rune instruction inst consumes the digit d.
func matchesDigit(inst *syntax.Inst, d int) bool {
	switch inst.Op {
	case syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
		return true
	default:
		return inst.MatchRune(rune('0' + d))
	}
}
