package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// sseEvent is one Server-Sent Event as a client parses it.
type sseEvent struct {
	name, id, data string
	comment        bool
	at             time.Time
}

func (ev sseEvent) obj(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(ev.data), &m); err != nil {
		t.Fatalf("event %s: data %q is not a JSON object: %v", ev.name, ev.data, err)
	}
	return m
}

// sseClient reads an event stream on its own goroutine.
type sseClient struct {
	t      *testing.T
	res    *http.Response
	events chan sseEvent
	cancel context.CancelFunc
}

// openEvents opens path's event stream as the holder of key (headers as
// name/value pairs) and returns the answer; the stream is read only when
// the answer is 200.
func (e *testEnv) openEvents(path, key string, headers ...string) *sseClient {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.srv.URL+path, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		e.t.Fatalf("GET %s: %v", path, err)
	}
	c := &sseClient{t: e.t, res: res, events: make(chan sseEvent, 4096), cancel: cancel}
	e.t.Cleanup(c.close)
	if res.StatusCode == http.StatusOK {
		go c.read()
	}
	return c
}

func (c *sseClient) close() {
	c.cancel()
	c.res.Body.Close()
}

// read parses the stream into events until it ends (the channel closes).
func (c *sseClient) read() {
	defer close(c.events)
	sc := bufio.NewScanner(c.res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var ev sseEvent
	var data []string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if ev.name != "" || len(data) > 0 {
				ev.data, ev.at = strings.Join(data, "\n"), time.Now()
				c.events <- ev
			}
			ev, data = sseEvent{}, nil
		case strings.HasPrefix(line, ":"):
			c.events <- sseEvent{comment: true, data: strings.TrimSpace(line[1:]), at: time.Now()}
		default:
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "event":
				ev.name = value
			case "id":
				ev.id = value
			case "data":
				data = append(data, value)
			}
		}
	}
}

// next returns the next event, failing the test after 30 s; ok is false
// when the stream ended.
func (c *sseClient) next() (sseEvent, bool) {
	c.t.Helper()
	select {
	case ev, ok := <-c.events:
		return ev, ok
	case <-time.After(30 * time.Second):
		c.t.Fatalf("no event in 30 s")
		return sseEvent{}, false
	}
}

// untilEnd reads events until the stream ends, failing the test if it
// does not end within 60 s (a hang guard: a loaded machine running -race
// takes seconds for what takes a fraction of one); it returns them all
// (comments excluded).
func (c *sseClient) untilEnd() []sseEvent {
	c.t.Helper()
	var out []sseEvent
	deadline := time.After(60 * time.Second)
	for {
		select {
		case ev, ok := <-c.events:
			if !ok {
				return out
			}
			if !ev.comment {
				out = append(out, ev)
			}
		case <-deadline:
			c.t.Fatalf("the stream did not end in 60 s; %d events so far", len(out))
		}
	}
}

// named returns the events named name.
func named(evs []sseEvent, name string) []sseEvent {
	var out []sseEvent
	for _, ev := range evs {
		if ev.name == name {
			out = append(out, ev)
		}
	}
	return out
}
