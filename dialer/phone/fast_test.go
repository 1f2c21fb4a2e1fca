package phone

import (
	"errors"
	"flag"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/nyaruka/phonenumbers"
)

// The fast path must never disagree with libphonenumber. These tests compare
// fastNormalize with libraryNormalize on inputs built from every territory's
// example numbers (in every format, mutated, with prefixes) and on random
// digit strings, each against several default regions.

// checkSame fails when the fast path decides raw differently from the library.
func checkSame(t testing.TB, raw, region string) (decided bool) {
	t.Helper()
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return false
	}
	got, out := fastNormalize(raw, region)
	if out == unsure {
		return false
	}
	want, err := libraryNormalize(raw, region)
	switch {
	case err != nil && !errors.Is(err, ErrInvalid):
		t.Fatalf("library(%q, %q) error = %v", raw, region, err)
	case out == invalid && err == nil:
		t.Fatalf("fast(%q, %q) = invalid, want %q", raw, region, want)
	case out == valid && err != nil:
		t.Fatalf("fast(%q, %q) = %q, want invalid", raw, region, got)
	case out == valid && got != want:
		t.Fatalf("fast(%q, %q) = %q, want %q", raw, region, got, want)
	}
	return true
}

// sortedRegions returns the supported regions in a stable order.
func sortedRegions() []string {
	var rs []string
	for r := range phonenumbers.GetSupportedRegions() {
		rs = append(rs, r)
	}
	slices.Sort(rs)
	return rs
}

var numberTypes = []phonenumbers.PhoneNumberType{
	phonenumbers.FIXED_LINE, phonenumbers.MOBILE, phonenumbers.TOLL_FREE,
	phonenumbers.PREMIUM_RATE, phonenumbers.SHARED_COST, phonenumbers.VOIP,
	phonenumbers.PERSONAL_NUMBER, phonenumbers.PAGER, phonenumbers.UAN,
	phonenumbers.VOICEMAIL,
}

// exampleInputs returns, for every example number of every territory and
// non-geographic entity, its usual written forms and a few mutations.
func exampleInputs(rng *rand.Rand) []struct{ raw, home string } {
	var out []struct{ raw, home string }
	add := func(raw, home string) { out = append(out, struct{ raw, home string }{raw, home}) }
	var nums []*phonenumbers.PhoneNumber
	var homes []string
	for _, r := range sortedRegions() {
		for _, typ := range numberTypes {
			if n := phonenumbers.GetExampleNumberForType(r, typ); n != nil {
				nums, homes = append(nums, n), append(homes, r)
			}
		}
	}
	codes := phonenumbers.GetSupportedGlobalNetworkCallingCodes()
	var ccs []int
	for cc := range codes {
		ccs = append(ccs, cc)
	}
	slices.Sort(ccs)
	for _, cc := range ccs {
		if n := phonenumbers.GetExampleNumberForNonGeoEntity(cc); n != nil {
			nums, homes = append(nums, n), append(homes, "")
		}
	}
	for i, n := range nums {
		home := homes[i]
		cc := strconv.Itoa(int(n.GetCountryCode()))
		nsn := phonenumbers.GetNationalSignificantNumber(n)
		for _, f := range []phonenumbers.PhoneNumberFormat{
			phonenumbers.E164, phonenumbers.INTERNATIONAL, phonenumbers.NATIONAL, phonenumbers.RFC3966,
		} {
			add(phonenumbers.Format(n, f), home)
		}
		add(cc+nsn, home)
		add("00"+cc+nsn, home)
		add("011 "+cc+" "+nsn, home)
		add("0"+nsn, home)
		add("+"+cc+" (0)"+nsn, home)
		add("("+nsn[:min(3, len(nsn))]+") "+nsn[min(3, len(nsn)):], home)
		for range 6 {
			add("+"+cc+mutate(rng, nsn), home)
			add(mutate(rng, nsn), home)
		}
	}
	return out
}

// mutate changes, drops or inserts one digit of s.
func mutate(rng *rand.Rand, s string) string {
	b := []byte(s)
	i := rng.IntN(len(b) + 1)
	d := byte('0' + rng.IntN(10))
	switch rng.IntN(3) {
	case 0:
		if i < len(b) {
			b[i] = d
		}
	case 1:
		if i < len(b) {
			b = append(b[:i], b[i+1:]...)
		}
	default:
		b = slices.Insert(b, i, d)
	}
	return string(b)
}

