package phone

import "testing"

// benchInputs are typical contacts-file numbers of several countries.
var benchInputs = []struct{ raw, region string }{
	{"+14155550132", ""},
	{"(415) 555-0132", "US"},
	{"020 7946 0958", "GB"},
	{"+44 7911 123456", ""},
	{"030 12345678", "DE"},
	{"+33 6 12 34 56 78", ""},
	{"+91 98765 43210", ""},
	{"0412 345 678", "AU"},
}

func BenchmarkNormalize(b *testing.B) {
	for i := 0; b.Loop(); i++ {
		in := benchInputs[i%len(benchInputs)]
		if _, err := Normalize(in.raw, in.region); err != nil {
			b.Fatalf("Normalize(%q) error = %v", in.raw, err)
		}
	}
}

func BenchmarkNormalizeLibrary(b *testing.B) {
	for i := 0; b.Loop(); i++ {
		in := benchInputs[i%len(benchInputs)]
		if _, err := libraryNormalize(in.raw, in.region); err != nil {
			b.Fatalf("libraryNormalize(%q) error = %v", in.raw, err)
		}
	}
}
