package phone

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"testing"
)

func TestMask(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"+14155550100", "+*******0100"},
		{"+442079460958", "+********0958"},
		{"14155550100", "*******0100"},
		{"+1 415 555 0100", "+* *** *** 0100"},
		{"0100", "0100"},
		{"+100", "+100"},
		{"", ""},
	} {
		if got := Mask(tc.in); got != tc.want {
			t.Errorf("Mask(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestMaskText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"The 'To' number +14155550100 is not a valid phone number.", "The 'To' number +*******0100 is not a valid phone number."},
		{"from +12025550199 to +442079460958", "from +*******0199 to +********0958"},
		{`{"to":"14155550100"}`, `{"to":"*******0100"}`},
		{"tel:+61812345678;x", "tel:+*******5678;x"},
		{"+123456789012345678", "+**************5678"}, // longer than E.164: still masked
		{"+1234567", "+1234567"}, // 7 digits: not a number to hide
		{"campaign 7 attempt 123456789", "campaign 7 attempt 123456789"},
		{"CA0123456789012345abcdef", "CA0123456789012345abcdef"},                         // an identifier
		{"0f8fad5b-d9cb-469f-a165-708677289501", "0f8fad5b-d9cb-469f-a165-708677289501"}, // a UUID group
		{"1700000000.123", "1700000000.123"},
		{"no digits at all", "no digits at all"},
		{"", ""},
	} {
		if got := MaskText(tc.in); got != tc.want {
			t.Errorf("MaskText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// fullNumber is what no log line may hold: an E.164 number in full.
var fullNumber = regexp.MustCompile(`\+\d{8,15}`)

func TestMaskingHandler(t *testing.T) {
	for _, format := range []string{"json", "text"} {
		t.Run(format, func(t *testing.T) {
			var buf bytes.Buffer
			var h slog.Handler = slog.NewTextHandler(&buf, nil)
			if format == "json" {
				h = slog.NewJSONHandler(&buf, nil)
			}
			log := slog.New(NewMaskingHandler(h)).With(slog.String("callee", "+14155550100"))
			log.Info("dial +12025550199",
				slog.String("error", fmt.Errorf("place call: %w", errors.New("http 400: number +442079460958 is invalid")).Error()),
				slog.Any("err", errors.New("to +61812345678")),
				slog.Group("g", slog.String("to", "+33612345678")),
				slog.Any("valuer", maskValuer("+4915112345678")),
				slog.Int64("campaign_id", 123456789012),
				slog.String("route", "/api/v1/campaign/:campaign_id"))
			out := buf.String()
			if m := fullNumber.FindString(out); m != "" {
				t.Errorf("log line holds %s:\n%s", m, out)
			}
			for _, want := range []string{"0100", "0199", "0958", "5678", "123456789012", "/api/v1/campaign/:campaign_id"} {
				if !strings.Contains(out, want) {
					t.Errorf("log line lacks %q:\n%s", want, out)
				}
			}
		})
	}
}

type maskValuer string

func (v maskValuer) LogValue() slog.Value { return slog.StringValue("number " + string(v)) }

func BenchmarkMaskingHandlerClean(b *testing.B) {
	log := slog.New(NewMaskingHandler(slog.NewJSONHandler(discard{}, nil)))
	for b.Loop() {
		log.Info("request", slog.String("method", "GET"), slog.String("route", "/api/v1/campaign/:campaign_id"),
			slog.Int("status", 200), slog.Float64("duration_ms", 1.234), slog.Int64("org_id", 1))
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
