package wire

import "testing"

func TestBoundsText(t *testing.T) {
	b := Bounds()
	for name, want := range map[string]Bound{
		"max_concurrency":                   {"1", "1000"},
		"rate_limit_per_second":             {"0.1", "1000"},
		"circuit_breaker.failure_threshold": {"0", "1"},
	} {
		if got := b[name]; got != want {
			t.Errorf("Bounds()[%q] = %+v, want %+v", name, got, want)
		}
	}
	if len(b) != 7 {
		t.Errorf("Bounds() has %d fields, want 7", len(b))
	}
	if got, want := b["retry_config.retry_delay_seconds"].Hint(), "30 to 86400"; got != want {
		t.Errorf("Hint = %q, want %q", got, want)
	}
}

func TestNeedsCallerID(t *testing.T) {
	for provider, want := range map[string]bool{"ari": false, "twilio": true, "telnyx": true, "": true} {
		if got := NeedsCallerID(provider); got != want {
			t.Errorf("NeedsCallerID(%q) = %v, want %v", provider, got, want)
		}
	}
}
