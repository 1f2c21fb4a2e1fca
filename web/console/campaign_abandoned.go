package console

import (
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"

	"github.com/outdial/outdial/web/wire"
)

// The campaign page's "Abandoned calls" card (API.md 19): the campaign's
// and the organization's abandoned_rate_24h against the compliance
// policy's abandonment.max_rate (3 % until the policy has one), and how
// long the people who answered waited for the agent's first audio.
//
// The rates come from the diagnosis when the page is rendered and from
// the snapshots afterwards (campaign_abandoned.js). The waits come from
// one page of the calls API: the campaign's answered calls that ended, in
// id order, at most firstAudioSample of them (one in-process request that
// reads an index range), and the page adds the calls that end while it is
// open. A campaign with more answered calls shows its first
// firstAudioSample: the API has no newest-first order, and the console
// adds no endpoint of its own.

// firstAudioSample bounds the answered calls the histogram is rendered
// from: the calls API's largest page.
const firstAudioSample = 1000

// Defaults of the compliance policy's abandonment setting (API.md 19),
// shown until the organization's policy holds the setting.
const (
	defaultMaxAbandonRate = 0.03
	defaultAbandonAfterMs = 2000
)

// abandonWarnShare is the share of the limit from which a rate shows as a
// warning.
const abandonWarnShare = 2.0 / 3

// firstAudioBuckets are the histogram's buckets of answer_to_first_audio_ms:
// each holds the waits from its From (inclusive) to the next bucket's From;
// the last holds the calls whose agent never reported first audio.
var firstAudioBuckets = []firstAudioBucket{
	{Label: "< 0.5 s", From: 0}, {Label: "0.5–1 s", From: 500}, {Label: "1–2 s", From: 1000},
	{Label: "2–3 s", From: 2000}, {Label: "3–5 s", From: 3000}, {Label: "> 5 s", From: 5000},
	{Label: "never", From: -1},
}

// firstAudioBucket is one bucket of the histogram.
type firstAudioBucket struct {
	Label string
	// From is the bucket's lowest wait in milliseconds; -1 for "never".
	From int64
}

// bucketOf is the index in firstAudioBuckets of a call's wait ms (nil:
// never).
func bucketOf(ms *int64) int {
	never := len(firstAudioBuckets) - 1
	if ms == nil {
		return never
	}
	for i := never - 1; i > 0; i-- {
		if *ms >= firstAudioBuckets[i].From {
			return i
		}
	}
	return 0
}

// abandonView is the card's data.
type abandonView struct {
	// Rates are the campaign's and the organization's rates, in this
	// order.
	Rates []abandonRate
	// MaxRate is the limit (a share, 0.03 for 3 %); AbandonAfterMs the
	// wait after which an answered call counts as abandoned.
	MaxRate        float64
	AbandonAfterMs int64
	// Enforced is whether the policy pauses a campaign over the limit;
	// PolicyKnown whether the organization's policy holds the setting
	// (before that the defaults are shown and nothing is enforced).
	Enforced, PolicyKnown bool
	Buckets               []bucketCount
	// Sample is the number of answered calls the histogram counts; Capped
	// is set when the campaign has more than the page read; Err is why
	// the calls could not be read ("" when they were).
	Sample int
	Capped bool
	Err    string
	// Counted is the calls the histogram counts as "id:bucket" pairs, for
	// campaign_abandoned.js to move a call whose wait changes (a late
	// first audio) rather than count it twice.
	Counted string
}

// abandonRate is one rate of abandoned_rate_24h.
type abandonRate struct {
	// Scope is "campaign" or "organization", the key of
	// abandoned_rate_24h; Label names it for people.
	Scope, Label string
	Rate         *float64
	maxRate      float64
}

// Text is the rate as the page writes it ("1.8 %"); "" when null.
func (r abandonRate) Text() string {
	if r.Rate == nil {
		return ""
	}
	return percentText(*r.Rate)
}

// Level is how the rate stands against the limit: "none" (null), "ok",
// "warn" (from two thirds of the limit) or "over" (above it).
func (r abandonRate) Level() string {
	return rateLevel(r.Rate, r.maxRate)
}

// MeterValue is the rate as the meter shows it: capped at its max.
func (r abandonRate) MeterValue() string {
	if r.Rate == nil {
		return "0"
	}
	return number(min(*r.Rate, 2*r.maxRate))
}

// rateLevel is abandonRate.Level of rate against maxRate.
func rateLevel(rate *float64, maxRate float64) string {
	switch {
	case rate == nil:
		return "none"
	case *rate > maxRate:
		return "over"
	case *rate >= maxRate*abandonWarnShare:
		return "warn"
	}
	return "ok"
}

// percentText writes share as a percentage with at most one decimal ("3 %",
// "1.8 %").
func percentText(share float64) string {
	return strings.TrimSuffix(strconv.FormatFloat(share*100, 'f', 1, 64), ".0") + " %"
}

