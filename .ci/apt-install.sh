#!/usr/bin/env bash
# .ci/apt-install.sh LABEL BINARY PACKAGE...: installs Debian's PACKAGEs with
# apt-get unless BINARY is already there (as root, as CI runs; no apt-get or
# no root is an error naming the missing BINARY). The package lists are
# refreshed first only when they do not offer the first package (a machine
# whose lists were never fetched), or when the install fails on stale lists
# (lists older than the mirror name files it no longer has). apt-get's output
# is shown only when it fails. The peers of the tests (.ci/chromium.sh,
# .ci/pebble.sh) install through it.
set -euo pipefail

label=$1
bin=$2
shift 2
packages=("$@")

if [[ -x "${bin}" ]]; then
	echo "${label}: using ${bin}"
	exit 0
fi
if ! command -v apt-get >/dev/null; then
	echo "${label}: ${bin} is missing and this machine has no apt-get" >&2
	exit 1
fi
if [[ "$(id -u)" -ne 0 ]]; then
	echo "${label}: ${bin} is missing; installing it needs root (apt-get install ${packages[*]})" >&2
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

# apt-cache policy prints "Candidate: (none)" (or nothing) when the lists do
# not know the package.
candidate="$(apt-cache policy "${packages[0]}" 2>/dev/null | awk '/Candidate:/ {print $2}')"
if [[ -z "${candidate}" || "${candidate}" == "(none)" ]]; then
	echo "${label}: refreshing the package lists"
	quietly update
fi
echo "${label}: installing Debian's ${packages[*]}"
if ! quietly install -y --no-install-recommends "${packages[@]}"; then
	echo "${label}: install failed; refreshing the package lists and trying again"
	quietly update
	quietly install -y --no-install-recommends "${packages[@]}"
fi
