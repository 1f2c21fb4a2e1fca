package carrier

// Placeholder until the Vonage adapter lands (issue 6): it dials nothing.

import "errors"

var errNoVonage = errors.New("vonage: dialing is not supported yet")

func newVonage(creds map[string]any, opts Options) (Carrier, error) { return nil, errNoVonage }
