package realbin

import (
	"bytes"
	"fmt"

	"github.com/nyaruka/phonenumbers"
)

// Area codes and exchanges of the generated numbers: every pair is a
// 10,000-number block (line numbers 0000-9999) of valid US numbers, 320
// blocks in all. Exchanges avoid 555 (its 01xx lines are fictional, and
// bench/dialbench's contacts are 555 numbers, so no generated number is
// one of them) and N11.
var (
	areaCodes = []string{"201", "202", "203", "205", "206", "207", "208", "209", "210", "212",
		"213", "214", "215", "216", "217", "218", "219", "224", "225", "228",
		"229", "231", "234", "239", "240", "248", "251", "252", "253", "254",
		"256", "260", "262", "267", "269", "270", "276", "281", "301", "302"}
	exchanges = []string{"234", "345", "456", "678", "789", "823", "932", "627"}
)

// MaxNumbers is how many distinct numbers Number makes (3,200,000).
var MaxNumbers = len(areaCodes) * len(exchanges) * 10000

// Number returns the i-th generated phone number in E.164: block i/10,000
// (area codes vary fastest), line number i%10,000. Number(0) to
// Number(MaxNumbers-1) are distinct; CheckNumbers tells they are valid.
func Number(i int) string {
	block, line := i/10000, i%10000
	a := areaCodes[block%len(areaCodes)]
	e := exchanges[(block/len(areaCodes))%len(exchanges)]
	return "+1" + a + e + fmt.Sprintf("%04d", line)
}

// CheckNumbers verifies with libphonenumber that the first, middle and
// last numbers of every block of the first n are valid US numbers (the
// service rejects invalid ones), returning the first that is not.
func CheckNumbers(n int) error {
	if n > MaxNumbers {
		return fmt.Errorf("at most %d distinct numbers, %d asked", MaxNumbers, n)
	}
	for block := 0; block*10000 < n; block++ {
		for _, line := range []int{0, 100, 199, 5000, 9999} {
			s := Number(block*10000 + line)
			p, err := phonenumbers.Parse(s, "US")
			if err != nil || !phonenumbers.IsValidNumber(p) || phonenumbers.GetRegionCodeForNumber(p) != "US" {
				return fmt.Errorf("generated number %s is not a valid US number (%v)", s, err)
			}
		}
	}
	return nil
}

// NumbersCSV returns a suppression-list file (API.md 12.1): a
// phone_number column holding Number(offset) to Number(offset+n-1).
func NumbersCSV(n, offset int) []byte {
	var b bytes.Buffer
	b.Grow(13 + n*13)
	b.WriteString("phone_number\n")
	for i := range n {
		b.WriteString(Number(offset + i))
		b.WriteByte('\n')
	}
	return b.Bytes()
}
