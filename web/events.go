package web

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/outdial/outdial/store"
)

const (
	// pingEvery is the interval of the ": ping" comment (API.md 10).
	pingEvery = 15 * time.Second
	// writeWait bounds one write to a stream's client: a client that does
	// not read for that long loses its stream (it can reconnect).
	writeWait = 30 * time.Second
	// replayPage is the page of a Last-Event-ID replay; orgSnapshots caps
	// the campaigns an organization-wide stream greets with a snapshot.
	replayPage   = 1000
	orgSnapshots = 200
)

// campaignEvents streams campaign id's events (API.md 10).
func (s *Server) campaignEvents(w http.ResponseWriter, r *http.Request, ps httprouter.Params, org int64) error {
	id, err := pathID(ps, "campaign_id")
	if err != nil {
		return err
	}
	if s.hub == nil {
		return errStatus(http.StatusServiceUnavailable, "the dialer is not running")
	}
	ctx := r.Context()
	if _, err := s.db.GetCampaign(ctx, org, id); err != nil {
		return err
	}
	lastID, err := lastEventID(r)
	if err != nil {
		return err
	}
	if r.Method == http.MethodHead {
		if err := s.streams.refusal(w, principalOf(r)); err != nil {
			return err
		}
		startStream(w)
		return nil
	}
	st := newStream(id, org)
	if err := s.streams.admit(w, r, st, principalOf(r)); err != nil {
		return err
	}
	defer s.streams.release(st)
	if err := s.hub.subscribe(ctx, id, org, st); err != nil {
		return err
	}
	defer s.hub.unsubscribe(st)
	out := startStream(w)
	// Replay after subscribing: what the feed hands over from here on
	// starts where this read ends, or earlier (skipped below).
	replayed := int64(0)
	for lastID >= 0 {
		logs, err := s.db.LogsAfter(ctx, id, lastID, replayPage)
		if err != nil {
			return nil // the stream has started: the client reconnects
		}
		for _, e := range logs {
			out.log(e)
			lastID, replayed = e.ID, e.ID
		}
		if len(logs) < replayPage {
			break
		}
	}
	if out.flush() != nil {
		return nil
	}
	s.pump(r, out, st, replayed)
	return nil
}

// orgEvents streams the snapshots of every campaign of the organization
// (API.md 10).
func (s *Server) orgEvents(w http.ResponseWriter, r *http.Request, _ httprouter.Params, org int64) error {
	if s.hub == nil {
		return errStatus(http.StatusServiceUnavailable, "the dialer is not running")
	}
	if r.Method == http.MethodHead {
		if err := s.streams.refusal(w, principalOf(r)); err != nil {
			return err
		}
		startStream(w)
		return nil
	}
	st := newStream(0, org)
	if err := s.streams.admit(w, r, st, principalOf(r)); err != nil {
		return err
	}
	defer s.streams.release(st)
	ids, err := s.db.UnfinishedCampaignIDs(r.Context(), org, orgSnapshots)
	if err != nil {
		return err
	}
	if err := s.hub.subscribeOrg(org, ids, st); err != nil {
		return err
	}
	defer s.hub.unsubscribe(st)
	out := startStream(w)
	if out.flush() != nil {
		return nil
	}
	s.pump(r, out, st, 0)
	return nil
}

// pump writes what st receives until the client goes, the campaign is
// final, or the server shuts down. Log entries up to skipThrough were
// replayed already.
func (s *Server) pump(r *http.Request, out *sseWriter, st *stream, skipThrough int64) {
	ping := time.NewTicker(pingEvery)
	defer ping.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.hub.closing:
			return
		case <-ping.C:
			out.comment("ping")
		case <-st.wake:
			p := st.take()
			if p.ended {
				if p.reason != "" {
					out.comment(p.reason)
					out.flush() //nolint:errcheck // ending anyway
				}
				return
			}
			for _, fr := range p.logs {
				if fr.id > skipThrough {
					out.frame(fr)
				}
			}
			for _, fr := range p.calls {
				out.frame(fr)
			}
			for _, snap := range p.snaps {
				out.event("campaign", "", snap)
			}
			if p.overflow || p.final && len(p.snaps) > 0 {
				out.flush() //nolint:errcheck // ending anyway
				return
			}
		}
		if out.flush() != nil {
			return
		}
	}
}

// lastEventID parses the Last-Event-ID header: -1 when absent.
func lastEventID(r *http.Request) (int64, error) {
	v := strings.TrimSpace(r.Header.Get("Last-Event-ID"))
	if v == "" {
		return -1, nil
	}
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || id < 0 {
		var p Problems
		p.Add([]any{"header", "last-event-id"}, "int_parsing",
			"Input should be a valid integer, unable to parse string as an integer", v, nil)
		return 0, p.Err()
	}
	return id, nil
}

// sseWriter writes Server-Sent Events, each write bounded by writeWait.
type sseWriter struct {
	w   *bufio.Writer
	rc  *http.ResponseController
	err error
}

// startStream sends the event stream's headers.
func startStream(w http.ResponseWriter) *sseWriter {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // a proxy in front must not buffer it
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	out := &sseWriter{w: bufio.NewWriter(w), rc: rc}
	out.flush() //nolint:errcheck // the next write sees it
	return out
}

func (o *sseWriter) event(name, id string, v any) {
	if o.err != nil {
		return
	}
	data, err := json.Marshal(v)
	if err != nil {
		o.err = err
		return
	}
	if id != "" {
		fmt.Fprintf(o.w, "id: %s\n", id)
	}
	fmt.Fprintf(o.w, "event: %s\ndata: %s\n\n", name, data)
}

func (o *sseWriter) log(e store.LogEntry) {
	fr, err := logFrame(e)
	if err != nil {
		o.err = err
		return
	}
	o.frame(fr)
}

// frame writes an encoded event.
func (o *sseWriter) frame(fr frame) {
	if o.err == nil {
		o.w.Write(fr.b) //nolint:errcheck // flush reports it
	}
}

func (o *sseWriter) comment(text string) {
	if o.err == nil {
		fmt.Fprintf(o.w, ": %s\n\n", text)
	}
}

// flush sends what was written to the client.
func (o *sseWriter) flush() error {
	if o.err != nil {
		return o.err
	}
	_ = o.rc.SetWriteDeadline(time.Now().Add(writeWait))
	if err := o.w.Flush(); err != nil {
		o.err = err
		return err
	}
	if err := o.rc.Flush(); err != nil {
		o.err = err
	}
	return o.err
}

// CloseStreams ends every event stream; call it when the server shuts down
// (http.Server.RegisterOnShutdown), since Shutdown waits for the requests
// under way, and a stream lasts as long as its client stays.
func (s *Server) CloseStreams() {
	if s.hub != nil {
		s.hub.close()
	}
}

// touched tells the streams of campaign id that the API changed it.
func (s *Server) touched(id int64) {
	if s.hub != nil {
		s.hub.touch(id)
	}
}
