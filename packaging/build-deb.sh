#!/usr/bin/env bash
# Builds the outdial Debian package: ./packaging/build-deb.sh OUTDIR
#
# Builds the release binary (CGO_ENABLED=0, -trimpath, stripped, the version
# set in cmd.Version, which /api/v1/health reports; the commit is the one Go
# records from the git checkout), then the package with nfpm (run with
# "go run" at a pinned version, from the Go module proxy; nothing else is
# needed). Writes only into OUTDIR (besides Go's build and module caches) and
# prints the package's absolute path as the last line of stdout; everything
# else goes to stderr.
#
#   VERSION  the package's version (default: from git: the tag vX.Y.Z at HEAD
#            as X.Y.Z, else <last tag or 0.0.0>+git<commit time UTC>.<commit>,
#            with .dirty when the work tree has changes)
#   GOARCH   the architecture to build for (default: this machine's)
set -euo pipefail

if [[ $# -ne 1 || -z "$1" ]]; then
	echo "usage: $0 OUTDIR" >&2
	exit 2
fi
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mkdir -p "$1"
out="$(cd "$1" && pwd)"
cd "${root}"

export GOTOOLCHAIN=go1.27.3
# nfpm's version: the newest the module proxy serves that builds here.
nfpm_version=v2.45.2

if [[ -z "${VERSION:-}" ]]; then
	if tag="$(git describe --tags --match 'v[0-9]*' --exact-match 2>/dev/null)"; then
		VERSION="${tag#v}"
	else
		base="$(git describe --tags --match 'v[0-9]*' --abbrev=0 2>/dev/null || echo v0.0.0)"
		when="$(TZ=UTC git log -1 --format=%cd --date=format-local:%Y%m%d%H%M%S)"
		VERSION="${base#v}+git${when}.$(git rev-parse --short=12 HEAD)"
	fi
	if [[ -n "$(git status --porcelain --untracked-files=no)" ]]; then
		VERSION="${VERSION}.dirty"
	fi
fi
VERSION="${VERSION#v}"
if [[ ! "${VERSION}" =~ ^[0-9][A-Za-z0-9.+~-]*$ ]]; then
	echo "build-deb: version ${VERSION} is not a Debian version (it must start with a digit)" >&2
	exit 2
fi
ARCH="$(go env GOARCH)"

# Everything temporary (the binary, the go command's and nfpm's scratch
# files) lives in OUTDIR and goes at exit.
work="$(mktemp -d "${out}/.build-deb.XXXXXX")"
trap 'rm -rf "${work}"' EXIT
export TMPDIR="${work}"

echo "build-deb: building outdial ${VERSION} for linux/${ARCH}" >&2
CGO_ENABLED=0 GOOS=linux go build -trimpath \
	-ldflags "-s -w -X github.com/outdial/outdial/cmd.Version=${VERSION}" \
	-o "${work}/outdial" . >&2

deb="${out}/outdial_${VERSION}_${ARCH}.deb"
echo "build-deb: packaging with nfpm ${nfpm_version}" >&2
OUTDIAL_BIN="${work}/outdial" VERSION="${VERSION}" ARCH="${ARCH}" \
	go run "github.com/goreleaser/nfpm/v2/cmd/nfpm@${nfpm_version}" package \
	--config packaging/nfpm.yaml --packager deb --target "${deb}" >&2
echo "${deb}"
