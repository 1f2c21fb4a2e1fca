package phone

import (
	"errors"
	"testing"
)

func TestNormalize(t *testing.T) {
	tests := []struct {
		name   string
		raw    string
		region string
		want   string
		err    error
	}{
		{"e164", "+14155550100", "", "+14155550100", nil},
		{"e164 ignores region", "+442079460958", "US", "+442079460958", nil},
		{"us national with punctuation", "(415) 555-0132", "US", "+14155550132", nil},
		{"region is case-insensitive and trimmed", "415.555.0132", " us ", "+14155550132", nil},
		{"surrounding space", "  +1 415 555 0132\t", "", "+14155550132", nil},
		{"us with leading country code", "1 415 555 0132", "US", "+14155550132", nil},
		{"us idd", "011 44 20 7946 0958", "US", "+442079460958", nil},
		{"gb national prefix", "020 7946 0958", "GB", "+442079460958", nil},
		{"gb mobile", "07911 123456", "GB", "+447911123456", nil},
		{"gb idd 00", "0049 30 123456", "GB", "+4930123456", nil},
		{"plus with national prefix", "+44 (0)20 7946 0958", "", "+442079460958", nil},
		{"de fixed", "030 12345678", "DE", "+493012345678", nil},
		{"fr mobile", "06 12 34 56 78", "FR", "+33612345678", nil},
		{"in mobile", "+91 98765 43210", "", "+919876543210", nil},
		{"au mobile", "0412 345 678", "AU", "+61412345678", nil},
		{"it leading zero kept", "+39 06 4991 0000", "", "+390649910000", nil},
		{"ar mobile transform", "011 15 2345 6789", "AR", "+5491123456789", nil},
		{"br carrier code", "0 21 11 2345 6789", "BR", "+551123456789", nil},
		{"non-geographic", "+800 1234 5678", "", "+80012345678", nil},
		{"canada via nanpa", "+1 613 555 0123", "", "+16135550123", nil},
		{"slash separator", "030/12345678", "DE", "+493012345678", nil},
		{"letters go through the library", "1-800-FLOWERS", "US", "+18003569377", nil},
		{"extension is dropped", "+1 415 555 0132 ext. 12", "", "+14155550132", nil},
		{"fullwidth digits", "+１ ４１５ ５５５ ０１３２", "", "+14155550132", nil},
		{"empty", "", "US", "", ErrEmpty},
		{"blank", " \t ", "US", "", ErrEmpty},
		{"no region and no plus", "4155550132", "", "", ErrInvalid},
		{"unknown region", "4155550132", "XX", "", ErrInvalid},
		{"unassigned range", "+1 555 555 0100", "", "", ErrInvalid},
		{"too short", "+1 415", "", "", ErrInvalid},
		{"too long", "+1 415 555 0132 0132 0132", "", "", ErrInvalid},
		{"unknown calling code", "+999 123 4567", "", "", ErrInvalid},
		{"not a number", "hello", "US", "", ErrInvalid},
		{"two digits", "12", "US", "", ErrInvalid},
		{"plus only", "+", "", "", ErrInvalid},
		{"over 250 characters", "+1 415 555 0132" + string(make([]byte, 250)), "", "", ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Normalize(tt.raw, tt.region)
			if !errors.Is(err, tt.err) || (err == nil) != (tt.err == nil) {
				t.Fatalf("Normalize(%q, %q) error = %v, want %v", tt.raw, tt.region, err, tt.err)
			}
			if got != tt.want {
				t.Fatalf("Normalize(%q, %q) = %q, want %q", tt.raw, tt.region, got, tt.want)
			}
		})
	}
}

func TestValidRegion(t *testing.T) {
	tests := []struct {
		code string
		want bool
	}{
		{"US", true},
		{"gb", true},
		{" de ", true},
		{"", false},
		{"XX", false},
		{"USA", false},
		{"001", false},
		{"U", false},
	}
	for _, tt := range tests {
		if got := ValidRegion(tt.code); got != tt.want {
			t.Fatalf("ValidRegion(%q) = %v, want %v", tt.code, got, tt.want)
		}
	}
}
