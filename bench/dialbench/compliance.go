package main

import (
	"encoding/json"
	"fmt"

	"github.com/outdial/outdial/bench/internal/realbin"
)

// firstEvidence returns what the guard rails recorded for the campaign's
// first call (API.md 12.5): the suppression check, the zones, the calling
// hours, the policy version.
func firstEvidence(c *realbin.Client, campaign int64) string {
	page := c.Get(fmt.Sprintf("/api/v1/campaign/%d/calls?limit=1", campaign))
	calls, _ := page["calls"].([]any)
	if len(calls) == 0 {
		c.Fail("campaign %d has no calls", campaign)
	}
	call, _ := calls[0].(map[string]any)
	ev, _ := call["compliance"].(map[string]any)
	if ev == nil {
		return "none"
	}
	return fmt.Sprintf("%v: suppression %v, timezones %v (%v), local_time %v, calling_hours %v, attempt_cap %v, policy_version %v",
		call["phone_number"], ev["suppression"], ev["timezones"], ev["timezone_source"], ev["local_time"],
		ev["calling_hours"], ev["attempt_cap"], ev["policy_version"])
}

// policyLine is the policy the service answered (nil: the defaults, left
// untouched) as JSON.
func policyLine(p map[string]any) string {
	if p == nil {
		return "the organization's defaults"
	}
	b, _ := json.Marshal(map[string]any{"calling_hours": p["calling_hours"], "attempt_cap": p["attempt_cap"], "version": p["version"]})
	return string(b)
}
