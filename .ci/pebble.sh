#!/usr/bin/env bash
# Installs Debian's pebble, the RFC 8555 ACME test server the ACME test
# (cmd/acme_test.go) runs on loopback. Does nothing when /usr/bin/pebble is
# already there; otherwise installs the package with apt-get (as root, as CI
# runs), refreshing the package lists first only when they do not offer the
# package or the install fails on stale lists. The test finds pebble at
# /usr/bin/pebble, or wherever $PEBBLE points.
set -euo pipefail

bin=/usr/bin/pebble
if [[ -x "${bin}" ]]; then
	echo "pebble: using ${bin}"
	exit 0
fi
if ! command -v apt-get >/dev/null; then
	echo "pebble: ${bin} is missing and this machine has no apt-get" >&2
	exit 1
fi
if [[ "$(id -u)" -ne 0 ]]; then
	echo "pebble: ${bin} is missing; installing it needs root (apt-get install pebble)" >&2
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive
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

candidate="$(apt-cache policy pebble 2>/dev/null | awk '/Candidate:/ {print $2}')"
if [[ -z "${candidate}" || "${candidate}" == "(none)" ]]; then
	echo "pebble: refreshing the package lists"
	quietly update
fi
echo "pebble: installing Debian's pebble"
if ! quietly install -y --no-install-recommends pebble; then
	echo "pebble: install failed; refreshing the package lists and trying again"
	quietly update
	quietly install -y --no-install-recommends pebble
fi
dpkg-query -W pebble
