// Command outdial runs outbound voice campaigns: one binary serving the HTTP
// API, the bundled object store and the in-process dialer.
package main

import (
	"os"

	"github.com/outdial/outdial/cmd"
)

func main() { os.Exit(cmd.Execute()) }
