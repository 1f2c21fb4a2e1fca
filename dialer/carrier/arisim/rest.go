package arisim

// The REST resources: channels (originate, get, hang up, externalMedia) and
// bridges.

import (
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// ServeHTTP serves the ARI resources under /ari/.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path, ok := strings.CutPrefix(r.URL.Path, "/ari/")
	if !ok {
		s.errorAnswer(w, http.StatusNotFound, "Not found")
		return
	}
	parts := strings.Split(path, "/")
	op, id := route(r.Method, parts)
	if op == "" {
		s.errorAnswer(w, http.StatusNotFound, "Invalid method")
		return
	}
	if op != OpEvents {
		s.counters.Update(func(st *Stats) { st.Requests++ })
	}
	// ARI has no 429 budget: no request counts as a create for the gate.
	f := s.gate.Check(Request{Op: op, ID: id, Query: r.URL.Query()}, s.authorized(r), false,
		func() *Fault { return authRequired }, nil)
	switch {
	case f == authRequired:
		w.Header().Set("WWW-Authenticate", `Basic realm="Asterisk REST Interface"`)
		s.counters.Update(func(st *Stats) { st.Unauthorized++ })
		s.errorAnswer(w, f.Status, f.Message)
		return
	case f != nil:
		s.counters.Update(func(st *Stats) { st.Faults++ })
		if f.Originate && op == OpOriginate {
			s.originate(&discardResponse{}, r, id)
		}
		s.errorAnswer(w, f.Status, f.Message)
		return
	}
	switch op {
	case OpEvents:
		s.serveEvents(w, r)
	case OpOriginate:
		s.originate(w, r, id)
	case OpGet:
		s.get(w, id)
	case OpHangup:
		s.hangupRequest(w, r, id)
	case OpExternalMedia:
		s.externalMedia(w, r)
	case OpCreateBridge:
		s.createBridge(w, r)
	case OpAddChannel:
		s.addChannel(w, r, id)
	case OpDeleteBridge:
		s.deleteBridge(w, id)
	case OpAsteriskInfo:
		s.asteriskInfo(w)
	}
}

// asteriskInfo serves GET /ari/asterisk/info: Asterisk's AsteriskInfo
// (build, system, config and status), the read-only request that tells
// whether the ARI user's credentials are accepted.
func (s *Server) asteriskInfo(w http.ResponseWriter) {
	now := time.Now().UTC().Format("2006-01-02T15:04:05.000-0700")
	writeJSON(w, http.StatusOK, map[string]any{
		"build":  map[string]any{"os": "Linux", "kernel": "6.1.0", "machine": "x86_64", "user": "asterisk", "date": "2026-01-01 00:00:00 UTC"},
		"system": map[string]any{"version": "20.0.0", "entity_id": "00:00:00:00:00:00"},
		"config": map[string]any{"name": "arisim", "default_language": "en",
			"setid": map[string]any{"user": "asterisk", "group": "asterisk"}},
		"status": map[string]any{"startup_time": now, "last_reload_time": now},
	})
}

// route maps a method and the path below /ari/ to an operation and the id
// in the path.
func route(method string, p []string) (op, id string) {
	switch {
	case method == http.MethodGet && len(p) == 1 && p[0] == "events":
		return OpEvents, ""
	case method == http.MethodGet && len(p) == 2 && p[0] == "asterisk" && p[1] == "info":
		return OpAsteriskInfo, ""
	case method == http.MethodPost && len(p) == 2 && p[0] == "channels" && p[1] == "externalMedia":
		return OpExternalMedia, ""
	case len(p) == 2 && p[0] == "channels" && p[1] != "":
		switch method {
		case http.MethodPost:
			return OpOriginate, p[1]
		case http.MethodGet:
			return OpGet, p[1]
		case http.MethodDelete:
			return OpHangup, p[1]
		}
	case method == http.MethodPost && len(p) == 1 && p[0] == "bridges":
		return OpCreateBridge, ""
	case method == http.MethodPost && len(p) == 3 && p[0] == "bridges" && p[2] == "addChannel":
		return OpAddChannel, p[1]
	case method == http.MethodDelete && len(p) == 2 && p[0] == "bridges":
		return OpDeleteBridge, p[1]
	}
	return "", ""
}

