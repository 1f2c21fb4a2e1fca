package workflow

import (
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"
	_ "time/tzdata" // the zone tests do not depend on the host's zoneinfo (the binary embeds it in cmd)
)

func TestIsBuiltinZoned(t *testing.T) {
	for _, name := range []string{
		"current_weekday", "current_time_America/New_York", "current_weekday_America/New_York",
		"current_time_UTC", "current_time_Etc/GMT+5", "current_weekday_Asia/Kolkata",
		"current_time_America/Argentina/Buenos_Aires",
	} {
		if !IsBuiltin(name) {
			t.Fatalf("IsBuiltin(%q) = false, want true", name)
		}
	}
	for _, name := range []string{
		"current_time_", "current_weekday_", "current_time_Mars/Olympus", "current_time_Local",
		"current_time_America/New York", "current_time_../../etc/passwd", "current_time_/etc/localtime",
		"current_time_zone", "current_timezone", "Current_Weekday", "current_weekdays",
		"current_time_America/New_York ", "initial_context.current_weekday",
	} {
		if IsBuiltin(name) {
			t.Fatalf("IsBuiltin(%q) = true, want false", name)
		}
	}
}

func TestParseTemplateUnknownZone(t *testing.T) {
	tests := []struct {
		in     string
		reason string
		pos    int
	}{
		{"{{ current_time_Mars/Olympus }}", `unknown time zone "Mars/Olympus" in "current_time_Mars/Olympus"`, 1},
		{"Today is {{ current_weekday_Nowhere | soon }}", `unknown time zone "Nowhere" in "current_weekday_Nowhere"`, 10},
		{"{{ current_time_ }}", `unknown time zone "" in "current_time_"`, 1},
		{"{{ current_time_Local }}", `unknown time zone "Local" in "current_time_Local"`, 1},
		{"{{ current_time_america/new_york_city }}", `unknown time zone "america/new_york_city" in "current_time_america/new_york_city"`, 1},
		{"ok {{ current_time_UTC }} {{ initial_context.current_time_X/Y }}", `unknown time zone "X/Y" in "current_time_X/Y"`, 27},
		{"{{ current_time_Europe/./Paris }}", `unknown time zone "Europe/./Paris" in "current_time_Europe/./Paris"`, 1},
	}
	for _, tt := range tests {
		_, err := ParseTemplate(tt.in)
		var te *TemplateError
		if !errors.As(err, &te) || !errors.Is(err, ErrMalformedTemplate) {
			t.Fatalf("ParseTemplate(%q) error = %v, want a *TemplateError", tt.in, err)
		}
		if te.Reason != tt.reason || te.Pos != tt.pos {
			t.Fatalf("ParseTemplate(%q) error = %q at %d, want %q at %d", tt.in, te.Reason, te.Pos, tt.reason, tt.pos)
		}
	}
}

func TestValidateUnknownZone(t *testing.T) {
	d := MustParse(def(ns(
		`{"id":"s","type":"startCall","data":{"name":"S","prompt":"It is {{ current_time_Europe/Paris }}, {{ current_weekday }}.","greeting":"Hi, it is {{ current_weekday_Mars/Olympus }}"}}`,
		`{"id":"a","type":"agentNode","data":{"name":"A","prompt":"{{ nickname | friend }} {{ x | fallback }} {{ initial_context.y | fallback:z }}"}}`,
		`{"id":"e","type":"endCall","data":{"name":"E","prompt":"Bye at {{ current_time_Nowhere | soon }}"}}`), basicEdges...))
	want := []Error{
		nodeErr("s", "data.greeting", `Malformed template: unknown time zone "Mars/Olympus" in "current_weekday_Mars/Olympus" (at character 11)`),
		nodeErr("e", "data.prompt", `Malformed template: unknown time zone "Nowhere" in "current_time_Nowhere" (at character 8)`),
	}
	if got := Validate(d); !reflect.DeepEqual(got, want) {
		t.Fatalf("Validate = %s, want %s", errsString(got), errsString(want))
	}
}

