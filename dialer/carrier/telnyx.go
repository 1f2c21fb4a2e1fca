package carrier

// Placeholder until the Telnyx adapter lands (issue 6): it dials nothing.

import (
	"context"
	"errors"
)

var errNoTelnyx = errors.New("telnyx: dialing is not supported yet")

func newTelnyx(creds map[string]any, opts Options) (Carrier, error) { return nil, errNoTelnyx }

func provisionTelnyx(ctx context.Context, creds map[string]any, t Target, opts Options) (string, error) {
	return "", errNoTelnyx
}
