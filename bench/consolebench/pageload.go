package main

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// hook runs in every document of a measured tab before the page's own
// scripts: it wraps the listeners the page adds to its EventSource so that
// window.__consolebench records when the first "campaign" snapshot has been
// applied to the page (its handler returned) and counts the events of each
// kind the page handled.
const hook = `(() => {
  const cb = window.__consolebench = { snapshot: 0, events: {} };
  const add = EventTarget.prototype.addEventListener;
  EventSource.prototype.addEventListener = function (type, fn, opts) {
    if (typeof fn === "function" && type !== "open" && type !== "error") {
      const inner = fn;
      fn = function (e) {
        const r = inner.call(this, e);
        cb.events[type] = (cb.events[type] || 0) + 1;
        if (type === "campaign" && !cb.snapshot) cb.snapshot = performance.now();
        return r;
      };
    }
    return add.call(this, type, fn, opts);
  };
})();`

// pageTimes reads the document's timings (ms from its navigation start):
// the response's first byte, first paint and first contentful paint,
// DOMContentLoaded and load ends, the first snapshot applied (0: none yet),
// and the in-flight counter the page shows.
const pageTimes = `(() => {
  const n = performance.getEntriesByType("navigation")[0] || {};
  const paint = (name) => (performance.getEntriesByType("paint").find((p) => p.name === name) || {}).startTime || 0;
  const f = document.querySelector('[data-field="in_flight"]');
  return { ttfb: n.responseStart || 0, fp: paint("first-paint"), fcp: paint("first-contentful-paint"),
    dcl: n.domContentLoadedEventEnd || 0, load: n.loadEventEnd || 0,
    snapshot: (window.__consolebench || {}).snapshot || 0, events: (window.__consolebench || {}).events || {},
    in_flight: f ? f.textContent : "" };
})()`

// timings is pageTimes' answer.
type timings struct {
	TTFB     float64        `json:"ttfb"`
	FP       float64        `json:"fp"`
	FCP      float64        `json:"fcp"`
	DCL      float64        `json:"dcl"`
	Load     float64        `json:"load"`
	Snapshot float64        `json:"snapshot"`
	Events   map[string]int `json:"events"`
	InFlight string         `json:"in_flight"`
}

// resource is one request of a page load as the tab's network events tell
// it.
type resource struct {
	id       network.RequestID
	path     string // path and query, on the service
	typ      network.ResourceType
	status   int64
	encoding string  // Content-Encoding of the answer
	sent     float64 // monotonic seconds
	done     float64
	transfer float64 // bytes received: headers and body as sent (loadingFinished.encodedDataLength)
	body     float64 // the body as sent (encodedBodyLength)
	decoded  int64   // the body after decoding (sum of dataReceived.dataLength; the event stream's bytes, not compressed)
	finished bool
	failed   string
	messages int     // EventSource messages
	firstMsg float64 // monotonic seconds of the first
}

// stream reports whether r is the campaign's event stream.
func (r *resource) stream() bool {
	return r.typ == network.ResourceTypeEventSource || strings.HasSuffix(strings.SplitN(r.path, "?", 2)[0], "/events")
}

// recorder collects a tab's network events.
type recorder struct {
	mu     sync.Mutex
	on     bool
	byID   map[network.RequestID]*resource
	order  []*resource
	lastAt time.Time // when a request last started or ended
}

func newRecorder() *recorder { return &recorder{byID: map[network.RequestID]*resource{}} }

// listen is the tab's chromedp listener.
func (rec *recorder) listen(ev any) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if !rec.on {
		return
	}
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent:
		if r := rec.byID[ev.RequestID]; r != nil && ev.RedirectResponse != nil {
			return // a redirect of a request already counted: the page loads none
		}
		p := ev.Request.URL
		if u, err := url.Parse(p); err == nil {
			p = u.RequestURI()
		}
		r := &resource{id: ev.RequestID, path: p, typ: ev.Type, sent: ev.Timestamp.Float64()}
		rec.byID[ev.RequestID] = r
		rec.order = append(rec.order, r)
		rec.lastAt = time.Now()
	case *network.EventResponseReceived:
		if r := rec.byID[ev.RequestID]; r != nil && ev.Response != nil {
			r.status, r.typ = ev.Response.Status, ev.Type
			for k, v := range ev.Response.Headers {
				if strings.EqualFold(k, "content-encoding") {
					r.encoding = fmt.Sprint(v)
				}
			}
		}
	case *network.EventDataReceived:
		if r := rec.byID[ev.RequestID]; r != nil {
			r.decoded += ev.DataLength
		}
	case *network.EventEventSourceMessageReceived:
		if r := rec.byID[ev.RequestID]; r != nil {
			if r.messages == 0 {
				r.firstMsg = ev.Timestamp.Float64()
			}
			r.messages++
		}
	case *network.EventLoadingFinished:
		if r := rec.byID[ev.RequestID]; r != nil {
			r.finished, r.done = true, ev.Timestamp.Float64()
			r.transfer, r.body = ev.EncodedDataLength, ev.EncodedBodyLength
			rec.lastAt = time.Now()
		}
	case *network.EventLoadingFailed:
		if r := rec.byID[ev.RequestID]; r != nil {
			r.finished, r.done, r.failed = true, ev.Timestamp.Float64(), ev.ErrorText
			rec.lastAt = time.Now()
		}
	}
}

