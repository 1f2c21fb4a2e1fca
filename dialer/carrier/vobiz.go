package carrier

// Placeholder until the Vobiz adapter lands (issue 6): it dials nothing.

import (
	"context"
	"errors"
)

var errNoVobiz = errors.New("vobiz: dialing is not supported yet")

func newVobiz(creds map[string]any, opts Options) (Carrier, error) { return nil, errNoVobiz }

func provisionVobiz(ctx context.Context, creds map[string]any, t Target, opts Options) (string, error) {
	return "", errNoVobiz
}
