package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/outdial/outdial/bench/internal/realbin"
	"github.com/outdial/outdial/dialer/carrier/twiliosim"
)

// service is one `outdial serve` on a fresh data directory, its
// organization set up to dial the simulator.
type service struct {
	srv *realbin.Server
	c   *realbin.Client
	key string // the organization's API key
	wf  any    // its workflow's id
}

// startService creates an API key on a fresh data directory under dir,
// starts the service there with OUTDIAL_TWILIO_API_URL pointing at sim and
// sets the organization up as a client would: compliance policy, a Twilio
// configuration with the simulator's credentials, a caller id, a workflow.
func startService(bin, dir string, sim *twiliosim.Server, policy string) *service {
	env := realbin.Env("OUTDIAL_TWILIO_API_URL=" + sim.URL())
	dataDir := filepath.Join(dir, "data")
	key := realbin.APIKey(bin, dataDir, "bench", env)
	srv := realbin.Serve(bin, dataDir, filepath.Join(dir, "serve.log"), env)
	c := srv.Client(key)
	c.SetCompliance(policy)
	cfg := c.Post("/api/v1/organizations/telephony-configs", map[string]any{
		"name": "sim", "is_default_outbound": true,
		"config": map[string]any{"provider": "twilio", "account_sid": sim.AccountSID(), "auth_token": sim.AuthToken()},
	})
	c.Post(fmt.Sprintf("/api/v1/organizations/telephony-configs/%v/phone-numbers", cfg["id"]),
		map[string]any{"address": "+14155550100", "is_default_caller_id": true})
	wf := c.Post("/api/v1/workflow", map[string]any{"name": "reminder", "workflow_definition": json.RawMessage(workflow)})
	return &service{srv: srv, c: c, key: key, wf: wf["id"]}
}

// createCampaign uploads a CSV of rows contacts (numbers
// realbin.Number(offset) on) and creates a draft campaign of it with
// max_concurrency and rate, retries off; it returns the campaign's id.
func (s *service) createCampaign(name string, rows, offset, concurrency int, rate float64) int64 {
	t := time.Now()
	csv := contactsCSV(rows, offset)
	source := s.c.UploadCSV("contacts.csv", csv)
	camp := s.c.Post("/api/v1/campaign", map[string]any{
		"name": name, "workflow_id": s.wf, "source_id": source,
		"max_concurrency": concurrency, "rate_limit_per_second": rate,
		"retry_config": map[string]any{"enabled": false},
	})
	if got := int(camp["total_rows"].(float64)); got != rows {
		s.srv.Fail("campaign %q has %d contacts, want %d", name, got, rows)
	}
	id := int64(camp["id"].(float64))
	log.Printf("campaign %d %q: %d contacts (%.1f MB CSV) uploaded and created in %.1f s",
		id, name, rows, float64(len(csv))/1e6, time.Since(t).Seconds())
	return id
}

// start starts campaign id.
func (s *service) start(id int64) { s.c.Post(campaignAPI(id)+"/start", nil) }

// state returns campaign id's state.
func (s *service) state(id int64) string {
	st, _ := s.c.Get(campaignAPI(id))["state"].(string)
	return st
}

// timeGET returns the median and the longest of n answers of GET path.
func (s *service) timeGET(path string, n int) (median, longest time.Duration) {
	var ds []time.Duration
	for range n {
		t := time.Now()
		s.c.Get(path)
		ds = append(ds, time.Since(t))
	}
	return medianMax(ds)
}

// campaignAPI is campaign id's API path.
func campaignAPI(id int64) string { return "/api/v1/campaign/" + strconv.FormatInt(id, 10) }

// campaignPage is campaign id's console page.
func campaignPage(id int64) string { return "/console/campaigns/" + strconv.FormatInt(id, 10) }

// workflow is a valid workflow: a start node with a greeting, an end node,
// one edge.
const workflow = `{"nodes":[` +
	`{"id":"start","type":"startCall","position":{"x":0,"y":0},"data":{"name":"Greeting","prompt":"You are calling {{first_name}} {{last_name}}.","greeting":"Hello {{first_name}}, this is a reminder."}},` +
	`{"id":"bye","type":"endCall","position":{"x":200,"y":0},"data":{"name":"Goodbye","prompt":"Say goodbye."}}],` +
	`"edges":[{"id":"e1","source":"start","target":"bye","data":{"label":"Done","condition":"The reminder was delivered"}}]}`

// contactsCSV returns a contacts file of n rows (phone_number, first_name,
// last_name, city) whose numbers are realbin.Number(offset) on.
func contactsCSV(n, offset int) []byte {
	first := []string{"Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Margaret", "Kenneth"}
	last := []string{"Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Hamilton", "Thompson"}
	city := []string{"London", "New York", "Paris", "Berlin", "Mumbai", "Sydney", "Sao Paulo", "San Francisco"}
	var b bytes.Buffer
	b.Grow(n * 45)
	b.WriteString("phone_number,first_name,last_name,city\n")
	for i := range n {
		k := offset + i
		b.WriteString(realbin.Number(k))
		b.WriteByte(',')
		b.WriteString(first[k%len(first)])
		b.WriteByte(',')
		b.WriteString(last[(k/8)%len(last)])
		b.WriteByte(',')
		b.WriteString(city[(k/64)%len(city)])
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// medianMax returns the median (the upper one of an even count) and the
// largest of ds (zero for none).
func medianMax[T int64 | float64 | time.Duration](ds []T) (median, largest T) {
	if len(ds) == 0 {
		return 0, 0
	}
	s := append([]T(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2], s[len(s)-1]
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// pageClient returns an HTTP client signed in to the console through the
// sign-in form's POST (the session cookie in its jar).
func (s *service) pageClient() *http.Client {
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.PostForm(s.srv.Base+"/console/sign-in", url.Values{"api_key": {s.key}, "next": {"/console/"}})
	if err != nil {
		s.srv.Fail("sign in: %v", err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		s.srv.Fail("sign in: status %d, want 303", res.StatusCode)
	}
	return c
}

// timePage returns the median and the longest of n answers of console
// page path, read to the end by c.
func (s *service) timePage(c *http.Client, path string, n int) (median, longest time.Duration) {
	var ds []time.Duration
	for range n {
		t := time.Now()
		res, err := c.Get(s.srv.Base + path)
		if err != nil {
			s.srv.Fail("GET %s: %v", path, err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			s.srv.Fail("GET %s: status %d", path, res.StatusCode)
		}
		ds = append(ds, time.Since(t))
	}
	return medianMax(ds)
}
