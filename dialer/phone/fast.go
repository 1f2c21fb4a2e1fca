package phone

import (
	"strconv"

	"github.com/nyaruka/phonenumbers"
)

// maxInputLength is libphonenumber's MAX_INPUT_STRING_LENGTH.
const maxInputLength = 250

// Lengths of a national significant number accepted by libphonenumber
// (MIN_LENGTH_FOR_NSN and MAX_LENGTH_FOR_NSN).
const (
	minNSNLength = 2
	maxNSNLength = 17
)

// outcome is the fast path's verdict.
type outcome uint8

const (
	unsure  outcome = iota // the input needs libphonenumber itself
	valid                  // the E.164 form is returned
	invalid                // libphonenumber would reject the input
)

// fastNormalize computes what
//
//	n, err := phonenumbers.Parse(raw, region)
//	err == nil && phonenumbers.IsValidNumber(n) → phonenumbers.Format(n, E164)
//
// returns, for the inputs that make up nearly every contacts file: ASCII
// digits with the separators space - . ( ) / and an optional leading '+'. It
// follows libphonenumber's parseHelper step by step (extracting the number,
// the international or national prefix, the country calling code, the
// national prefix and its transform rule, the length checks) and its
// IsValidNumber (region selection for shared calling codes, the type
// patterns), but runs the patterns as precompiled digit automata. Anything
// outside that grammar or off the common path (letters, extensions, RFC 3966,
// other Unicode digits or plus signs, a '+' whose calling code is unknown)
// returns unsure and is left to libphonenumber. The differential tests and
// FuzzFastPath check that the fast path never disagrees with the library.
//
// raw must be trimmed and non-empty; region must be upper case.
func fastNormalize(raw, region string) (string, outcome) {
	if len(raw) > maxInputLength {
		return "", unsure
	}
	var buf [maxInputLength]byte
	digits := buf[:0]
	start, plus := -1, false
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case c >= '0' && c <= '9':
			digits = append(digits, c)
			if start < 0 {
				start = i
			}
		case c == '+':
			if start >= 0 {
				return "", unsure
			}
			start, plus = i, true
		case c == ' ' || c == '-' || c == '.' || c == '(' || c == ')' || c == '/':
		default:
			return "", unsure
		}
	}
	// Fewer than three digits: not viable, or viable only as a two-digit
	// number; the library decides.
	if len(digits) < 3 {
		return "", unsure
	}
	all := string(digits)

	defPlan, supported := regionPlan(region)
	if supported && defPlan == nil {
		return "", unsure
	}
	if !supported && !plus {
		return "", invalid // checkRegionForParsing fails
	}

	// maybeExtractCountryCode.
	cc, national := 0, ""
	if plus {
		if len(all) <= minNSNLength {
			return "", invalid
		}
		var ok bool
		if cc, national, ok = extractCountryCode(all); !ok {
			// The library retries without the '+' against the default
			// region; rare, leave it to the library.
			return "", unsure
		}
	} else {
		fromIDD, rest := false, ""
		if defPlan.iddGate.match(all) {
			if loc := defPlan.idd.FindStringIndex(all); loc != nil && loc[0] == 0 {
				if r := all[loc[1]:]; r == "" || r[0] != '0' {
					fromIDD, rest = true, r
				}
			}
		}
		switch {
		case fromIDD:
			if len(rest) <= minNSNLength {
				return "", invalid
			}
			var ok bool
			if cc, national, ok = extractCountryCode(rest); !ok {
				return "", invalid
			}
		case len(all) >= len(defPlan.ccPrefix) && all[:len(defPlan.ccPrefix)] == defPlan.ccPrefix:
			pnn, ok := defPlan.stripNationalPrefix(all[len(defPlan.ccPrefix):])
			if !ok {
				return "", unsure
			}
			fullValid := defPlan.general.pattern.match(all)
			nationalValid := defPlan.general.pattern.match(pnn)
			if (!fullValid && nationalValid) || defPlan.testLength(all) == lengthTooLong {
				cc, national = defPlan.cc, pnn
			}
		}
	}

	// Back in parseHelper: pick the metadata used for the national prefix.
	meta := defPlan
	if cc != 0 {
		if main := phonenumbers.GetRegionCodeForCountryCode(cc); main != region {
			if meta = planFor(cc, main); meta == nil {
				return "", unsure
			}
		}
		// Otherwise meta is the default region's plan, nil for an
		// unsupported region: the library then skips the national prefix.
	} else {
		cc, national = defPlan.cc, all
	}
	if len(national) < minNSNLength {
		return "", invalid
	}
	if meta != nil {
		pnn, ok := meta.stripNationalPrefix(national)
		if !ok {
			return "", unsure
		}
		switch meta.testLength(pnn) {
		case lengthTooShort, lengthLocalOnly, lengthInvalid:
		default:
			national = pnn
		}
	}
	if len(national) < minNSNLength || len(national) > maxNSNLength {
		return "", invalid
	}

	// IsValidNumber. The national significant number is national itself:
	// libphonenumber keeps its leading zeros.
	regions := phonenumbers.GetRegionCodesForCountryCode(cc)
	rc := ""
	switch len(regions) {
	case 0:
	case 1:
		rc = regions[0]
	default:
		var ok bool
		if rc, ok = regionForNumber(cc, national, regions); !ok {
			return "", unsure
		}
	}
	vp := planFor(cc, rc)
	if vp == nil {
		if rc == "" {
			return "", invalid
		}
		return "", unsure
	}
	if rc != nonGeoRegion && cc != vp.cc {
		return "", invalid
	}
	if !vp.typeValid(national) {
		return "", invalid
	}
	return "+" + strconv.Itoa(cc) + national, valid
}

// extractCountryCode mirrors libphonenumber's extractCountryCode: the first
// one to three digits of full that form a known country calling code.
func extractCountryCode(full string) (cc int, national string, ok bool) {
	if full == "" || full[0] == '0' {
		return 0, "", false
	}
	codes := loadRegistry().callingCodes
	v := 0
	for i := 0; i < 3 && i < len(full); i++ {
		v = v*10 + int(full[i]-'0')
		if codes[v] {
			return v, full[i+1:], true
		}
	}
	return 0, "", false
}

// regionForNumber mirrors libphonenumber's getRegionCodeForNumberFromRegionList.
// ok is false when a region's metadata is missing (the library would not cope
// either; the caller falls back to it).
func regionForNumber(cc int, nsn string, regions []string) (string, bool) {
	for _, rc := range regions {
		p := planFor(cc, rc)
		if p == nil {
			return "", false
		}
		if p.leading != nil {
			if p.leading.match(nsn) {
				return rc, true
			}
		} else if p.typeValid(nsn) {
			return rc, true
		}
	}
	return "", true
}