// authRequired is the gate's answer to a refused request (the 401 mode or
// wrong credentials), told from injected faults by identity.
var authRequired = &Fault{Status: http.StatusUnauthorized, Message: "Authentication required"}

// authorized checks Basic auth, or the api_key query parameter
// (user:password), against the configured user and password (the 401 mode
// is the gate's).
func (s *Server) authorized(r *http.Request) bool {
	user, pass, ok := r.BasicAuth()
	if !ok {
		user, pass, ok = strings.Cut(r.URL.Query().Get("api_key"), ":")
	}
	return ok && subtle.ConstantTimeCompare([]byte(user), []byte(s.app)) == 1 &&
		subtle.ConstantTimeCompare([]byte(pass), []byte(s.password)) == 1
}

// errorAnswer writes ARI's error body {"message": msg}.
func (s *Server) errorAnswer(w http.ResponseWriter, status int, msg string) {
	if status != http.StatusUnauthorized && status < 500 {
		s.counters.Update(func(st *Stats) { st.Errors++ })
	}
	writeJSON(w, status, map[string]string{"message": msg})
}

// writeJSON writes v as a JSON answer with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// variables decodes the request body's {"variables": {...}} (an empty body
// has none); it fails on a body that is not a JSON object of strings.
func variables(r *http.Request) (map[string]string, error) {
	data, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil || len(strings.TrimSpace(string(data))) == 0 {
		return nil, err
	}
	var body struct {
		Variables map[string]string `json:"variables"`
	}
	if err := json.Unmarshal(data, &body); err != nil {
		return nil, fmt.Errorf("bad body: %w", err)
	}
	return body.Variables, nil
}

// numberRE is what the simulator accepts as the number of a dial string.
var numberRE = regexp.MustCompile(`^\+?[0-9]{3,20}$`)

// discardResponse is a ResponseWriter that drops the answer (a fault with
// Originate places the call and answers the fault instead).
type discardResponse struct{ h http.Header }

// Header, Write and WriteHeader implement http.ResponseWriter.
func (d *discardResponse) Header() http.Header {
	if d.h == nil {
		d.h = http.Header{}
	}
	return d.h
}

// Write drops b.
func (d *discardResponse) Write(b []byte) (int, error) { return len(b), nil }

// WriteHeader drops the status.
func (d *discardResponse) WriteHeader(int) {}

// originate serves POST /ari/channels/{id}.
func (s *Server) originate(w http.ResponseWriter, r *http.Request, id string) {
	q := r.URL.Query()
	s.counters.Update(func(st *Stats) { st.Originates++ })
	endpoint, app := q.Get("endpoint"), q.Get("app")
	tech, resource, _ := strings.Cut(endpoint, "/")
	number, _, _ := strings.Cut(resource, "@")
	timeout := 30
	if t := q.Get("timeout"); t != "" {
		n, err := strconv.Atoi(t)
		if err != nil || n == 0 || n < -1 {
			s.errorAnswer(w, http.StatusBadRequest, "timeout must be a positive number of seconds or -1")
			return
		}
		timeout = n
	}
	vars, err := variables(r)
	switch {
	case err != nil:
		s.errorAnswer(w, http.StatusBadRequest, err.Error())
		return
	case endpoint == "":
		s.errorAnswer(w, http.StatusBadRequest, "Endpoint must be specified")
		return
	case app == "":
		s.errorAnswer(w, http.StatusBadRequest, "Application or extension must be specified")
		return
	case tech == "" || !numberRE.MatchString(number):
		s.errorAnswer(w, http.StatusBadRequest, "Invalid endpoint")
		return
	}
	farID := q.Get("otherChannelId")
	s.mu.Lock()
	_, live := s.channels[id]
	_, farLive := s.channels[farID]
	if live || (farID != "" && farLive && strings.EqualFold(tech, "Local")) {
		s.requests = append(s.requests, OriginateRecord{ChannelID: id, Query: q, Variables: vars, Status: http.StatusConflict, At: time.Now()})
		s.counters.Update(func(st *Stats) { st.Conflicts++ })
		s.mu.Unlock()
		s.errorAnswer(w, http.StatusConflict, "Channel with given unique ID already exists")
		return
	}
	s.seq++
	now := time.Now()
	own := &channel{id: id, app: app, state: "Down", number: number, callerID: q.Get("callerId"), created: now, vars: vars}
	c := &call{timeout: timeout, own: own, hangup: make(chan struct{}), ringEnd: make(chan struct{})}
	if a := q.Get("appArgs"); a != "" {
		c.args = strings.Split(a, ",")
	} else {
		c.args = []string{}
	}
	own.call = c
	if strings.EqualFold(tech, "Local") {
		if farID == "" {
			farID = fmt.Sprintf("%d.%d", now.Unix(), s.seq)
		}
		own.name = fmt.Sprintf("Local/%s-%08x;1", resource, s.seq)
		c.far = &channel{id: farID, name: fmt.Sprintf("Local/%s-%08x;2", resource, s.seq), app: app, state: "Down",
			number: number, created: now, call: c, far: true}
		s.channels[farID] = c.far
	} else {
		farID = ""
		own.name = fmt.Sprintf("%s-%08x", endpoint, s.seq)
	}
	s.channels[id] = own
	s.originates[id]++
	s.byNumber[number]++
	c.info = CallInfo{N: len(s.calls) + 1, ChannelID: id, FarChannelID: farID, Endpoint: endpoint, Number: number,
		Attempt: s.byNumber[number], Query: q}
	s.requests = append(s.requests, OriginateRecord{ChannelID: id, Query: q, Variables: vars, Status: http.StatusOK, At: now})
	s.calls = append(s.calls, c)
	script := s.script
	snap := s.snapshot(own)
	s.counters.Update(func(st *Stats) { st.Originated++; st.InFlight++ })
	s.mu.Unlock()
	sc := script(c.info)
	if sc.Outcome == "" {
		sc.Outcome = Answer
	}
	s.mu.Lock()
	c.script = sc
	s.wg.Add(1)
	s.mu.Unlock()
	go s.play(c)
	writeJSON(w, http.StatusOK, snap)
}

