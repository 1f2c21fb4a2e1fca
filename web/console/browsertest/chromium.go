package browsertest

import (
	"io"

	"github.com/chromedp/chromedp"
)

// AllocatorOptions are the options the console's browser tests and
// bench/consolebench start Chromium at path with: chromedp's defaults
// (headless, no first run, no extensions...) plus what Chromium needs on
// our machines: no sandbox (we run as root), no GPU, and nothing that
// reaches for the network by itself (QUIC, background networking, component
// updates, sync), whose connections the closed network refuses. The window
// is width x height; the browser's output goes to output. chromedp starts
// the browser with a fresh temporary --user-data-dir and removes it when
// the browser ends; it talks to it over a pipe, so no debugging port is
// opened.
func AllocatorOptions(path string, width, height int, output io.Writer) []chromedp.ExecAllocatorOption {
	return append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.WindowSize(width, height),
		chromedp.CombinedOutput(output),
	)
}
