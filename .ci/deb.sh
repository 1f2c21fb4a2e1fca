#!/usr/bin/env bash
# CI step for the Debian package (docs/api.md 8.4), as root on this machine:
# builds it with packaging/build-deb.sh, installs it with dpkg -i, checks what
# the install made (user, data directory, conffile, unit neither enabled nor
# started), checks the unit with systemd-analyze verify, runs the unit's
# ExecStart as its user with its environment file and gets /api/v1/health;
# sets a domain in the environment file, as README's "Run it on a server"
# does, and gets health over https with the certificate the service obtains
# from Debian's pebble on loopback (its ACME server, standing in for Let's
# Encrypt); installs the package again over itself (an upgrade: data, edited
# settings and the cached certificate kept: no new order), then checks that
# dpkg -r and dpkg -P keep the data and the user, and that
# OUTDIAL_PURGE_DATA=yes dpkg -P removes them.
#
# No systemd runs on these machines, so the maintainer scripts take their
# no-systemd path; the unit's sandbox itself is not exercised here.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if [[ "$(id -u)" -ne 0 ]]; then
	echo "deb: needs root (dpkg -i, runuser)" >&2
	exit 1
fi
for tool in dpkg dpkg-deb runuser curl pgrep; do
	if ! command -v "${tool}" >/dev/null; then
		echo "deb: ${tool} is missing" >&2
		exit 1
	fi
done

export DEBIAN_FRONTEND=noninteractive
# systemd-analyze comes with Debian's systemd package.
if ! command -v systemd-analyze >/dev/null; then
	echo "deb: installing Debian's systemd for systemd-analyze"
	apt-get install -y --no-install-recommends systemd >/dev/null 2>&1 ||
		{ apt-get update >/dev/null && apt-get install -y --no-install-recommends systemd >/dev/null; }
fi

data=/var/lib/outdial
env_file=/etc/outdial/outdial.env
unit=/lib/systemd/system/outdial.service

fail() {
	echo "deb: FAIL: $*" >&2
	exit 1
}

# The data directory this script made (a real install's is never touched).
marker="${data}/.made-by-ci-deb-sh"

# purge_ours removes the package, the data directory and the user when no
# data directory exists or it is this script's; it refuses a real install's.
purge_ours() {
	if [[ -e "${data}" && ! -e "${marker}" ]]; then
		echo "deb: ${data} exists and was not made by this script: refusing to touch it" >&2
		return 1
	fi
	if dpkg-query -W -f='${Status}' outdial 2>/dev/null | grep -q 'installed\|config-files'; then
		OUTDIAL_PURGE_DATA=yes dpkg -P outdial >/dev/null
	fi
	rm -rf "${data}"
	if getent passwd outdial >/dev/null; then userdel outdial; fi
	if getent group outdial >/dev/null; then groupdel outdial; fi
}

# A run cut short leaves the package or its data behind: start clean.
if [[ -e "${data}" ]] || getent passwd outdial >/dev/null ||
	dpkg-query -W -f='${Status}' outdial 2>/dev/null | grep -q 'installed\|config-files'; then
	echo "deb: removing what an earlier run left"
	purge_ours
fi

out="$(mktemp -d)"
server_pid=""
finished=""
cleanup() {
	if [[ -n "${pebble_pid:-}" ]]; then
		kill "${pebble_pid}" 2>/dev/null || true
	fi
	if [[ -n "${server_pid}" ]]; then
		pkill -TERM -P "${server_pid}" 2>/dev/null || true
		wait "${server_pid}" 2>/dev/null || true
	fi
	if [[ -z "${finished}" ]]; then
		purge_ours || true
	fi
	rm -rf "${out}"
}
trap cleanup EXIT