// get serves GET /ari/channels/{id}.
func (s *Server) get(w http.ResponseWriter, id string) {
	s.mu.Lock()
	ch := s.channels[id]
	var snap ChannelJSON
	if ch != nil {
		snap = s.snapshot(ch)
		s.counters.Update(func(st *Stats) { st.Gets++ })
	}
	s.mu.Unlock()
	if ch == nil {
		s.errorAnswer(w, http.StatusNotFound, "Channel not found")
		return
	}
	writeJSON(w, http.StatusOK, snap)
}

// hangupRequest serves DELETE /ari/channels/{id} (reason accepted and
// ignored): a call's channel ends the call (canceled while ringing), a
// media channel ends alone.
func (s *Server) hangupRequest(w http.ResponseWriter, r *http.Request, id string) {
	s.mu.Lock()
	ch := s.channels[id]
	if ch != nil {
		s.hangups = append(s.hangups, id)
		if ch.call == nil {
			s.endMediaLocked(ch)
		} else {
			ch.call.hungUpAPI = true
		}
		s.counters.Update(func(st *Stats) { st.HangUps++ })
	}
	s.mu.Unlock()
	if ch == nil {
		s.errorAnswer(w, http.StatusNotFound, "Channel not found")
		return
	}
	if ch.call != nil {
		ch.call.stop()
	}
	w.WriteHeader(http.StatusNoContent)
}

// externalMedia serves POST /ari/channels/externalMedia: app, external_host
// and format are required; transport websocket needs encapsulation none.
// The media channel is Up and in the application at once (StasisStart).
func (s *Server) externalMedia(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	vars, err := variables(r)
	transport, encap := q.Get("transport"), q.Get("encapsulation")
	switch {
	case err != nil:
		s.errorAnswer(w, http.StatusBadRequest, err.Error())
		return
	case q.Get("app") == "" || q.Get("external_host") == "" || q.Get("format") == "":
		s.errorAnswer(w, http.StatusBadRequest, "app, external_host and format are required")
		return
	case transport != "" && transport != "udp" && transport != "tcp" && transport != "websocket":
		s.errorAnswer(w, http.StatusBadRequest, "Unsupported transport")
		return
	case transport == "websocket" && encap != "none":
		s.errorAnswer(w, http.StatusBadRequest, "websocket transport requires encapsulation none")
		return
	}
	s.mu.Lock()
	s.seq++
	id := q.Get("channelId")
	if id == "" {
		id = fmt.Sprintf("media.%d", s.seq)
	}
	if _, live := s.channels[id]; live {
		s.mu.Unlock()
		s.errorAnswer(w, http.StatusConflict, "Channel with given unique ID already exists")
		return
	}
	ch := &channel{id: id, app: q.Get("app"), state: "Up", created: time.Now(), vars: vars,
		name: fmt.Sprintf("WebSocket/%s/0x%08x", q.Get("external_host"), s.seq)}
	s.channels[id] = ch
	s.media = append(s.media, MediaRecord{ChannelID: id, Query: q, Variables: vars})
	ch.stasis = true
	s.emitChannelLocked(ch, "StasisStart", map[string]any{"args": []string{}})
	snap := s.snapshot(ch)
	s.counters.Update(func(st *Stats) { st.ExternalMedia++ })
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, snap)
}