// randomInput returns a random string in (and slightly outside) the fast
// path's grammar.
func randomInput(rng *rand.Rand) string {
	const seps = " -.()/"
	var b strings.Builder
	if rng.IntN(3) == 0 {
		b.WriteByte('(')
	}
	if rng.IntN(2) == 0 {
		b.WriteByte('+')
	}
	n := 3 + rng.IntN(18)
	for range n {
		if rng.IntN(5) == 0 {
			b.WriteByte(seps[rng.IntN(len(seps))])
		}
		// Favour the digits that start prefixes: 0 and 1.
		if rng.IntN(4) == 0 {
			b.WriteByte(byte('0' + rng.IntN(2)))
		} else {
			b.WriteByte(byte('0' + rng.IntN(10)))
		}
	}
	if rng.IntN(20) == 0 {
		b.WriteString(" x12")
	}
	return b.String()
}

// exhaustive runs TestFastPathMatchesLibrary on every example input and many
// more random ones (about a minute):
//
//	go test -run FastPathMatches ./dialer/phone/ -phone.exhaustive
var exhaustive = flag.Bool("phone.exhaustive", false, "compare the fast path with libphonenumber on every generated input")

func TestFastPathMatchesLibrary(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	regions := sortedRegions()
	inputs := exampleInputs(rng)
	// Sample the inputs: the library is slow, very slow under -race.
	step, n := 3, 20000
	switch {
	case *exhaustive:
		step, n = 1, 500000
	case raceEnabled:
		step, n = 31, 1000
	case testing.Short():
		step, n = 13, 3000
	}
	decided, total := 0, 0
	for i := 0; i < len(inputs); i += step {
		in := inputs[i]
		for _, region := range []string{in.home, "", "US", "GB", regions[rng.IntN(len(regions))]} {
			total++
			if checkSame(t, in.raw, region) {
				decided++
			}
		}
	}
	t.Logf("example inputs: fast path decided %d of %d", decided, total)

	decided = 0
	for range n {
		region := regions[rng.IntN(len(regions))]
		switch rng.IntN(4) {
		case 0:
			region = ""
		case 1:
			region = []string{"US", "GB", "DE", "AR", "BR", "JP", "AU", "IT", "GG", "AG"}[rng.IntN(10)]
		}
		if checkSame(t, randomInput(rng), region) {
			decided++
		}
	}
	t.Logf("random inputs: fast path decided %d of %d", decided, n)
}

func TestFastPathCoversCommonForms(t *testing.T) {
	// These are the forms contacts files are made of; they must not need
	// the (slow) library.
	for _, tt := range []struct{ raw, region string }{
		{"+14155550132", ""},
		{"(415) 555-0132", "US"},
		{"020 7946 0958", "GB"},
		{"+44 7911 123456", ""},
		{"030 12345678", "DE"},
		{"06 12 34 56 78", "FR"},
		{"+91 98765 43210", "IN"},
		{"0412 345 678", "AU"},
		{"+1 555 555 0100", ""}, // invalid, decided too
	} {
		if _, out := fastNormalize(tt.raw, tt.region); out == unsure {
			t.Fatalf("fastNormalize(%q, %q) = unsure, want a decision", tt.raw, tt.region)
		}
	}
}

func FuzzFastPath(f *testing.F) {
	for _, s := range []string{
		"+14155550132", "(415) 555-0132", "020 7946 0958", "0049 30 123456",
		"011 15 2345 6789", "+44 (0)20 7946 0958", "1 415 555 0132", "+800 1234 5678",
		"0 21 11 2345 6789", "+0 415", "++1 415", "(+1) 415 555 0132", "000000",
	} {
		f.Add(s, uint8(0))
		f.Add(s, uint8(60))
	}
	regions := append([]string{"", "US", "GB", "DE", "AR", "BR", "AG", "GG", "JP"}, sortedRegions()...)
	f.Fuzz(func(t *testing.T, raw string, r uint8) {
		checkSame(t, raw, regions[int(r)%len(regions)])
	})
}
