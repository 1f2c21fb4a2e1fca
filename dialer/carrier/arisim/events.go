package arisim

// The events websocket (GET /ari/events) and the JSON of events and
// channel snapshots.

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/coder/websocket"
)

// eventQueue is how many events a websocket may have waiting; a client
// slower than that is disconnected, as Asterisk drops a stuck websocket.
const eventQueue = 4096

// eventConn is one events websocket.
type eventConn struct {
	conn  *websocket.Conn // nil until the handshake is done; guarded by Server.mu
	apps  map[string]bool
	queue chan []byte
	done  chan struct{} // closed when the connection is dropped
}

// serveEvents upgrades GET /ari/events?app=a[,b]&subscribeAll=... to the
// events websocket of those applications, unless events are refused now
// (503) or the request has no app (400).
func (s *Server) serveEvents(w http.ResponseWriter, r *http.Request) {
	apps := map[string]bool{}
	for _, a := range strings.Split(r.URL.Query().Get("app"), ",") {
		if a != "" {
			apps[a] = true
		}
	}
	if len(apps) == 0 {
		s.errorAnswer(w, http.StatusBadRequest, "Missing parameter app")
		return
	}
	s.mu.Lock()
	refused := s.refuse || time.Now().Before(s.refuseUntil)
	if refused {
		s.counters.Update(func(st *Stats) { st.Refused++ })
	}
	s.mu.Unlock()
	if refused {
		s.errorAnswer(w, http.StatusServiceUnavailable, "Service Unavailable")
		return
	}
	// The application is registered before the handshake completes, as
	// a client that sees the upgrade may originate at once: no event sent
	// from then on is lost.
	ec := &eventConn{apps: apps, queue: make(chan []byte, eventQueue), done: make(chan struct{})}
	s.mu.Lock()
	if s.ctx.Err() != nil {
		s.mu.Unlock()
		s.errorAnswer(w, http.StatusServiceUnavailable, "Service Unavailable")
		return
	}
	s.conns[ec] = struct{}{}
	s.counters.Update(func(st *Stats) { st.Listeners++ })
	s.mu.Unlock()
	conn, err := websocket.Accept(w, r, nil)
	s.mu.Lock()
	if err != nil {
		s.dropLocked(ec) // Accept answered the request
		s.mu.Unlock()
		return
	}
	ec.conn = conn
	if _, live := s.conns[ec]; !live {
		s.mu.Unlock()
		conn.CloseNow() // dropped during the handshake
		return
	}
	s.counters.Update(func(st *Stats) { st.Connects++ })
	s.wg.Add(1)
	s.mu.Unlock()
	go s.writeEvents(ec)
	// Read (and discard) what the client sends, so pings are answered and
	// a closed connection is noticed.
	for {
		if _, _, err := conn.Read(s.ctx); err != nil {
			break
		}
	}
	s.mu.Lock()
	s.dropLocked(ec)
	s.mu.Unlock()
}

// writeEvents sends ec's queued events until it is dropped.
func (s *Server) writeEvents(ec *eventConn) {
	defer s.wg.Done()
	defer ec.conn.CloseNow()
	for {
		select {
		case msg := <-ec.queue:
			ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
			err := ec.conn.Write(ctx, websocket.MessageText, msg)
			cancel()
			if err != nil {
				s.mu.Lock()
				s.dropLocked(ec)
				s.mu.Unlock()
				return
			}
		case <-ec.done:
			return
		}
	}
}

// dropLocked forgets ec and closes it (events still queued are lost).
func (s *Server) dropLocked(ec *eventConn) {
	if _, ok := s.conns[ec]; !ok {
		return
	}
	delete(s.conns, ec)
	close(ec.done)
	if ec.conn != nil {
		ec.conn.CloseNow()
	}
	s.counters.Update(func(st *Stats) { st.Listeners-- })
}

// DropEvents closes every events websocket at once, as a network failure
// or an Asterisk restart would; events until the next connection are lost.
// It returns how many were open.
func (s *Server) DropEvents() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for ec := range s.conns {
		s.dropLocked(ec)
		n++
	}
	return n
}

// listeningLocked reports whether a websocket of application app is open.
func (s *Server) listeningLocked(app string) bool {
	for ec := range s.conns {
		if ec.apps[app] {
			return true
		}
	}
	return false
}

// emitLocked sends event ev (its type and fields) to the websockets of
// application app, adding timestamp, application and asterisk_id. Events
// are queued under s.mu, so every websocket sees them in one order.
func (s *Server) emitLocked(app string, ev map[string]any) {
	ev["timestamp"] = time.Now().UTC().Format(TimeLayout)
	ev["application"] = app
	ev["asterisk_id"] = "00:00:00:00:00:01"
	msg, err := json.Marshal(ev)
	if err != nil {
		return
	}
	sent := 0
	for ec := range s.conns {
		if !ec.apps[app] {
			continue
		}
		select {
		case ec.queue <- msg:
			sent++
		default:
			s.dropLocked(ec) // too slow
		}
	}
	s.counters.Update(func(st *Stats) {
		st.Events += sent
		if sent == 0 {
			st.Dropped++
		}
	})
}

// emitChannelLocked sends an event of type typ about ch with extra fields.
func (s *Server) emitChannelLocked(ch *channel, typ string, fields map[string]any) {
	ev := map[string]any{"type": typ, "channel": s.snapshot(ch)}
	for k, v := range fields {
		ev[k] = v
	}
	s.emitLocked(ch.app, ev)
}

// TimeLayout is the layout of ARI's timestamps
// ("2026-05-04T10:00:00.123+0000").
const TimeLayout = "2006-01-02T15:04:05.000-0700"

// ChannelJSON is ARI's Channel model.
type ChannelJSON struct {
	ID           string            `json:"id"`
	Name         string            `json:"name"`
	State        string            `json:"state"`
	ProtocolID   string            `json:"protocol_id"`
	Caller       CallerJSON        `json:"caller"`
	Connected    CallerJSON        `json:"connected"`
	AccountCode  string            `json:"accountcode"`
	Dialplan     DialplanJSON      `json:"dialplan"`
	CreationTime string            `json:"creationtime"`
	Language     string            `json:"language"`
	ChannelVars  map[string]string `json:"channelvars,omitempty"`
}

// CallerJSON is ARI's CallerID model.
type CallerJSON struct {
	Name   string `json:"name"`
	Number string `json:"number"`
}

// DialplanJSON is ARI's DialplanCEP model.
type DialplanJSON struct {
	Context  string `json:"context"`
	Exten    string `json:"exten"`
	Priority int    `json:"priority"`
	AppName  string `json:"app_name"`
	AppData  string `json:"app_data"`
}

// snapshot is ch's Channel JSON.
func (s *Server) snapshot(ch *channel) ChannelJSON {
	j := ChannelJSON{ID: ch.id, Name: ch.name, State: ch.state, Caller: CallerJSON{Number: ch.callerID},
		Dialplan:     DialplanJSON{Context: "default", Exten: ch.number, Priority: 1},
		CreationTime: ch.created.UTC().Format(TimeLayout), Language: "en"}
	if ch.stasis {
		j.Dialplan.AppName, j.Dialplan.AppData = "Stasis", ch.app
	}
	return j
}
