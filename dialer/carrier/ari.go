package carrier

// Placeholder until the ARI adapter lands (issue 6): it dials nothing.

import "errors"

var errNoARI = errors.New("ari: dialing is not supported yet")

func newARI(creds map[string]any, opts Options) (Carrier, error) { return nil, errNoARI }
