package contacts

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// fuzzSeeds are nasty files; FuzzRead starts from them.
func fuzzSeeds() []string {
	return []string{
		"",
		"\xEF\xBB\xBF",
		"\xEF\xBB\xBFphone_number\n",
		"phone_number",
		"phone_number,name\n",
		"phone_number,name\r\n+14155550100,Ada\r\n",
		"phone_number,name\r+14155550100,Ada\r",
		"phone_number,name\n+14155550100,\"Lovelace, \"\"Ada\"\"\"\n",
		"phone_number,name\n+14155550100,\"multi\r\nline\"\n",
		"phone_number,name\n+14155550100,Bo\"b\n+14155550101,x\n",
		"phone_number,name\n\"+14155550100,Ada\n+14155550101,x\n",
		"phone_number,name\n+14155550100,\"a\"b\n",
		"phone_number,name,x\n+14155550100\n+14155550101,a,b,c,d\n,,\n",
		"phone_number,name\n+14155550100,Andr\xE9\n\xFF\xFE,x\n",
		"phone_number,na\x00me\n+14155550100,a\x00b\n",
		"\x00\x00\x00",
		"\xFF\xFEp\x00h\x00o\x00n\x00e\x00",
		"\xFE\xFF\x00p\x00h",
		"Phone_Number,TIMEZONE,name\n415 555 0100,Europe/Paris,a\n+1 415 555 0100,Mars/Base,b\n(415) 555-0100,Local,\n",
		"phone_number,timezone\n+14155550100,../../etc/passwd\n+14155550101,/etc/localtime\n",
		"phone_number,phone_number\n1,2\n",
		"name,name,phone_number\na,b,c\n",
		",,phone_number,,\n,,+14155550100,,\n",
		"phone_number\n\n\n\n+14155550100\n\n",
		"phone_number\n+800 1234 5678\n1-800-FLOWERS\n+1 415 555 0100 ext 9\n０３ １２３４ ５６７８\n",
		"phone_number,name\n+14155550100,\"" + strings.Repeat("x", 1<<20) + "\"\n",
		"phone_number,name\n+14155550100," + strings.Repeat("y", 1<<20) + "\n",
		strings.Repeat("\"", 1000),
		strings.Repeat(",", 1000) + "\n" + strings.Repeat(",", 999),
	}
}

func FuzzRead(f *testing.F) {
	for i, s := range fuzzSeeds() {
		f.Add([]byte(s), uint8(i))
	}
	countries := []string{"", "US", "GB", "DE", "FR", "IN", "BR", "AR"}
	f.Fuzz(func(t *testing.T, data []byte, knob uint8) {
		opts := Options{
			DefaultCountry:    countries[int(knob)%len(countries)],
			RequiredVariables: []string{"name"},
			MaxProblems:       -1,
		}
		if knob&0x80 != 0 {
			opts.MaxRowBytes = 512
		}
		serial := opts
		serial.Workers, serial.batchSize = 1, 1
		parallel := opts
		parallel.Workers, parallel.batchSize = 3, 2

		res1, got1, err := readAll(t, string(data), serial)
		if err != nil {
			t.Fatalf("serial Read error = %v, want nil", err)
		}
		res2, got2, err := readAll(t, string(data), parallel)
		if err != nil {
			t.Fatalf("parallel Read error = %v, want nil", err)
		}
		if !reflect.DeepEqual(got1, got2) || !reflect.DeepEqual(res1, res2) {
			t.Fatalf("parallel result differs from serial:\n got %+v\n%+v\nwant %+v\n%+v", res2, got2, res1, got1)
		}
		checkInvariants(t, res1, got1)
	})
}

// checkInvariants checks what must hold for any input.
func checkInvariants(t *testing.T, res Result, got []Contact) {
	t.Helper()
	if res.Accepted != len(got) || res.ProblemCount != len(res.Problems) {
		t.Fatalf("Accepted %d for %d contacts, ProblemCount %d for %d problems", res.Accepted, len(got), res.ProblemCount, len(res.Problems))
	}
	if len(got) > 0 && res.ProblemCount == 0 && res.Rows != len(got) {
		t.Fatalf("Rows %d, %d contacts and no problem", res.Rows, len(got))
	}
	badRow := make(map[int]bool)
	known := map[string]bool{
		TypeCSVInvalid: true, TypeCSVNoPhoneColumn: true, TypeCSVEmpty: true,
		TypeTemplateVariableMissing: true, TypePhoneInvalid: true, TypePhoneMissing: true,
		TypePhoneDuplicate: true, TypeVariableEmpty: true, TypeTimezoneInvalid: true,
	}
	lastRow := 0
	for _, p := range res.Problems {
		if !known[p.Type] || p.Msg == "" || !utf8.ValidString(p.Msg) {
			t.Fatalf("bad problem %+v", p)
		}
		if s, ok := p.Input.(string); ok && (!utf8.ValidString(s) || len(s) > maxInputEcho+len("…")) {
			t.Fatalf("problem input %q not clipped UTF-8", s)
		}
		if p.Row != 0 && p.Row < lastRow {
			t.Fatalf("problem rows out of order: %d after %d", p.Row, lastRow)
		}
		lastRow = max(lastRow, p.Row)
		if p.Row > res.Rows+2 {
			t.Fatalf("problem row %d beyond the %d rows read", p.Row, res.Rows)
		}
		badRow[p.Row] = true
	}
	seen := make(map[string]bool)
	for i, c := range got {
		if c.Row < 2 || (i > 0 && c.Row <= got[i-1].Row) || badRow[c.Row] {
			t.Fatalf("contact %d has row %d", i, c.Row)
		}
		if !strings.HasPrefix(c.PhoneNumber, "+") || seen[c.PhoneNumber] {
			t.Fatalf("contact phone %q is not E.164 or repeated", c.PhoneNumber)
		}
		seen[c.PhoneNumber] = true
		if c.InitialContext == nil {
			t.Fatalf("contact %d has a nil InitialContext", i)
		}
		for k, v := range c.InitialContext {
			if k == "" || strings.EqualFold(k, PhoneColumn) || cellEncodingProblem(v) != "" || cellEncodingProblem(k) != "" {
				t.Fatalf("contact %d has context entry %q: %q", i, k, v)
			}
		}
		if c.Timezone != "" && !validTimezone(c.Timezone) {
			t.Fatalf("contact %d has timezone %q", i, c.Timezone)
		}
	}
}

func TestFuzzSeedsInvariants(t *testing.T) {
	// The seeds run as part of FuzzRead too; this also runs the default
	// options (default row limit, capped problems, a nil yield).
	for _, s := range fuzzSeeds() {
		res, got, err := readAll(t, s, Options{})
		if err != nil {
			t.Fatalf("Read error = %v, want nil", err)
		}
		if len(res.Problems) > DefaultMaxProblems {
			t.Fatalf("%d problems kept, want at most %d", len(res.Problems), DefaultMaxProblems)
		}
		res.ProblemCount = len(res.Problems)
		checkInvariants(t, res, got)
		if res2, err := Read(context.Background(), strings.NewReader(s), Options{}, nil); err != nil || res2.Accepted != len(got) {
			t.Fatalf("nil yield: Accepted %d, error %v, want %d, nil", res2.Accepted, err, len(got))
		}
	}
}