// number writes x for an HTML attribute, to six decimals (a share of
// 2/3 of 3 % is 0.02, not 0.019999999999999997).
func number(x float64) string { return strconv.FormatFloat(math.Round(x*1e6)/1e6, 'f', -1, 64) }

// LimitText is the limit as the page writes it ("3 %").
func (v abandonView) LimitText() string { return percentText(v.MaxRate) }

// MeterMax, MeterLow and MeterHigh are the meters' attributes: the scale
// runs to twice the limit, warns from two thirds of it and is high above
// it.
func (v abandonView) MeterMax() string  { return number(2 * v.MaxRate) }
func (v abandonView) MeterLow() string  { return number(v.MaxRate * abandonWarnShare) }
func (v abandonView) MeterHigh() string { return number(v.MaxRate) }

// MaxRateAttr is the limit for campaign_abandoned.js.
func (v abandonView) MaxRateAttr() string { return number(v.MaxRate) }

// bucketCount is one bucket of the histogram with its calls.
type bucketCount struct {
	firstAudioBucket
	Count int
	// Late is set for the buckets past abandon_after_ms, and "never".
	Late bool
}

// abandonPolicy is the part of the compliance policy the card reads;
// Abandonment is nil until the policy has the setting.
type abandonPolicy struct {
	Abandonment *struct {
		Enabled        bool     `json:"enabled"`
		MaxRate        *float64 `json:"max_rate"`
		AbandonAfterMs *int64   `json:"abandon_after_ms"`
	} `json:"abandonment"`
}

// abandonCard builds the card of campaign id, whose diagnosis (nil
// without one) carries the rates.
func (a apiClient) abandonCard(id int64, d *wire.Diagnosis) abandonView {
	v := abandonView{MaxRate: defaultMaxAbandonRate, AbandonAfterMs: defaultAbandonAfterMs}
	var p abandonPolicy
	// A role that may not read the policy, or an error, shows the
	// defaults: the card is for watching, the policy page for the rules.
	if err := a.get(policyAPI, &p); err == nil && p.Abandonment != nil {
		v.PolicyKnown, v.Enforced = true, p.Abandonment.Enabled
		if m := p.Abandonment.MaxRate; m != nil && *m > 0 {
			v.MaxRate = *m
		}
		if ms := p.Abandonment.AbandonAfterMs; ms != nil && *ms > 0 {
			v.AbandonAfterMs = *ms
		}
	}
	v.Rates = []abandonRate{{Scope: "campaign", Label: "This campaign", maxRate: v.MaxRate},
		{Scope: "organization", Label: "The organization", maxRate: v.MaxRate}}
	if d != nil {
		v.Rates[0].Rate, v.Rates[1].Rate = d.AbandonedRate24h.Campaign, d.AbandonedRate24h.Organization
	}
	v.Buckets = make([]bucketCount, len(firstAudioBuckets))
	for i, b := range firstAudioBuckets {
		v.Buckets[i] = bucketCount{firstAudioBucket: b, Late: b.From < 0 || b.From >= v.AbandonAfterMs}
	}
	q := url.Values{"outcome": {"answered"}, "state": {"done"}, "limit": {strconv.Itoa(firstAudioSample)}}
	var page wire.CallList
	if err := a.get(fmt.Sprintf("/api/v1/campaign/%d/calls?%s", id, q.Encode()), &page); err != nil {
		v.Err = "The calls could not be read."
		return v
	}
	v.Capped = len(page.Calls) == firstAudioSample
	counted := make([]string, 0, len(page.Calls))
	for _, c := range page.Calls {
		if c.Abandoned == nil {
			continue // not answered by a person
		}
		b := bucketOf(c.AnswerToFirstAudioMs)
		v.Buckets[b].Count++
		v.Sample++
		counted = append(counted, strconv.FormatInt(c.ID, 10)+":"+strconv.Itoa(b))
	}
	v.Counted = strings.Join(counted, ",")
	return v
}

// firstAudioCell is the calls table's cell of a call's wait for the
// agent's first audio.
type firstAudioCell struct {
	// Text is "0.74 s", "never", or "" when no person answered (or the
	// call has not ended).
	Text      string
	Abandoned bool
}

// FirstAudio is the calls table's cell of call c.
func (campaignView) FirstAudio(c wire.Call) firstAudioCell {
	switch {
	case c.Abandoned == nil:
		return firstAudioCell{}
	case c.AnswerToFirstAudioMs == nil:
		return firstAudioCell{Text: "never", Abandoned: *c.Abandoned}
	}
	return firstAudioCell{Text: secondsText(*c.AnswerToFirstAudioMs), Abandoned: *c.Abandoned}
}

// secondsText writes ms as seconds with two decimals ("0.74 s").
func secondsText(ms int64) string {
	return strconv.FormatFloat(float64(ms)/1000, 'f', 2, 64) + " s"
}
