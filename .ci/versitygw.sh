#!/usr/bin/env bash
# Installs the versitygw S3 server that store/objstore's remote-mode integration
# test runs against. The binary lands in <repo>/.cache/bin/versitygw and is only
# built when absent (a cold build takes about 75 s). Override the version with
# VERSITYGW_VERSION; the test itself finds the binary through OUTDIAL_VERSITYGW,
# <repo>/.cache/bin/versitygw or PATH.
set -euo pipefail

version="${VERSITYGW_VERSION:-v1.8.0}"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin_dir="${repo}/.cache/bin"
bin="${bin_dir}/versitygw"

if [[ -x "${bin}" ]]; then
	echo "versitygw: using ${bin}"
	exit 0
fi

mkdir -p "${bin_dir}"
echo "versitygw: installing github.com/versity/versitygw/cmd/versitygw@${version} into ${bin_dir}"
# Build outside the repository so its go.mod does not take part.
cd "${TMPDIR:-/tmp}"
GOBIN="${bin_dir}" go install "github.com/versity/versitygw/cmd/versitygw@${version}"
echo "versitygw: installed ${bin}"
