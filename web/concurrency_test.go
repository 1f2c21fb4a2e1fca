package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
)

// post sends one JSON request from any goroutine (no *testing.T) and returns
// the status and body.
func (e *testEnv) send(method, path, key string, body any) (int, []byte, error) {
	data, err := json.Marshal(body)
	if err != nil {
		return 0, nil, err
	}
	req, err := http.NewRequest(method, e.srv.URL+path, bytes.NewReader(data))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("X-API-Key", key)
	res, err := e.srv.Client().Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	return res.StatusCode, raw, err
}

// TestConcurrentDefaultCreates creates configurations with
// is_default_outbound: true from parallel goroutines (in two organizations)
// and checks that each organization ends with exactly one default, the last
// one committed.
func TestConcurrentDefaultCreates(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const n = 24
	type result struct {
		status int
		body   []byte
		err    error
	}
	results := make([]result, 2*n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range 2 * n {
		key := e.keyA
		if i%2 == 1 {
			key = e.keyB
		}
		wg.Go(func() {
			<-start
			st, body, err := e.send(http.MethodPost, configsPath, key, configBody(fmt.Sprintf("c-%d", i), true, validConfig("twilio")))
			results[i] = result{st, body, err}
		})
	}
	close(start)
	wg.Wait()
	for i, r := range results {
		if r.err != nil || r.status != http.StatusOK {
			t.Fatalf("request %d: status = %d, want %d (%v) %s", i, r.status, http.StatusOK, r.err, r.body)
		}
	}
	for _, key := range []string{e.keyA, e.keyB} {
		r := e.do(http.MethodGet, configsPath, key, nil)
		list := r.obj(t)["configurations"].([]any)
		if len(list) != n {
			t.Fatalf("configurations = %d, want %d", len(list), n)
		}
		defs := e.defaults(key)
		if len(defs) != 1 {
			t.Fatalf("defaults = %v, want exactly one", defs)
		}
		// The default is the one created last (ids grow with commits).
		last := id(t, list[len(list)-1].(map[string]any), "id")
		if defs[0] != last {
			t.Errorf("default = %d, want the last created %d", defs[0], last)
		}
	}
}

// TestConcurrentDefaultUpdates switches the default between configurations
// from parallel goroutines; exactly one stays the default.
func TestConcurrentDefaultUpdates(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const n = 8
	ids := make([]int64, n)
	for i := range n {
		ids[i] = id(t, e.createConfig(e.keyA, fmt.Sprintf("u-%d", i), false, validConfig("plivo")), "id")
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4*n)
	for round := range 4 {
		for i := range n {
			wg.Go(func() {
				st, body, err := e.send(http.MethodPut, configPath(ids[i]), e.keyA, map[string]any{"is_default_outbound": (i+round)%3 != 0})
				if err == nil && st != http.StatusOK {
					err = fmt.Errorf("status = %d, want %d: %s", st, http.StatusOK, body)
				}
				if err != nil {
					errs <- err
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if defs := e.defaults(e.keyA); len(defs) > 1 {
		t.Fatalf("defaults = %v, want at most one", defs)
	}
	// A final switch leaves exactly the chosen one.
	wantStatus(t, e.a(http.MethodPut, configPath(ids[3]), map[string]any{"is_default_outbound": true}), http.StatusOK)
	if defs := e.defaults(e.keyA); len(defs) != 1 || defs[0] != ids[3] {
		t.Fatalf("defaults = %v, want [%d]", defs, ids[3])
	}
	if got, err := e.db.DefaultOutboundConfigID(context.Background(), e.orgA); err != nil || got != ids[3] {
		t.Fatalf("store default = %d, %v", got, err)
	}
}

// TestRestartKeepsConfigurations creates one configuration of every provider
// with phone numbers, restarts (close the database, reopen the same file with
// the same key, new router) and checks every answer is unchanged.
func TestRestartKeepsConfigurations(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var ids []int64
	for i, p := range providerNames {
		c := e.createConfig(e.keyA, "r-"+p, i == 3, validConfig(p))
		cid := id(t, c, "id")
		ids = append(ids, cid)
		addr := fmt.Sprintf("+1415555%04d", 2600+i)
		e.createNumber(e.keyA, cid, map[string]any{"address": addr, "label": "main", "is_default_caller_id": true})
	}
	e.createConfig(e.keyB, "r-b", true, validConfig("vonage"))
	snapshot := func() map[string]string {
		out := map[string]string{}
		for _, key := range []string{e.keyA, e.keyB} {
			out[key+" list"] = string(e.do(http.MethodGet, configsPath, key, nil).Raw)
		}
		for _, cid := range ids {
			r := e.a(http.MethodGet, configPath(cid), nil)
			wantStatus(t, r, http.StatusOK)
			out[fmt.Sprint(cid)] = string(r.Raw)
			out[fmt.Sprint(cid)+" numbers"] = string(e.a(http.MethodGet, numbersPath(cid), nil).Raw)
		}
		return out
	}
	want := snapshot()
	e.restart()
	got := snapshot()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s after restart:\n%s\nwant\n%s", k, got[k], v)
		}
	}
	// The API keys still work and the secrets still open.
	for _, cid := range ids {
		c, err := e.db.GetTelephonyConfig(context.Background(), e.orgA, cid)
		if err != nil {
			t.Fatalf("open credentials of %d after restart: %v", cid, err)
		}
		cfg := validConfig(c.Provider)
		for _, f := range sensitiveFields[c.Provider] {
			if c.Credentials.String(f) != cfg[f] {
				t.Errorf("%s.%s after restart differs", c.Provider, f)
			}
		}
	}
	// And it still writes.
	e.createConfig(e.keyA, "after-restart", false, validConfig("twilio"))
}
