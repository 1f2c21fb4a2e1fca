#!/usr/bin/env bash
# Runs govulncheck on the module against a vulnerability database built
# offline: the public database's host cannot be reached from our machines,
# but the Go module proxy can, and it serves golang.org/x/vulndb, the
# database's source (one OSV JSON file per report, under data/osv) with its
# own indexer (cmd/indexdb). So:
#   1. go mod download golang.org/x/vulndb@VULNDB_VERSION (default latest);
#   2. build its cmd/indexdb and index data/osv into
#      $OUTDIAL_VULNDB_CACHE/db/<version> (default
#      ~/.cache/outdial-vulndb, outside the clone so that CI's fresh clones
#      reuse it: each version is built and indexed once per machine);
#   3. go run golang.org/x/vuln/cmd/govulncheck@GOVULNCHECK_VERSION
#      -db file://<that dir> ./...
# Times on our 2-core machines: about 20 s once built and indexed; a new
# database version adds about 5 s; the first run on a machine compiles
# indexdb (about 70 s, its 470 packages) and govulncheck (about 6 s).
# govulncheck is built by the go command that runs this script, so it
# type-checks the standard library of the toolchain the module builds with:
# GOTOOLCHAIN, go1.27.3 unless set in the environment (GOTOOLCHAIN=local
# checks the machine's own Go). It exits non-zero when the code calls
# a known vulnerable function (standard library or module); vulnerabilities
# only in modules or packages we require but never call are listed, not
# fatal. Extra arguments are passed to govulncheck (e.g. -show verbose).
set -euo pipefail

export GOTOOLCHAIN="${GOTOOLCHAIN:-go1.27.3}"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
vulndb_version="${VULNDB_VERSION:-latest}"
govulncheck_version="${GOVULNCHECK_VERSION:-v1.9.0}"
cache="${OUTDIAL_VULNDB_CACHE:-${XDG_CACHE_HOME:-${HOME}/.cache}/outdial-vulndb}"

# Module downloads and tool builds happen outside the repository, so its
# go.mod takes no part and is never changed.
work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT

json="$(cd "${work}" && go mod download -json "golang.org/x/vulndb@${vulndb_version}")"
field() { sed -n "s/^[[:space:]]*\"$1\": \"\(.*\)\",\{0,1\}$/\1/p" <<<"${json}"; }
version="$(field Version)"
dir="$(field Dir)"
if [[ -z "${version}" || ! -d "${dir}/data/osv" ]]; then
	echo "govulncheck: golang.org/x/vulndb@${vulndb_version} has no data/osv:" >&2
	echo "${json}" >&2
	exit 1
fi

db="${cache}/db/${version}"
if [[ ! -f "${db}/index/db.json" ]]; then
	echo "govulncheck: indexing golang.org/x/vulndb@${version} into ${db}"
	bin="${cache}/bin/${version}"
	if [[ ! -x "${bin}/indexdb" ]]; then
		(cd "${work}" && GOBIN="${bin}" go install "golang.org/x/vulndb/cmd/indexdb@${version}")
	fi
	rm -rf "${db}.tmp"
	"${bin}/indexdb" -vulns "${dir}/data/osv" -out "${db}.tmp"
	rm -rf "${db}"
	mv "${db}.tmp" "${db}"
fi

echo "govulncheck ${govulncheck_version} with $(go env GOVERSION), database golang.org/x/vulndb@${version}"
cd "${repo}"
go run "golang.org/x/vuln/cmd/govulncheck@${govulncheck_version}" -db "file://${db}" "$@" ./...
