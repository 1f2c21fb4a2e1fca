package contacts

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// readAll reads input and returns the result and every yielded contact.
func readAll(t testing.TB, input string, opts Options) (Result, []Contact, error) {
	t.Helper()
	var got []Contact
	res, err := Read(context.Background(), strings.NewReader(input), opts, func(c Contact) error {
		got = append(got, c)
		return nil
	})
	return res, got, err
}

// ctx builds an InitialContext from key, value pairs.
func ctx(kv ...string) map[string]string {
	m := make(map[string]string, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

const (
	msgInvalidNoCountry = "phone_number is not a valid phone number; a number without a leading + needs the campaign's default_country"
	msgInvalidUS        = "phone_number is not a valid phone number (default country US)"
)

func TestReadRules(t *testing.T) {
	tests := []struct {
		name     string
		input    string
		opts     Options
		contacts []Contact
		problems []Problem
	}{
		{
			name:     "basic",
			input:    "phone_number,first_name\n+14155550100,Ada\n",
			contacts: []Contact{{Row: 2, PhoneNumber: "+14155550100", InitialContext: ctx("first_name", "Ada")}},
		},
		{
			name:     "utf-8 bom and crlf",
			input:    "\xEF\xBB\xBFphone_number,name\r\n+442079460958,Bob\r\n",
			contacts: []Contact{{Row: 2, PhoneNumber: "+442079460958", InitialContext: ctx("name", "Bob")}},
		},
		{
			name:  "header names trimmed, phone_number case-insensitive",
			input: " Phone_Number , first name ,City\n+14155550100,Ada,Paris\n",
			contacts: []Contact{{Row: 2, PhoneNumber: "+14155550100",
				InitialContext: ctx("first name", "Ada", "City", "Paris")}},
		},
		{
			name:  "rfc 4180 quoting kept verbatim",
			input: "name,phone_number\n\"Lovelace, \"\"Ada\"\"\n(Countess)\",\" +1 415 555 0100 \"\n",
			contacts: []Contact{{Row: 2, PhoneNumber: "+14155550100",
				InitialContext: ctx("name", "Lovelace, \"Ada\"\n(Countess)")}},
		},
		{
			name:     "cells are not trimmed",
			input:    "phone_number,name\n+14155550100,  Ada  \n",
			contacts: []Contact{{Row: 2, PhoneNumber: "+14155550100", InitialContext: ctx("name", "  Ada  ")}},
		},
		{
			name:  "default country",
			input: "phone_number\n(415) 555-0100\n020 7946 0958\n",
			opts:  Options{DefaultCountry: "us"},
			contacts: []Contact{
				{Row: 2, PhoneNumber: "+14155550100", InitialContext: ctx()},
			},
			problems: []Problem{{Row: 3, Type: TypePhoneInvalid, Column: "phone_number", Input: "020 7946 0958", Msg: msgInvalidUS}},
		},
		{
			name:  "blank lines are not rows",
			input: "phone_number\n\n+14155550100\n\n\n+14155550101\n",
			contacts: []Contact{
				{Row: 2, PhoneNumber: "+14155550100", InitialContext: ctx()},
				{Row: 3, PhoneNumber: "+14155550101", InitialContext: ctx()},
			},
		},
		{
			name:     "no phone column",
			input:    "phone,name\n+14155550100,Ada\n",
			problems: []Problem{{Type: TypeCSVNoPhoneColumn, Input: []string{"phone", "name"}, Msg: "the header has no phone_number column"}},
		},
		{
			name:     "empty file",
			input:    "",
			problems: []Problem{{Type: TypeCSVEmpty, Msg: "the file is empty"}},
		},
		{
			name:     "bom only",
			input:    "\xEF\xBB\xBF",
			problems: []Problem{{Type: TypeCSVEmpty, Msg: "the file is empty"}},
		},
		{
			name:     "blank lines only",
			input:    "\n\r\n\n",
			problems: []Problem{{Type: TypeCSVEmpty, Msg: "the file is empty"}},
		},
		{
			name:     "header only",
			input:    "phone_number,name\r\n",
			problems: []Problem{{Type: TypeCSVEmpty, Msg: "the file has a header but no contact rows"}},
		},
		{
			name:  "phone missing",
			input: "phone_number,name\n,Ada\n   ,Bob\n",
			problems: []Problem{
				{Row: 2, Type: TypePhoneMissing, Column: "phone_number", Input: "", Msg: "phone_number is empty"},
				{Row: 3, Type: TypePhoneMissing, Column: "phone_number", Input: "   ", Msg: "phone_number is empty"},
			},
		},
		{
			name:  "phone invalid",
			input: "phone_number\n4155550100\n+1 555 555 0100\nhello\n",
			problems: []Problem{
				{Row: 2, Type: TypePhoneInvalid, Column: "phone_number", Input: "4155550100", Msg: msgInvalidNoCountry},
				{Row: 3, Type: TypePhoneInvalid, Column: "phone_number", Input: "+1 555 555 0100", Msg: "phone_number is not a valid phone number"},
				{Row: 4, Type: TypePhoneInvalid, Column: "phone_number", Input: "hello", Msg: msgInvalidNoCountry},
			},
		},
		{
			name:  "duplicate after normalisation keeps the first",
			input: "phone_number,n\n+1 415 555 0100,a\n+14155550101,b\n(415) 555-0100,c\n001 415 555 0100,d\n",
			opts:  Options{DefaultCountry: "US"},
			contacts: []Contact{
				{Row: 2, PhoneNumber: "+14155550100", InitialContext: ctx("n", "a")},
				{Row: 3, PhoneNumber: "+14155550101", InitialContext: ctx("n", "b")},
			},
			problems: []Problem{
				{Row: 4, Type: TypePhoneDuplicate, Column: "phone_number", Input: "(415) 555-0100", Msg: "phone number +14155550100 already appears in an earlier row"},
				{Row: 5, Type: TypePhoneInvalid, Column: "phone_number", Input: "001 415 555 0100", Msg: msgInvalidUS},
			},
		},
		{
			name:  "a rejected row's number still counts as seen",
			input: "phone_number,name\n+14155550100,\n+14155550100,Ada\n",
			opts:  Options{RequiredVariables: []string{"name"}},
			problems: []Problem{
				{Row: 2, Type: TypeVariableEmpty, Column: "name", Input: "", Msg: "column name is empty but the workflow uses {{name}}"},
				{Row: 3, Type: TypePhoneDuplicate, Column: "phone_number", Input: "+14155550100", Msg: "phone number +14155550100 already appears in an earlier row"},
			},
		},
		{
			name:  "ragged rows are csv_invalid and skipped",
			input: "phone_number,a,b\n+14155550100,1,2\n+14155550101,1\n+14155550102,1,2,3\n+14155550103,1,2\n",
			contacts: []Contact{
				{Row: 2, PhoneNumber: "+14155550100", InitialContext: ctx("a", "1", "b", "2")},
				{Row: 5, PhoneNumber: "+14155550103", InitialContext: ctx("a", "1", "b", "2")},
			},
			problems: []Problem{
				{Row: 3, Type: TypeCSVInvalid, Input: 2, Msg: "the row has 2 fields, the header has 3"},
				{Row: 4, Type: TypeCSVInvalid, Input: 4, Msg: "the row has 4 fields, the header has 3"},
			},
		},
		{
			name:     "bare quote stops reading",
			input:    "phone_number,name\n+14155550100,Ada\n+14155550101,Bo\"b\n+14155550102,Cy\n",
			contacts: []Contact{{Row: 2, PhoneNumber: "+14155550100", InitialContext: ctx("name", "Ada")}},
			problems: []Problem{{Row: 3, Type: TypeCSVInvalid,
				Msg: "CSV syntax error on line 3, column 16: bare \" in non-quoted-field; reading stopped here"}},
		},
		{
			name:     "unterminated quote stops reading",
			input:    "phone_number,name\n+14155550100,Ada\n+14155550101,\"Bob\n+14155550102,Cy\n",
			contacts: []Contact{{Row: 2, PhoneNumber: "+14155550100", InitialContext: ctx("name", "Ada")}},
			problems: []Problem{{Row: 3, Type: TypeCSVInvalid,
				Msg: "CSV syntax error on line 4, column 17 (the row starts on line 3): extraneous or missing \" in quoted-field; reading stopped here"}},
		},
		{
			name:  "invalid utf-8 and nul bytes reject the row",
			input: "phone_number,name\n+14155550100,Andr\xE9\n+14155550101,A\x00b\n+14155550102,Zoë\n",
			contacts: []Contact{
				{Row: 4, PhoneNumber: "+14155550102", InitialContext: ctx("name", "Zoë")},
			},
			problems: []Problem{
				{Row: 2, Type: TypeCSVInvalid, Column: "name", Msg: "the row is not valid UTF-8 (column 2); the file must be UTF-8 text"},
				{Row: 3, Type: TypeCSVInvalid, Column: "name", Msg: "the row contains a NUL byte (column 2); the file must be UTF-8 text"},
			},
		},
		{
			name:     "invalid utf-8 header",
			input:    "phone_number,na\xFFme\n+14155550100,Ada\n",
			problems: []Problem{{Row: 1, Type: TypeCSVInvalid, Msg: "the header is not valid UTF-8 (column 2)"}},
		},
		{
			name:     "utf-16 file",
			input:    "\xFF\xFEp\x00h\x00",
			problems: []Problem{{Type: TypeCSVInvalid, Msg: "the file is UTF-16 text; save it as UTF-8 (CSV UTF-8)"}},
		},
		{
			name:  "timezone column",
			input: "phone_number,Timezone\n+14155550100,Europe/Paris\n+14155550101,\n+14155550102, America/New_York \n+14155550103,Mars/Olympus\n+14155550104,Local\n",
			contacts: []Contact{
				{Row: 2, PhoneNumber: "+14155550100", Timezone: "Europe/Paris", InitialContext: ctx("Timezone", "Europe/Paris")},
				{Row: 3, PhoneNumber: "+14155550101", InitialContext: ctx("Timezone", "")},
				{Row: 4, PhoneNumber: "+14155550102", Timezone: "America/New_York", InitialContext: ctx("Timezone", " America/New_York ")},
			},
			problems: []Problem{
				{Row: 5, Type: TypeTimezoneInvalid, Column: "Timezone", Input: "Mars/Olympus", Msg: `"Mars/Olympus" is not an IANA time zone name such as "Europe/Paris"`},
				{Row: 6, Type: TypeTimezoneInvalid, Column: "Timezone", Input: "Local", Msg: `"Local" is not an IANA time zone name such as "Europe/Paris"`},
			},
		},
		{
			name:  "required variables",
			input: "phone_number,first_name,city,notes\n+14155550100,Ada,Paris,\n+14155550101, ,Paris,x\n",
			opts:  Options{RequiredVariables: []string{"first_name", "city", "company", "phone_number", "first_name"}},
			contacts: []Contact{
				{Row: 2, PhoneNumber: "+14155550100", InitialContext: ctx("first_name", "Ada", "city", "Paris", "notes", "")},
			},
			problems: []Problem{
				{Type: TypeTemplateVariableMissing, Column: "company", Input: "company", Msg: "the workflow uses {{company}} but the file has no company column"},
				{Row: 3, Type: TypeVariableEmpty, Column: "first_name", Input: " ", Msg: "column first_name is empty but the workflow uses {{first_name}}"},
			},
		},
		{
			name:  "all problems of a row, in column order",
			input: "phone_number,timezone,name\nnope,Nowhere,\n",
			opts:  Options{RequiredVariables: []string{"name"}},
			problems: []Problem{
				{Row: 2, Type: TypePhoneInvalid, Column: "phone_number", Input: "nope", Msg: msgInvalidNoCountry},
				{Row: 2, Type: TypeTimezoneInvalid, Column: "timezone", Input: "Nowhere", Msg: `"Nowhere" is not an IANA time zone name such as "Europe/Paris"`},
				{Row: 2, Type: TypeVariableEmpty, Column: "name", Input: "", Msg: "column name is empty but the workflow uses {{name}}"},
			},
		},
		{
			name:     "repeated column name",
			input:    "phone_number,name, name\n+14155550100,a,b\n",
			problems: []Problem{{Row: 1, Type: TypeCSVInvalid, Column: "name", Input: "name", Msg: `column name "name" appears twice in the header (columns 2 and 3)`}},
		},
		{
			name:     "two phone columns",
			input:    "phone_number,PHONE_NUMBER\n+14155550100,+14155550101\n",
			problems: []Problem{{Row: 1, Type: TypeCSVInvalid, Column: "PHONE_NUMBER", Input: "PHONE_NUMBER", Msg: "the header has more than one phone_number column (columns 1 and 2)"}},
		},
		{
			name:     "blank column names are ignored",
			input:    "phone_number,,name,\n+14155550100,x,Ada,\n",
			contacts: []Contact{{Row: 2, PhoneNumber: "+14155550100", InitialContext: ctx("name", "Ada")}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, workers := range []int{1, 3} {
				opts := tt.opts
				opts.Workers, opts.batchSize = workers, 2
				res, got, err := readAll(t, tt.input, opts)
				if err != nil {
					t.Fatalf("Read error = %v, want nil", err)
				}
				if !reflect.DeepEqual(got, tt.contacts) {
					t.Fatalf("contacts (workers %d):\n got %+v\nwant %+v", workers, got, tt.contacts)
				}
				if !reflect.DeepEqual(res.Problems, tt.problems) {
					t.Fatalf("problems (workers %d):\n got %#v\nwant %#v", workers, res.Problems, tt.problems)
				}
				if res.ProblemCount != len(tt.problems) {
					t.Fatalf("ProblemCount = %d, want %d", res.ProblemCount, len(tt.problems))
				}
				if res.Accepted != len(tt.contacts) {
					t.Fatalf("Accepted = %d, want %d", res.Accepted, len(tt.contacts))
				}
			}
		})
	}
}

func TestReadResultCounts(t *testing.T) {
	input := "phone_number,name\n+14155550100,a\nbad,b\nworse,c\n+14155550100,d\n"
	res, got, err := readAll(t, input, Options{MaxProblems: 2})
	if err != nil {
		t.Fatalf("Read error = %v, want nil", err)
	}
	if len(got) != 1 || res.Accepted != 1 || res.Rows != 4 {
		t.Fatalf("contacts %d, Accepted %d, Rows %d, want 1, 1, 4", len(got), res.Accepted, res.Rows)
	}
	if len(res.Problems) != 2 || res.ProblemCount != 3 || res.Omitted() != 1 {
		t.Fatalf("problems kept %d, counted %d, omitted %d, want 2, 3, 1", len(res.Problems), res.ProblemCount, res.Omitted())
	}
	if res.Problems[0].Row != 3 || res.Problems[1].Row != 4 {
		t.Fatalf("kept rows %d, %d, want the first two (3, 4)", res.Problems[0].Row, res.Problems[1].Row)
	}
	if want := []string{"phone_number", "name"}; !reflect.DeepEqual(res.Columns, want) {
		t.Fatalf("Columns = %q, want %q", res.Columns, want)
	}

	res, _, err = readAll(t, input, Options{MaxProblems: -1})
	if err != nil || len(res.Problems) != 3 {
		t.Fatalf("unlimited: %d problems, error %v, want 3, nil", len(res.Problems), err)
	}
}

func TestReadLargeCells(t *testing.T) {
	big := strings.Repeat("x", 1000_000)
	input := "phone_number,notes\n+14155550100,\"" + big + "\"\n+14155550101,small\n"
	res, got, err := readAll(t, input, Options{})
	if err != nil {
		t.Fatalf("Read error = %v, want nil", err)
	}
	if len(got) != 2 || got[0].InitialContext["notes"] != big || res.ProblemCount != 0 {
		t.Fatalf("got %d contacts, %d problems, want 2 with the 1 MB cell intact, 0", len(got), res.ProblemCount)
	}

	input = "phone_number,notes\n+14155550100,a\n+14155550101,\"" + strings.Repeat("y\n", 600) + "\"\n+14155550102,b\n"
	res, got, err = readAll(t, input, Options{MaxRowBytes: 1000})
	if err != nil {
		t.Fatalf("Read error = %v, want nil", err)
	}
	want := []Problem{{Row: 3, Type: TypeCSVInvalid, Input: 1000, Msg: "the row is larger than 1000 bytes; reading stopped here"}}
	if len(got) != 1 || !reflect.DeepEqual(res.Problems, want) {
		t.Fatalf("got %d contacts, problems %+v, want 1, %+v", len(got), res.Problems, want)
	}
}

func TestReadInputEchoIsClipped(t *testing.T) {
	long := strings.Repeat("é", 300) // 600 bytes
	res, _, err := readAll(t, "phone_number\n"+long+"\n", Options{})
	if err != nil || len(res.Problems) != 1 {
		t.Fatalf("problems %+v, error %v, want one", res.Problems, err)
	}
	in, _ := res.Problems[0].Input.(string)
	if want := strings.Repeat("é", 128) + "…"; in != want {
		t.Fatalf("Input = %q (%d bytes), want %d bytes", in, len(in), len(want))
	}
}

func TestReadInvalidOptions(t *testing.T) {
	_, err := Read(context.Background(), strings.NewReader("phone_number\n"), Options{DefaultCountry: "XX"}, nil)
	if !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("Read error = %v, want ErrInvalidOptions", err)
	}
}

func TestReadNilYield(t *testing.T) {
	res, err := Read(context.Background(), strings.NewReader("phone_number\n+14155550100\n+14155550100\n"), Options{}, nil)
	if err != nil || res.Accepted != 1 || res.ProblemCount != 1 {
		t.Fatalf("Accepted %d, problems %d, error %v, want 1, 1, nil", res.Accepted, res.ProblemCount, err)
	}
}
