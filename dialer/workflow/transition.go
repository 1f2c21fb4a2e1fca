package workflow

import (
	"bytes"
	"unicode"
	"unicode/utf8"
)

// transitions finds edges that leave the same node with labels giving the
// same transition name; the first such edge is fine, each later one points
// at it. Edges are grouped by source (a counting sort that keeps definition
// order) and names are written into one reused buffer, so typical graphs
// need no allocation per edge; only a node with many labelled edges out
// falls back to a map.
func (v *validation) transitions() {
	edges := v.def.edges
	v.sameName = make([]int, len(edges))
	labelled := func(i int) bool {
		return v.src[i] >= 0 && edges[i].labelKind == kindString && !edges[i].label().isBlank()
	}
	start := make([]int32, len(v.def.nodes)+1)
	for i := range edges {
		v.sameName[i] = -1
		if labelled(i) {
			start[v.src[i]+1]++
		}
	}
	for i := 1; i < len(start); i++ {
		start[i] += start[i-1]
	}
	order := make([]int32, start[len(start)-1])
	fill := append([]int32(nil), start[:len(start)-1]...)
	for i := range edges {
		if labelled(i) {
			order[fill[v.src[i]]] = int32(i)
			fill[v.src[i]]++
		}
	}
	var (
		arena []byte
		ends  []int
		seen  map[string]int
	)
	for n := 0; n+1 < len(start); n++ {
		group := order[start[n]:start[n+1]]
		if len(group) < 2 {
			continue
		}
		arena, ends = arena[:0], ends[:0]
		for _, e := range group {
			arena = appendTransitionName(arena, edges[e].Label)
			ends = append(ends, len(arena))
		}
		name := func(k int) []byte {
			if k == 0 {
				return arena[:ends[0]]
			}
			return arena[ends[k-1]:ends[k]]
		}
		if len(group) <= 16 {
			for j := 1; j < len(group); j++ {
				for k := 0; k < j; k++ {
					if bytes.Equal(name(j), name(k)) {
						v.sameName[group[j]] = int(group[k])
						break
					}
				}
			}
			continue
		}
		if seen == nil {
			seen = make(map[string]int)
		}
		clear(seen)
		for j, e := range group {
			if k, ok := seen[string(name(j))]; ok {
				v.sameName[e] = k
				continue
			}
			seen[string(name(j))] = int(e)
		}
	}
}

// TransitionName turns an edge label into the name of the transition the
// voice agent sees: lower-cased, and every character (rune) outside [a-z0-9]
// replaced by "_" (one "_" per character, nothing trimmed or collapsed):
// "Not interested!" → "not_interested_".
func TransitionName(label string) string {
	return string(appendTransitionName(make([]byte, 0, len(label)), label))
}

// appendTransitionName appends the transition name of label to dst.
func appendTransitionName(dst []byte, label string) []byte {
	for i := 0; i < len(label); {
		c := label[i]
		if c < utf8.RuneSelf {
			switch {
			case c >= 'A' && c <= 'Z':
				dst = append(dst, c+('a'-'A'))
			case (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'):
				dst = append(dst, c)
			default:
				dst = append(dst, '_')
			}
			i++
			continue
		}
		// Outside ASCII: lower-case the rune first (a few, like the Kelvin
		// sign, become ASCII letters), as strings.ToLower would.
		r, size := utf8.DecodeRuneInString(label[i:])
		if lr := unicode.ToLower(r); (lr >= 'a' && lr <= 'z') || (lr >= '0' && lr <= '9') {
			dst = append(dst, byte(lr))
		} else {
			dst = append(dst, '_')
		}
		i += size
	}
	return dst
}
