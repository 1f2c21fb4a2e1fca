package cmd

import (
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/spf13/pflag"

	"github.com/outdial/outdial/dialer/phone"
)

// addLogFlags adds --log-level and --log-format (env OUTDIAL_LOG_LEVEL,
// OUTDIAL_LOG_FORMAT).
func addLogFlags(f *pflag.FlagSet) {
	f.String("log-level", "info", "log level: debug, info, warn, error")
	f.String("log-format", "auto", "log format: json, text, or auto (json when stderr is not a terminal, text when it is)")
}

// newLogger builds the service's one logger, on w (the command's stderr),
// from --log-level and --log-format: every component logs through it, so
// all lines share the format. Phone numbers in any message or string value
// are masked (phone.NewMaskingHandler).
func newLogger(f *pflag.FlagSet, w io.Writer) (*slog.Logger, error) {
	level, _ := f.GetString("log-level")
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	format, _ := f.GetString("log-format")
	if format == "auto" {
		format = "json"
		if isTerminal(w) {
			format = "text"
		}
	}
	opts := &slog.HandlerOptions{Level: lv}
	var h slog.Handler
	switch format {
	case "json":
		h = slog.NewJSONHandler(w, opts)
	case "text":
		h = slog.NewTextHandler(w, opts)
	default:
		return nil, fmt.Errorf("--log-format %q: want json, text or auto", format)
	}
	return slog.New(phone.NewMaskingHandler(h)), nil
}

// isTerminal reports whether w is a character device (a terminal; also
// /dev/null, where the format does not matter), without a dependency.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