echo "== deb: build"
start=$(date +%s)
deb="$(./packaging/build-deb.sh "${out}" | tail -n 1)"
[[ -f "${deb}" && "${deb}" == "${out}"/*.deb ]] || fail "build-deb.sh's last line ${deb} is not a package in ${out}"
echo "deb: ${deb} ($(stat -c %s "${deb}") bytes, built in $(($(date +%s) - start)) s)"
extra="$(find "${out}" -mindepth 1 ! -path "${deb}")"
[[ -z "${extra}" ]] || fail "build-deb.sh left more than the package in OUTDIR: ${extra}"

echo "== deb: dpkg -i"
dpkg -i "${deb}"
[[ -x /usr/bin/outdial && -f "${unit}" && -f "${env_file}" ]] || fail "files not installed"
touch "${marker}"
dpkg-query -W -f='${Conffiles}\n' outdial | grep -q "^ ${env_file} " || fail "${env_file} is not a conffile"
uid="$(id -u outdial)"
((uid < 1000)) || fail "user outdial has uid ${uid}, not a system uid"
[[ "$(getent passwd outdial | cut -d: -f7)" == /usr/sbin/nologin ]] || fail "user outdial has a login shell"
[[ "$(stat -c '%a %U %G' "${data}")" == "750 outdial outdial" ]] || fail "${data} is $(stat -c '%a %U %G' "${data}")"
[[ "$(stat -c '%a %U %G' "${env_file}")" == "640 root outdial" ]] || fail "${env_file} is $(stat -c '%a %U %G' "${env_file}")"
if compgen -G "/etc/systemd/system/*.wants/outdial.service" >/dev/null; then
	fail "installing enabled the unit"
fi
# Every variable line of the packaged env file is commented out.
if grep -v '^#' "${env_file}" | grep -q .; then
	fail "${env_file} sets something by default"
fi

echo "== deb: systemd-analyze verify"
verify="$(systemd-analyze verify "${unit}" 2>&1)" || fail "systemd-analyze verify: ${verify}"
if grep -q 'outdial' <<<"${verify}"; then
	fail "systemd-analyze verify warns about the unit: ${verify}"
fi
grep -qx 'ExecStart=/usr/bin/outdial serve --data /var/lib/outdial' "${unit}" || fail "unexpected ExecStart"

# start_pebble runs Debian's pebble (an ACME server) on loopback with a
# self-signed certificate for its own https listeners, written where the
# service's user can read it (the CA root of --acme-domain's directory), and
# fetches the root pebble issues from.
pebble_pid=""
start_pebble() {
	.ci/pebble.sh
	local dir="${out}/pebble"
	mkdir -p "${dir}"
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=localhost \
		-addext "subjectAltName=DNS:localhost,IP:127.0.0.1" -keyout "${dir}/key.pem" -out "${dir}/cert.pem" 2>/dev/null
	install -m 0644 "${dir}/cert.pem" "${data}/ci-acme-ca.pem"
	cat >"${dir}/pebble.json" <<-JSON
		{"pebble": {"listenAddress": "127.0.0.1:14000", "managementListenAddress": "127.0.0.1:15000",
		 "certificate": "${dir}/cert.pem", "privateKey": "${dir}/key.pem", "httpPort": 5002, "tlsPort": 5001,
		 "ocspResponderURL": "", "externalAccountBindingRequired": false}}
	JSON
	PEBBLE_VA_ALWAYS_VALID=1 PEBBLE_VA_NOSLEEP=1 PEBBLE_WFE_NONCEREJECT=0 \
		"${PEBBLE:-/usr/bin/pebble}" -config "${dir}/pebble.json" >"${out}/pebble.log" 2>&1 &
	pebble_pid=$!
	for _ in $(seq 1 100); do
		curl -fsS --cacert "${dir}/cert.pem" -o "${out}/pebble-root.pem" https://127.0.0.1:15000/roots/0 2>/dev/null && return 0
		sleep 0.1
	done
	fail "pebble did not start: $(cat "${out}/pebble.log")"
}

# run_unit runs the unit's ExecStart as its User with its EnvironmentFile
# (parsed as systemd does: VAR=value lines, # comments), in the background,
# and waits until /api/v1/health answers; it sets server_pid, base and
# curl_opts. With OUTDIAL_ACME_DOMAIN in the file, it waits for the
# certificate and calls https://<domain>:<port> with pebble's root trusted.
curl_opts=()
run_unit() {
	local exec_start user envs=() line log="${out}/serve.log"
	exec_start="$(sed -n 's/^ExecStart=//p' "${unit}")"
	user="$(sed -n 's/^User=//p' "${unit}")"
	while IFS= read -r line; do
		[[ -z "${line}" || "${line}" == \#* ]] && continue
		envs+=("${line}")
	done <"$(sed -n 's/^EnvironmentFile=//p' "${unit}")"
	# shellcheck disable=SC2086 # ExecStart's words
	runuser -u "${user}" -- env -i PATH=/usr/bin:/bin "${envs[@]}" ${exec_start} >"${log}" 2>&1 &
	server_pid=$!
	local addr=""
	for _ in $(seq 1 200); do
		addr="$(sed -n 's/.*"msg":"outdial listening","addr":"\([^"]*\)".*/\1/p' "${log}" | head -n 1)"
		[[ -n "${addr}" ]] && break
		kill -0 "${server_pid}" 2>/dev/null || fail "serve exited: $(cat "${log}")"
		sleep 0.1
	done
	[[ -n "${addr}" ]] || fail "serve did not listen: $(cat "${log}")"
	base="http://${addr}"
	curl_opts=()
	local domain
	domain="$(sed -n 's/^OUTDIAL_ACME_DOMAIN=//p' "${env_file}")"
	if [[ -n "${domain}" ]]; then
		for _ in $(seq 1 600); do
			grep -q '"msg":"ACME certificate ready"' "${log}" && break
			grep -q '"msg":"ACME certificate not obtained"' "${log}" && fail "no certificate: $(cat "${log}")"
			sleep 0.1
		done
		grep -q '"msg":"ACME certificate ready"' "${log}" || fail "no certificate within 60 s: $(cat "${log}")"
		base="https://${domain}:${addr##*:}"
		curl_opts=(--resolve "${domain}:${addr##*:}:127.0.0.1" --cacert "${out}/pebble-root.pem")
	fi
	local health
	health="$(curl -fsS --max-time 10 -D "${out}/headers" "${curl_opts[@]}" "${base}/api/v1/health")" || fail "health: $(cat "${log}")"
	grep -q '"status":"ok"' <<<"${health}" || fail "health said ${health}"
	if [[ -n "${domain}" ]]; then
		grep -qi '^strict-transport-security: max-age=31536000' "${out}/headers" || fail "no HSTS over https"
	fi
	echo "deb: ${exec_start} as ${user}: ${base}/api/v1/health: ${health}"
}

# stop_unit sends SIGTERM to the service (runuser's child: runuser itself
# would end its session with SIGKILL after a grace period, as systemd never
# does) and checks that it exits 0, which runuser passes on.
stop_unit() {
	local child rc=0
	child="$(pgrep -P "${server_pid}" -x outdial)" || fail "no outdial process under runuser"
	kill -TERM "${child}"
	wait "${server_pid}" || rc=$?
	server_pid=""
	((rc == 0)) || fail "serve exited ${rc} on SIGTERM: $(cat "${out}/serve.log")"
	grep -q '"msg":"shutting down"' "${out}/serve.log" || fail "serve did not shut down on SIGTERM"
}

echo "== deb: run the unit's ExecStart as outdial"
# The settings an operator would write: any free loopback port, no metrics
# listener.
printf 'OUTDIAL_ADDR=127.0.0.1:0\nOUTDIAL_METRICS_ADDR=\n' >>"${env_file}"
key="$(runuser -u outdial -- /usr/bin/outdial apikey create --data "${data}" --org ci | tail -n 1)"
[[ "${key}" == odk_* ]] || fail "apikey create printed ${key}"
run_unit
curl -fsS -o /dev/null -H "Authorization: Bearer ${key}" "${base}/api/v1/campaign" || fail "the key does not work"
stop_unit
[[ "$(stat -c '%U %a' "${data}/outdial.db")" == "outdial 600" ]] || fail "database is $(stat -c '%U %a' "${data}/outdial.db")"

echo "== deb: a domain set in the env file: https with an ACME certificate (pebble on loopback)"
start_pebble
printf '%s\n' OUTDIAL_ACME_DOMAIN=outdial.localhost OUTDIAL_ACME_DIRECTORY=https://127.0.0.1:14000/dir \
	"OUTDIAL_ACME_CA_ROOT=${data}/ci-acme-ca.pem" OUTDIAL_HTTP_ADDR=127.0.0.1:0 >>"${env_file}"
run_unit
curl -fsS -o /dev/null "${curl_opts[@]}" -H "Authorization: Bearer ${key}" "${base}/api/v1/campaign" || fail "the key does not work over https"
stop_unit
[[ "$(grep -c 'Added order' "${out}/pebble.log")" == 1 ]] || fail "pebble saw $(grep -c 'Added order' "${out}/pebble.log") orders, want 1"

echo "== deb: dpkg -i again (an upgrade): data, certificate and edited settings kept"
dpkg -i "${deb}"
grep -qx 'OUTDIAL_ACME_DOMAIN=outdial.localhost' "${env_file}" || fail "the upgrade replaced the edited ${env_file}"
run_unit
curl -fsS -o /dev/null "${curl_opts[@]}" -H "Authorization: Bearer ${key}" "${base}/api/v1/campaign" || fail "the key is gone after the upgrade"
stop_unit
[[ "$(grep -c 'Added order' "${out}/pebble.log")" == 1 ]] || fail "the restart ordered a new certificate"
kill "${pebble_pid}" && wait "${pebble_pid}" 2>/dev/null || true
pebble_pid=""

echo "== deb: dpkg -r keeps the data, the user and the settings"
dpkg -r outdial
[[ ! -e /usr/bin/outdial && ! -e "${unit}" ]] || fail "dpkg -r left the binary or the unit"
[[ -f "${data}/outdial.db" && -f "${data}/secret.key" ]] || fail "dpkg -r removed the data"
getent passwd outdial >/dev/null || fail "dpkg -r removed the user"
[[ -f "${env_file}" ]] || fail "dpkg -r removed the conffile"

echo "== deb: dpkg -P keeps the data and the user"
dpkg -P outdial
[[ ! -e "${env_file}" ]] || fail "dpkg -P left ${env_file}"
[[ -f "${data}/outdial.db" && -f "${data}/secret.key" ]] || fail "dpkg -P removed the data"
getent passwd outdial >/dev/null || fail "dpkg -P removed the user"

echo "== deb: installed again, it serves the kept data"
dpkg -i "${deb}"
runuser -u outdial -- /usr/bin/outdial apikey list --data "${data}" | grep -q ci || fail "the kept database lost its key"
printf 'OUTDIAL_ADDR=127.0.0.1:0\nOUTDIAL_METRICS_ADDR=\n' >>"${env_file}"
run_unit
curl -fsS -o /dev/null -H "Authorization: Bearer ${key}" "${base}/api/v1/campaign" || fail "the key does not work on the kept data"
stop_unit

echo "== deb: OUTDIAL_PURGE_DATA=yes dpkg -P removes data and user"
OUTDIAL_PURGE_DATA=yes dpkg -P outdial
[[ ! -e "${data}" ]] || fail "OUTDIAL_PURGE_DATA=yes dpkg -P left ${data}"
! getent passwd outdial >/dev/null || fail "OUTDIAL_PURGE_DATA=yes dpkg -P left the user"
! getent group outdial >/dev/null || fail "OUTDIAL_PURGE_DATA=yes dpkg -P left the group"
[[ ! -e /etc/outdial ]] || fail "dpkg -P left /etc/outdial"
finished=yes
echo "deb: ok"
