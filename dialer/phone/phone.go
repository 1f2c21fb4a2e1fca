// Package phone normalises telephone numbers to E.164 with the libphonenumber
// numbering-plan rules (github.com/nyaruka/phonenumbers). It is shared by the
// phone-number endpoints and the contacts CSV reader so both accept exactly the
// same numbers.
package phone

import (
	"errors"
	"strings"

	"github.com/nyaruka/phonenumbers"
)

// ErrInvalid is returned (wrapped) for a number that does not parse or is not a
// valid number of its numbering plan.
var ErrInvalid = errors.New("invalid phone number")

// ErrEmpty is returned for a blank input.
var ErrEmpty = errors.New("empty phone number")

// Normalize parses raw and returns it in E.164 form ("+14155550100").
//
// A number that starts with "+" (or an international prefix understood by
// libphonenumber) is parsed on its own; any other number needs defaultRegion, an
// ISO 3166 alpha-2 code such as "US" (case-insensitive). The number must pass
// IsValidNumber, so a well-formed but unassigned range is rejected. Errors wrap
// ErrEmpty or ErrInvalid and never contain the input.
//
// The result is exactly libphonenumber's (Parse, IsValidNumber, Format E164).
// Inputs made of ASCII digits, spaces, "-", ".", "(", ")", "/" and a leading
// "+" take a fast path that replays libphonenumber's parsing rules with
// precompiled digit automata (about ten times faster); every other input goes
// through libphonenumber itself. Normalize is safe for concurrent use.
func Normalize(raw, defaultRegion string) (string, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", ErrEmpty
	}
	region := strings.ToUpper(strings.TrimSpace(defaultRegion))
	switch e164, out := fastNormalize(raw, region); out {
	case valid:
		return e164, nil
	case invalid:
		return "", ErrInvalid
	}
	return libraryNormalize(raw, region)
}

// libraryNormalize is Normalize done by libphonenumber alone: raw is trimmed
// and non-empty, region upper case.
//
// A panic inside libphonenumber (it has had such bugs on malformed input) is
// reported as ErrInvalid rather than taking the process down.
func libraryNormalize(raw, region string) (e164 string, err error) {
	defer func() {
		if recover() != nil {
			e164, err = "", ErrInvalid
		}
	}()
	num, err := phonenumbers.Parse(raw, region)
	if err != nil {
		return "", ErrInvalid
	}
	if !phonenumbers.IsValidNumber(num) {
		return "", ErrInvalid
	}
	return phonenumbers.Format(num, phonenumbers.E164), nil
}

// ValidRegion reports whether code is an ISO 3166 alpha-2 region that has a
// numbering plan (case-insensitive).
func ValidRegion(code string) bool {
	code = strings.ToUpper(strings.TrimSpace(code))
	if len(code) != 2 {
		return false
	}
	return phonenumbers.GetCountryCodeForRegion(code) != 0
}
