#!/usr/bin/env bash
# Installs Debian's chromium, the headless browser the console's real-browser
# tests (web/console/browsertest) drive through chromedp. Does nothing when
# /usr/bin/chromium is already there; otherwise installs the package with
# apt-get (as root, as CI runs), refreshing the package lists first only when
# they do not offer the package or the install fails on stale lists. The tests
# find the browser at /usr/bin/chromium, or wherever $CHROMIUM points.
set -euo pipefail

bin=/usr/bin/chromium
if [[ -x "${bin}" ]]; then
	echo "chromium: using ${bin}"
	exit 0
fi
if ! command -v apt-get >/dev/null; then
	echo "chromium: ${bin} is missing and this machine has no apt-get" >&2
	exit 1
fi
if [[ "$(id -u)" -ne 0 ]]; then
	echo "chromium: ${bin} is missing; installing it needs root (apt-get install chromium)" >&2
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive
# Fonts with the package, so pages (and screenshots) render text on a machine
# without any.
packages=(chromium fonts-dejavu-core)

log="$(mktemp)"
trap 'rm -f "${log}"' EXIT

# quietly runs apt-get with its arguments; its output is shown only when it
# fails.
quietly() {
	if ! apt-get "$@" >"${log}" 2>&1; then
		cat "${log}" >&2
		return 1
	fi
}

# apt-cache policy prints "Candidate: (none)" (or nothing) when the lists do
# not know the package: a machine whose lists were never fetched.
candidate="$(apt-cache policy chromium 2>/dev/null | awk '/Candidate:/ {print $2}')"
if [[ -z "${candidate}" || "${candidate}" == "(none)" ]]; then
	echo "chromium: refreshing the package lists"
	quietly update
fi
echo "chromium: installing Debian's chromium"
if ! quietly install -y --no-install-recommends "${packages[@]}"; then
	# Lists older than the mirror name files it no longer has.
	echo "chromium: install failed; refreshing the package lists and trying again"
	quietly update
	quietly install -y --no-install-recommends "${packages[@]}"
fi
# The binary itself: Debian's launcher script complains on stderr about
# things headless runs do not need.
/usr/lib/chromium/chromium --version