// bridge is a live bridge.
type bridge struct {
	id, typ, name string
	channels      []string
	added         []string // every channel ever added
	deleted       bool
}

// remove takes channel id out of the bridge.
func (b *bridge) remove(id string) {
	for i, c := range b.channels {
		if c == id {
			b.channels = append(b.channels[:i], b.channels[i+1:]...)
			return
		}
	}
}

// createBridge serves POST /ari/bridges (type, bridgeId, name).
func (s *Server) createBridge(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	s.seq++
	id := q.Get("bridgeId")
	if id == "" {
		id = fmt.Sprintf("bridge.%d", s.seq)
	}
	if b := s.bridges[id]; b != nil && !b.deleted {
		s.mu.Unlock()
		s.errorAnswer(w, http.StatusConflict, "Bridge with given id already exists")
		return
	}
	typ := q.Get("type")
	if typ == "" {
		typ = "mixing"
	}
	b := &bridge{id: id, typ: typ, name: q.Get("name")}
	s.bridges[id] = b
	s.bridgeOrder = append(s.bridgeOrder, b)
	s.counters.Update(func(st *Stats) { st.Bridges++ })
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"id": id, "technology": "simple_bridge", "bridge_type": typ,
		"bridge_class": "stasis", "creator": "Stasis", "name": b.name, "channels": []string{}})
}

// addChannel serves POST /ari/bridges/{id}/addChannel?channel=a,b: 404 for
// an unknown bridge, 400 for an unknown channel, 422 for a channel not in
// a Stasis application.
func (s *Server) addChannel(w http.ResponseWriter, r *http.Request, id string) {
	ids := strings.Split(r.URL.Query().Get("channel"), ",")
	s.mu.Lock()
	b := s.bridges[id]
	status, msg := 0, ""
	switch {
	case b == nil || b.deleted:
		status, msg = http.StatusNotFound, "Bridge not found"
	default:
		for _, cid := range ids {
			ch := s.channels[cid]
			switch {
			case ch == nil:
				status, msg = http.StatusBadRequest, "Channel not found"
			case !ch.stasis:
				status, msg = http.StatusUnprocessableEntity, "Channel not in Stasis application"
			}
		}
	}
	if status == 0 {
		for _, cid := range ids {
			s.channels[cid].bridge = id
			b.channels = append(b.channels, cid)
			b.added = append(b.added, cid)
		}
		s.counters.Update(func(st *Stats) { st.AddChannels++ })
	}
	s.mu.Unlock()
	if status != 0 {
		s.errorAnswer(w, status, msg)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// deleteBridge serves DELETE /ari/bridges/{id}.
func (s *Server) deleteBridge(w http.ResponseWriter, id string) {
	s.mu.Lock()
	b := s.bridges[id]
	ok := b != nil && !b.deleted
	if ok {
		b.deleted = true
		for _, cid := range b.channels {
			if ch := s.channels[cid]; ch != nil {
				ch.bridge = ""
			}
		}
		b.channels = nil
	}
	s.mu.Unlock()
	if !ok {
		s.errorAnswer(w, http.StatusNotFound, "Bridge not found")
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// OriginateRecord is one originate request: its channel id, query and
// variables, and the status answered (200, 409).
type OriginateRecord struct {
	ChannelID string
	Query     url.Values
	Variables map[string]string
	Status    int
	At        time.Time
}

// MediaRecord is one externalMedia channel created.
type MediaRecord struct {
	ChannelID string
	Query     url.Values
	Variables map[string]string
}
