package web

import (
	"fmt"
	"strings"
	"time"

	"github.com/outdial/outdial/dialer"
	"github.com/outdial/outdial/dialer/phone"
	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/web/wire"
)

// This file reads the nested campaign settings of create and PATCH bodies.
// Each reader starts from base (defaults on create, the stored value on
// PATCH) and overrides the fields sent.

// The defaults and ranges are wire's (settings.go), which the console
// shows in its forms.

func setBool(f fields, name string, dst *bool) {
	if v, ok := f.obj[name]; ok && v != nil {
		if b, _, ok := f.Bool(name, false); ok {
			*dst = b
		}
	}
}

func setInt(f fields, name string, r wire.IntRange, dst *int) {
	if v, ok := f.obj[name]; ok && v != nil {
		if n, _, ok := f.Int(name, false, &r.Min, &r.Max); ok {
			*dst = int(n)
		}
	}
}

func setFloat(f fields, name string, r wire.FloatRange, dst *float64) {
	if v, ok := f.obj[name]; ok && v != nil {
		if n, _, ok := f.Float(name, false, &r.Min, &r.Max); ok {
			*dst = n
		}
	}
}

func readRetryConfig(f fields, base store.RetryConfig) store.RetryConfig {
	rc := base
	setBool(f, "enabled", &rc.Enabled)
	setInt(f, "max_retries", wire.MaxRetriesRange, &rc.MaxRetries)
	setInt(f, "retry_delay_seconds", wire.RetryDelayRange, &rc.RetryDelaySeconds)
	setBool(f, "retry_on_busy", &rc.RetryOnBusy)
	setBool(f, "retry_on_no_answer", &rc.RetryOnNoAnswer)
	setBool(f, "retry_on_voicemail", &rc.RetryOnVoicemail)
	return rc
}

func readCircuitBreaker(f fields, base store.CircuitBreaker) store.CircuitBreaker {
	cb := base
	setBool(f, "enabled", &cb.Enabled)
	setFloat(f, "failure_threshold", wire.FailureThresholdRange, &cb.FailureThreshold)
	setInt(f, "window_seconds", wire.BreakerWindowRange, &cb.WindowSeconds)
	setInt(f, "min_calls_in_window", wire.MinCallsInWindowRange, &cb.MinCallsInWindow)
	return cb
}

// readSchedule reads a schedule_config object: timezone (IANA, required),
// slots (1..wire.MaxSlots) of {day_of_week 0..6, start_time, end_time "HH:MM", end may
// be "24:00", start < end}, enabled (default true).
func readSchedule(f fields) *store.ScheduleConfig {
	sc := &store.ScheduleConfig{Enabled: true}
	setBool(f, "enabled", &sc.Enabled)
	if tz, present, ok := f.String("timezone", true, false, 1, 64); present && ok {
		if _, err := time.LoadLocation(tz); err != nil || tz == "Local" {
			f.p.Add(at(f.loc, "timezone"), "value_error", "Value error, timezone must be an IANA time zone name such as Europe/Paris", tz, nil)
		}
		sc.Timezone = tz
	}
	v, has := f.obj["slots"]
	if !has {
		f.missing("slots")
		return sc
	}
	list, isList := v.([]any)
	if !isList {
		f.p.Add(at(f.loc, "slots"), "list_type", "Input should be a valid list", v, nil)
		return sc
	}
	if len(list) < 1 || len(list) > wire.MaxSlots {
		typ, msg, ctx := "too_short", "List should have at least 1 item after validation, not 0", map[string]any{"field_type": "List", "min_length": 1, "actual_length": len(list)}
		if len(list) > wire.MaxSlots {
			typ, msg, ctx = "too_long", fmt.Sprintf("List should have at most %d items after validation, not %d", wire.MaxSlots, len(list)), map[string]any{"field_type": "List", "max_length": wire.MaxSlots, "actual_length": len(list)}
		}
		f.p.Add(at(f.loc, "slots"), typ, msg, v, ctx)
		return sc
	}
	for i, item := range list {
		loc := at(f.loc, "slots", i)
		m, isObj := item.(map[string]any)
		if !isObj {
			f.p.Add(loc, "model_type", "Input should be a valid dictionary or object to extract fields from", item, nil)
			continue
		}
		sf := fields{obj: m, loc: loc, p: f.p}
		day, _, _ := sf.Int("day_of_week", true, ptr[int64](0), ptr[int64](6))
		start, _, okS := sf.String("start_time", true, false, 0, 0)
		end, _, okE := sf.String("end_time", true, false, 0, 0)
		var sMin, eMin int
		if okS {
			sMin, okS = readClock(sf, "start_time", start, false)
		}
		if okE {
			eMin, okE = readClock(sf, "end_time", end, true)
		}
		if okS && okE && sMin >= eMin {
			sf.p.Add(loc, "value_error", "Value error, start_time must be before end_time", item, nil)
		}
		sc.Slots = append(sc.Slots, store.Slot{DayOfWeek: int(day), StartTime: start, EndTime: end})
	}
	return sc
}

// readClock checks a slot time: exactly two digits, a colon, two digits
// (dialer.ParseClock alone would also take "+9:00" or "-0:00"), 00:00..23:59,
// or 24:00 for an end. It returns the minutes since midnight.
func readClock(f fields, name, v string, end bool) (int, bool) {
	n, err := dialer.ParseClock(v, end)
	if err != nil || len(v) != 5 || !isDigits(v[:2]) || !isDigits(v[3:]) {
		last := "23:59"
		if end {
			last = "24:00"
		}
		f.p.Add(at(f.loc, name), "value_error", fmt.Sprintf("Value error, %s must be HH:MM between 00:00 and %s, got %q", name, last, v), v, nil)
		return 0, false
	}
	return n, true
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// readSettings reads the settings PATCH and create share into s, except
// name (required on create, optional on PATCH: each reads it itself); what
// is absent keeps its value in s (the defaults on create, the stored value
// on PATCH).
func readSettings(f fields, s *store.Settings) {
	if sub, present, ok := f.Object("retry_config", false, true); present && ok {
		s.RetryConfig = readRetryConfig(sub, s.RetryConfig)
	}
	setInt(f, "max_concurrency", wire.MaxConcurrencyRange, &s.MaxConcurrency)
	setFloat(f, "rate_limit_per_second", wire.RateLimitRange, &s.RateLimitPerSecond)
	if v, sent := f.obj["schedule_config"]; sent {
		if v == nil {
			s.ScheduleConfig = nil
		} else if sub, present, ok := f.Object("schedule_config", false, true); present && ok {
			s.ScheduleConfig = readSchedule(sub)
		}
	}
	if sub, present, ok := f.Object("circuit_breaker", false, true); present && ok {
		s.CircuitBreaker = readCircuitBreaker(sub, s.CircuitBreaker)
	}
}

// readCountry reads an optional ISO alpha-2 default_country.
func readCountry(f fields) *string {
	c, present, ok := f.String("default_country", false, true, 0, 0)
	if !present || !ok || c == "" {
		return nil
	}
	if !phone.ValidRegion(c) {
		f.p.Add(at(f.loc, "default_country"), "value_error", "Value error, default_country must be an ISO 3166 alpha-2 code with a numbering plan, e.g. US", c, nil)
		return nil
	}
	up := strings.ToUpper(strings.TrimSpace(c))
	return &up
}
