package main

import (
	"encoding/json"
	"fmt"
	"log"
	"time"

	"github.com/outdial/outdial/bench/internal/realbin"
)

// importSuppressions puts n generated numbers (realbin.Number, never a 555
// number like the campaign's) on the organization's suppression list: a
// CSV uploaded through a presigned URL, then POST /api/v1/suppressions
// with its source_id. It returns what it did and took, for the report.
func importSuppressions(c *realbin.Client, cl *realbin.Cluster, n int) string {
	t := time.Now()
	csv := realbin.NumbersCSV(n, 0)
	gen := time.Since(t)
	t = time.Now()
	key := c.UploadCSV("suppressions.csv", csv)
	up := time.Since(t)
	log.Printf("importing %d suppression numbers (%.1f MB CSV)", n, float64(len(csv))/1e6)
	rss := cl.SampleRSS(20 * time.Millisecond)
	rss0 := cl.StatusKB("VmRSS")
	t = time.Now()
	res := c.ImportSuppressions(key)
	took := time.Since(t)
	peak := realbin.EndRSS(rss)
	if res.Added != n {
		c.Fail("suppression import: %s; want %d added", res, n)
	}
	return fmt.Sprintf("%d numbers on the suppression list (%.1f MB CSV generated in %.2f s, uploaded in %.2f s); "+
		"POST /api/v1/suppressions answered in %.2f s: %s; serve RSS %s before, peak %s during it",
		n, float64(len(csv))/1e6, gen.Seconds(), up.Seconds(), took.Seconds(), res,
		cl.PerNodeMB(rss0), cl.PerNodeMB(peak))
}

// firstEvidence returns what the guard rails recorded for the campaign's
// first call (API.md 12.5: the suppression check, the zones, the calling
// hours, the policy version), as a line for the report and as answered
// (nil when the call has none).
func firstEvidence(c *realbin.Client, campaign int64) (string, map[string]any) {
	page := c.Get(fmt.Sprintf("/api/v1/campaign/%d/calls?limit=1", campaign))
	calls, _ := page["calls"].([]any)
	if len(calls) == 0 {
		c.Fail("campaign %d has no calls", campaign)
	}
	call, _ := calls[0].(map[string]any)
	ev, _ := call["compliance"].(map[string]any)
	if ev == nil {
		return "none", nil
	}
	return fmt.Sprintf("%v: suppression %v, timezones %v (%v), local_time %v, calling_hours %v, attempt_cap %v, policy_version %v",
		call["phone_number"], ev["suppression"], ev["timezones"], ev["timezone_source"], ev["local_time"],
		ev["calling_hours"], ev["attempt_cap"], ev["policy_version"]), ev
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
