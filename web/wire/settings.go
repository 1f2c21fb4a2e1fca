package wire

import (
	"strconv"

	"github.com/outdial/outdial/dialer/carrier"
)

// A campaign's defaults and bounds (API.md 4.2, docs/api.md 4.2): the API
// applies and enforces them (web's campaign readers), the console shows
// them in its forms (a new campaign's values, the number fields' min and
// max). Changing one here changes both.

// DefaultMaxConcurrency is max_concurrency when a create leaves it out.
const DefaultMaxConcurrency = 10

// DefaultRetryConfig is retry_config's value when a create leaves it (or
// one of its fields) out.
var DefaultRetryConfig = RetryConfig{Enabled: true, MaxRetries: 1, RetryDelaySeconds: 120,
	RetryOnBusy: true, RetryOnNoAnswer: true, RetryOnVoicemail: false}

// DefaultCircuitBreaker is circuit_breaker's value when a create leaves it
// (or one of its fields) out.
var DefaultCircuitBreaker = CircuitBreaker{Enabled: false, FailureThreshold: 0.5, WindowSeconds: 120, MinCallsInWindow: 5}

// MaxSlots is the most slots a schedule_config takes (at least 1).
const MaxSlots = 50

// IntRange is the inclusive range an integer field takes.
type IntRange struct{ Min, Max int64 }

// FloatRange is the inclusive range a number field takes.
type FloatRange struct{ Min, Max float64 }

// The ranges of a campaign's number fields, by the API's name of each.
var (
	MaxConcurrencyRange   = IntRange{1, 1000}     // max_concurrency
	RateLimitRange        = FloatRange{0.1, 1000} // rate_limit_per_second
	MaxRetriesRange       = IntRange{0, 10}       // retry_config.max_retries
	RetryDelayRange       = IntRange{30, 86400}   // retry_config.retry_delay_seconds
	FailureThresholdRange = FloatRange{0, 1}      // circuit_breaker.failure_threshold
	BreakerWindowRange    = IntRange{10, 3600}    // circuit_breaker.window_seconds
	MinCallsInWindowRange = IntRange{1, 1000}     // circuit_breaker.min_calls_in_window
)

// Bound is a range as text, for a form's number input: its min and max
// attributes.
type Bound struct{ Min, Max string }

// Hint says the range in words ("1 to 1000").
func (b Bound) Hint() string { return b.Min + " to " + b.Max }

// Text is r as a Bound.
func (r IntRange) Text() Bound {
	return Bound{strconv.FormatInt(r.Min, 10), strconv.FormatInt(r.Max, 10)}
}

// Text is r as a Bound.
func (r FloatRange) Text() Bound {
	return Bound{strconv.FormatFloat(r.Min, 'f', -1, 64), strconv.FormatFloat(r.Max, 'f', -1, 64)}
}

// Bounds maps each bounded number field of a campaign, by its API name
// with a dot between an object and its field ("retry_config.max_retries"),
// to its range as text.
func Bounds() map[string]Bound {
	return map[string]Bound{
		"max_concurrency":                     MaxConcurrencyRange.Text(),
		"rate_limit_per_second":               RateLimitRange.Text(),
		"retry_config.max_retries":            MaxRetriesRange.Text(),
		"retry_config.retry_delay_seconds":    RetryDelayRange.Text(),
		"circuit_breaker.failure_threshold":   FailureThresholdRange.Text(),
		"circuit_breaker.window_seconds":      BreakerWindowRange.Text(),
		"circuit_breaker.min_calls_in_window": MinCallsInWindowRange.Text(),
	}
}

// NeedsCallerID reports whether a campaign of a configuration of provider
// needs an active phone number to call from before it can start: every
// provider but ARI, where Asterisk's dial plan sets the caller (API.md
// 2.6). The API refuses such a start with 409; the console warns before.
func NeedsCallerID(provider string) bool { return provider != carrier.ARI }
