package cmd

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

func newVersion() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, the commit and the Go release it was built from",
		Long: `Print one line: outdial <version> (commit <hash>[-dirty], <go release>).

<version> is what GET /api/v1/health answers (set by a release build with
-ldflags "-X github.com/outdial/outdial/cmd.Version=v1.2.3"; "dev" otherwise).
The commit comes from the version-control information Go records in the binary
(go build -buildvcs=true in a git checkout): its first 12 hex digits, with
"-dirty" when the tree had uncommitted changes, or "unknown" without it.`,
		Args: cobra.NoArgs,
		Run: func(c *cobra.Command, _ []string) {
			fmt.Fprintln(c.OutOrStdout(), versionLine(debug.ReadBuildInfo))
		},
	}
}

// versionLine is `outdial version`'s line, from Version and the build
// information read returns.
func versionLine(read func() (*debug.BuildInfo, bool)) string {
	commit, goVersion := "unknown", runtime.Version()
	if info, ok := read(); ok {
		if info.GoVersion != "" {
			goVersion = info.GoVersion
		}
		var revision, modified string
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				revision = s.Value
			case "vcs.modified":
				modified = s.Value
			}
		}
		if revision != "" {
			commit = revision[:min(12, len(revision))]
			if modified == "true" {
				commit += "-dirty"
			}
		}
	}
	return fmt.Sprintf("outdial %s (commit %s, %s)", Version, commit, goVersion)
}