func TestRenderTimeBuiltins(t *testing.T) {
	// Monday 03:30 UTC is Sunday evening in New York and Monday noon in Tokyo.
	now := time.Date(2026, 11, 23, 3, 30, 0, 0, time.UTC)
	summer := time.Date(2026, 7, 6, 16, 0, 0, 0, time.UTC)
	b := Builtins{CurrentTime: now}
	tests := []struct {
		in   string
		vars map[string]string
		b    Builtins
		want string
	}{
		{"{{ current_time_America/New_York }}", nil, b, "2026-11-22 22:30:00 EST"},
		{"{{ current_time_America/New_York }}", nil, Builtins{CurrentTime: summer}, "2026-07-06 12:00:00 EDT"},
		{"{{ current_weekday_America/New_York }}", nil, b, "Sunday"},
		{"{{ current_weekday_Asia/Tokyo }} {{ current_time_Asia/Tokyo }}", nil, b, "Monday 2026-11-23 12:30:00 JST"},
		{"{{ current_time_UTC }}", nil, b, "2026-11-23 03:30:00 UTC"},
		{"{{ current_time_Asia/Kolkata }}", nil, b, "2026-11-23 09:00:00 IST"},
		// current_weekday and current_time are in CurrentTime's own zone...
		{"{{ current_weekday }} {{ current_time }}", nil, b, "Monday 2026-11-23T03:30:00Z"},
		{"{{ current_weekday }}", nil, Builtins{CurrentTime: now.In(time.FixedZone("X", -5*3600))}, "Sunday"},
		// ...unless the template has a zoned built-in: then in the first one's zone.
		{"{{ current_weekday }} / {{ current_time_America/New_York }} / {{ current_time_Asia/Tokyo }}", nil, b,
			"Sunday / 2026-11-22 22:30:00 EST / 2026-11-23 12:30:00 JST"},
		{"{{ current_time }} {{ current_weekday_Asia/Kolkata }}", nil, b, "2026-11-23T09:00:00+05:30 Monday"},
		{"{{ initial_context.current_weekday_America/New_York }} {{ initial_context.current_weekday }}", nil, b, "Sunday Sunday"},
		// A context key of the same name is ignored, as for every built-in.
		{"{{ current_weekday }} {{ current_time_UTC }}", map[string]string{"current_weekday": "csv", "current_time_UTC": "csv"}, b,
			"Monday 2026-11-23 03:30:00 UTC"},
		// An unset time reads as missing, so defaults apply.
		{"{{ current_weekday }}|{{ current_time_UTC }}", nil, Builtins{}, "|"},
		{"{{ current_weekday | someday }} {{ current_time_Europe/Paris | fallback }} {{ current_weekday_UTC | fallback:today }}", nil, Builtins{},
			"someday Current_Time_Europe/Paris today"},
		{"{{ current_weekday | someday }}", nil, b, "Monday"},
	}
	for _, tt := range tests {
		got, err := Render(tt.in, tt.vars, tt.b)
		if err != nil {
			t.Fatalf("Render(%q) error = %v, want nil", tt.in, err)
		}
		if got != tt.want {
			t.Fatalf("Render(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestBuiltinsValueUnknownZone(t *testing.T) {
	// ParseTemplate never lets such a name through; the lookup itself says
	// it is no built-in, like IsBuiltin.
	if v, ok := (Builtins{CurrentTime: time.Now()}).value("current_time_Mars/Olympus", nil); ok || v != "" {
		t.Fatalf("value(unknown zone) = %q, %v; want \"\", false", v, ok)
	}
}

func TestLoadZoneConcurrent(t *testing.T) {
	names := []string{"Europe/Paris", "America/New_York", "Asia/Tokyo", "Nowhere/Else", "UTC"}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 50 {
				name := names[(i+j)%len(names)]
				loc, err := loadZone(name)
				if (err == nil) != (name != "Nowhere/Else") {
					t.Errorf("loadZone(%q) error = %v", name, err)
					return
				}
				if err == nil && loc.String() != name {
					t.Errorf("loadZone(%q) = %q", name, loc)
					return
				}
			}
		})
	}
	wg.Wait()
}
