package web

import (
	_ "embed"
	"net/http"

	"github.com/julienschmidt/httprouter"
)

// openAPIDocument is the hand-written OpenAPI 3.1 description of the API,
// kept true to the routes by TestOpenAPICoversRoutes.
//
//go:embed openapi.json
var openAPIDocument []byte

// OpenAPIDocument returns the embedded OpenAPI document.
func OpenAPIDocument() []byte { return openAPIDocument }

func (s *Server) openAPI(w http.ResponseWriter, _ *http.Request, _ httprouter.Params) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(openAPIDocument) //nolint:errcheck // client gone
	return nil
}
