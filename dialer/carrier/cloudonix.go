package carrier

// Placeholder until the Cloudonix adapter lands (issue 6): it dials nothing.

import (
	"context"
	"errors"
)

var errNoCloudonix = errors.New("cloudonix: dialing is not supported yet")

func newCloudonix(creds map[string]any, opts Options) (Carrier, error) { return nil, errNoCloudonix }

func provisionCloudonix(ctx context.Context, creds map[string]any, t Target, opts Options) (string, error) {
	return "", errNoCloudonix
}