// quiet reports whether every request but the event stream and the
// favicon has ended and none started or ended for the last d. (Chromium
// loads the favicon itself, type Other, and does not always report its
// end.)
func (rec *recorder) quiet(d time.Duration) bool {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, r := range rec.order {
		if !r.finished && !r.stream() && r.typ != network.ResourceTypeOther {
			return false
		}
	}
	return time.Since(rec.lastAt) >= d
}

// resources returns copies of what was recorded, in request order.
func (rec *recorder) resources() []resource {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	out := make([]resource, len(rec.order))
	for i, r := range rec.order {
		out[i] = *r
	}
	return out
}

// load is one cold load of a campaign page.
type load struct {
	times     timings
	resources []resource // the document first, in request order
	total     float64    // bytes transferred, every request but the stream
	stream    resource   // the event stream, as far as it went
	wall      time.Duration
}

// coldLoad signs in in a new browser context, turns the tab's cache off
// (Network.setCacheDisabled: every request goes to the server, as on a
// first visit), loads path and waits until the page has applied its first
// snapshot from the event stream and its other requests have ended with
// none for quietFor. It closes the tab and its context before returning.
func coldLoad(b *browser, base, key, path string, quietFor time.Duration) (*load, error) {
	ctx, cancel, err := b.newSession(base, key)
	if err != nil {
		return nil, err
	}
	defer cancel()
	rec := newRecorder()
	if err := chromedp.Listen(ctx, rec.listen); err != nil {
		return nil, err
	}
	tctx, tcancel := context.WithTimeout(ctx, 2*time.Minute)
	defer tcancel()
	if _, err := chromedp.Call(tctx, network.SetCacheDisabled, network.SetCacheDisabledParams{CacheDisabled: true}); err != nil {
		return nil, fmt.Errorf("disable the cache: %w", err)
	}
	if _, err := chromedp.Call(tctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: hook}); err != nil {
		return nil, fmt.Errorf("add the hook: %w", err)
	}
	rec.mu.Lock()
	rec.on = true
	rec.mu.Unlock()
	start := time.Now()
	if err := chromedp.Do(tctx, chromedp.Navigate(base+path)); err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	var t timings
	for {
		t, err = chromedp.Run(tctx, chromedp.Evaluate[timings](pageTimes))
		if err != nil {
			return nil, fmt.Errorf("read the timings: %w", err)
		}
		if t.Snapshot > 0 && rec.quiet(quietFor) {
			break
		}
		select {
		case <-tctx.Done():
			var open []string
			for _, r := range rec.resources() {
				if !r.finished && !r.stream() {
					open = append(open, fmt.Sprintf("%s (%s)", r.path, r.typ))
				}
			}
			return nil, fmt.Errorf("load %s: no snapshot applied, or requests still under way, after 2 minutes (snapshot at %.0f ms; under way: %v)",
				path, t.Snapshot, open)
		case <-time.After(100 * time.Millisecond):
		}
	}
	l := &load{times: t, wall: time.Since(start)}
	for _, r := range rec.resources() {
		if r.stream() {
			l.stream = r
			continue
		}
		l.resources = append(l.resources, r)
		l.total += r.transfer
	}
	// The document, not the first request seen: the page the sign-in
	// landed on may still fetch its favicon as the navigation starts; what
	// was requested before the document is that page's, not counted.
	doc := slices.IndexFunc(l.resources, func(r resource) bool { return r.typ == network.ResourceTypeDocument })
	if doc > 0 {
		for _, r := range l.resources[:doc] {
			l.total -= r.transfer
		}
		l.resources = l.resources[doc:]
		doc = 0
	}
	if doc < 0 || l.resources[doc].status != 200 {
		return nil, fmt.Errorf("load %s: the document did not answer 200: %+v", path, l.resources)
	}
	if l.stream.status != 200 {
		return nil, fmt.Errorf("load %s: the event stream answered %d", path, l.stream.status)
	}
	return l, nil
}

// kind groups a resource for the bytes' breakdown.
func (r resource) kind() string {
	p := strings.SplitN(r.path, "?", 2)[0]
	switch {
	case strings.HasPrefix(p, "/api/"):
		return "api"
	case strings.HasSuffix(p, ".css"):
		return "css"
	case strings.HasSuffix(p, ".js"):
		return "js"
	case r.typ == network.ResourceTypeDocument:
		return "html"
	}
	return "other"
}

// byKind sums the transfer of l's resources by kind, in a stable order.
func (l *load) byKind() string {
	sums := map[string]float64{}
	counts := map[string]int{}
	for _, r := range l.resources {
		sums[r.kind()] += r.transfer
		counts[r.kind()]++
	}
	kinds := make([]string, 0, len(sums))
	for k := range sums {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%s %.1f KB (%d)", k, sums[k]/1024, counts[k])
	}
	return strings.Join(parts, ", ")
}
