package contacts

import (
	"errors"
	"fmt"
	"hash/maphash"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/outdial/outdial/dialer/phone"
)

// rowResult is a worker's verdict on one row; the merger completes it with
// the duplicate check.
type rowResult struct {
	row       int
	key       uint64 // duplicate-set key of the number, when hasKey
	hasKey    bool
	contact   int32 // index into batch.contacts, or -1
	probStart int32 // the row's problems are batch.problems[probStart:probEnd]
	probEnd   int32
	phone     string // E.164, for the duplicate message
	phoneRaw  string // the cell, for the duplicate problem's Input
}

// checker validates rows against a header. It is shared by the workers and
// must not be modified once the pipeline runs.
type checker struct {
	h       header
	country string
	build   bool // build contacts (false when only checking)
	seed    maphash.Seed
}

// check validates one row (fields) and appends its result, problems and
// contact to b.
func (c *checker) check(b *batch, row int, fields []string) {
	res := rowResult{row: row, contact: -1, probStart: int32(len(b.problems))}
	defer func() {
		res.probEnd = int32(len(b.problems))
		b.results = append(b.results, res)
	}()
	add := func(p Problem) {
		p.Row = row
		b.problems = append(b.problems, p)
	}
	if len(fields) != len(c.h.names) {
		add(Problem{
			Type: TypeCSVInvalid, Input: len(fields),
			Msg: fmt.Sprintf("the row has %d fields, the header has %d", len(fields), len(c.h.names)),
		})
		return
	}
	for i, cell := range fields {
		if msg := cellEncodingProblem(cell); msg != "" {
			add(Problem{
				Type: TypeCSVInvalid, Column: c.h.names[i],
				Msg: fmt.Sprintf("the row %s (column %d); the file must be UTF-8 text", msg, i+1),
			})
			return
		}
	}

	raw := fields[c.h.phone]
	e164, err := phone.Normalize(raw, c.country)
	switch {
	case errors.Is(err, phone.ErrEmpty):
		add(Problem{Type: TypePhoneMissing, Column: c.h.names[c.h.phone], Input: clip(raw), Msg: "phone_number is empty"})
	case err != nil:
		add(Problem{Type: TypePhoneInvalid, Column: c.h.names[c.h.phone], Input: clip(raw), Msg: c.invalidPhoneMsg(raw)})
	default:
		res.key, res.hasKey, res.phone, res.phoneRaw = phoneKey(c.seed, e164), true, e164, raw
	}

	tz := ""
	if c.h.timezone >= 0 {
		tz = strings.TrimSpace(fields[c.h.timezone])
		if tz != "" && !validTimezone(tz) {
			add(Problem{
				Type: TypeTimezoneInvalid, Column: c.h.names[c.h.timezone], Input: clip(tz),
				Msg: fmt.Sprintf("%q is not an IANA time zone name such as \"Europe/Paris\"", clip(tz)),
			})
		}
	}

	for _, i := range c.h.required {
		if strings.TrimSpace(fields[i]) == "" {
			name := c.h.names[i]
			add(Problem{
				Type: TypeVariableEmpty, Column: name, Input: clip(fields[i]),
				Msg: fmt.Sprintf("column %s is empty but the workflow uses {{%s}}", name, name),
			})
		}
	}

	if int(res.probStart) != len(b.problems) {
		return
	}
	res.contact = int32(len(b.contacts))
	ct := Contact{Row: row, PhoneNumber: e164, Timezone: tz}
	if c.build {
		ct.InitialContext = make(map[string]string, len(fields)-1)
		for i, name := range c.h.names {
			if i != c.h.phone && name != "" {
				ct.InitialContext[name] = fields[i]
			}
		}
	}
	b.contacts = append(b.contacts, ct)
}

// invalidPhoneMsg explains a phone_invalid problem.
func (c *checker) invalidPhoneMsg(raw string) string {
	if c.country == "" && !strings.HasPrefix(strings.TrimSpace(raw), "+") {
		return "phone_number is not a valid phone number; a number without a leading + needs the campaign's default_country"
	}
	if c.country != "" {
		return fmt.Sprintf("phone_number is not a valid phone number (default country %s)", c.country)
	}
	return "phone_number is not a valid phone number"
}

// phoneKey maps an E.164 number to the 8-byte key of the duplicate set. The
// digits after "+" never start with 0 (a country calling code), so up to 19
// digits their integer value is a unique key (below 10^19). Longer numbers
// (libphonenumber allows 20) get a seeded 64-bit hash mapped to the keys
// from 10^19 up, so they can only collide with each other.
func phoneKey(seed maphash.Seed, e164 string) uint64 {
	const tenTo19 = 10_000_000_000_000_000_000
	digits := strings.TrimPrefix(e164, "+")
	if len(digits) <= 19 {
		if v, err := strconv.ParseUint(digits, 10, 64); err == nil {
			return v
		}
	}
	return tenTo19 + maphash.String(seed, digits)%(^uint64(0)-tenTo19+1)
}

// Timezone names are checked with time.LoadLocation, which reads zone files;
// the answers are cached for the life of the process (the zone database does
// not change under a running binary). The cache is bounded so that a file of
// distinct bogus names cannot grow it without limit.
const (
	maxTimezoneCache = 2048
	maxTimezoneLen   = 64 // the longest IANA name is about 32 bytes
)

var tzCache = struct {
	sync.RWMutex
	m map[string]bool
}{m: make(map[string]bool)}

// validTimezone reports whether name is an IANA zone name.
func validTimezone(name string) bool {
	if len(name) > maxTimezoneLen || name == "Local" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '/' || c == '_' || c == '-' || c == '+') {
			return false
		}
	}
	tzCache.RLock()
	ok, hit := tzCache.m[name]
	tzCache.RUnlock()
	if hit {
		return ok
	}
	_, err := time.LoadLocation(name)
	ok = err == nil
	tzCache.Lock()
	if len(tzCache.m) < maxTimezoneCache {
		tzCache.m[strings.Clone(name)] = ok
	}
	tzCache.Unlock()
	return ok
}
