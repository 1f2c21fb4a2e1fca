package web

import (
	"context"
	"net/http"
	"time"

	"github.com/julienschmidt/httprouter"
)

// health answers 200 {"status":"ok","version":...}, or 503 with status
// "unavailable" when the database cannot be read within two seconds.
func (s *Server) health(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.db.Ping(ctx); err != nil {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "version": s.version})
		return nil
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok", "version": s.version})
	return nil
}
