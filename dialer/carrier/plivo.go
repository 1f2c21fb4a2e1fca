package carrier

// Placeholder until the Plivo adapter lands (issue 6): it dials nothing.

import (
	"context"
	"errors"
)

var errNoPlivo = errors.New("plivo: dialing is not supported yet")

func newPlivo(creds map[string]any, opts Options) (Carrier, error) { return nil, errNoPlivo }

func provisionPlivo(ctx context.Context, creds map[string]any, t Target, opts Options) (string, error) {
	return "", errNoPlivo
}
