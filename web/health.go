package web

import (
	"context"
	"net/http"
	"time"

	"github.com/julienschmidt/httprouter"
)

// health answers 200 {"status":"ok","version":...,"node":...,"database":...},
// or 503 with status "unavailable" when the database cannot be read within
// two seconds. node is this process's name among the nodes sharing the
// database, database the engine under the store ("sqlite" or "postgres",
// API.md 16); both are in the 503 too.
func (s *Server) health(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	body := map[string]string{"status": "ok", "version": s.version, "node": s.node, "database": s.db.Engine()}
	if err := s.db.Ping(ctx); err != nil {
		body["status"] = "unavailable"
		writeJSON(w, http.StatusServiceUnavailable, body)
		return nil
	}
	writeJSON(w, http.StatusOK, body)
	return nil
}
