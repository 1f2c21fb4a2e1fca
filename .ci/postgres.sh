#!/usr/bin/env bash
# A throwaway PostgreSQL server for the tests that run on PostgreSQL
# (OUTDIAL_TEST_DATABASE_URL, store/internal/testdb).
#
#   url="$(.ci/postgres.sh start DIR)"   # DIR: a new, empty directory
#   .ci/postgres.sh stop DIR             # stops the server, removes DIR
#
# start finds a PostgreSQL 15 or newer server (initdb and pg_ctl in Debian's
# /usr/lib/postgresql/VERSION/bin, the newest, or else on PATH; Debian's
# postgresql is installed through .ci/apt-install.sh when neither has one),
# makes a new cluster in DIR/data and starts it on 127.0.0.1 on a free port,
# with its unix socket in DIR/socket, and prints on stdout only the URL of
# its superuser "outdial" (random password, scram-sha-256) on the database
# "postgres":
#
#   postgres://outdial:PASSWORD@127.0.0.1:PORT/postgres?sslmode=disable
#
# Progress goes to stderr; the server's log is DIR/postgres.log. The server
# is for tests only: no fsync, no synchronous commit, 300 connections (every
# test opens pools of its own). PostgreSQL refuses to run as root: run as
# root, the script runs the server as the user "postgres" (creating that
# user when missing) and gives it DIR. start registers nothing: the caller
# stops the server with stop DIR (a trap on EXIT), which is safe to run
# after a start that failed half way, and more than once.
set -euo pipefail

usage() {
	echo "usage: $0 start DIR | stop DIR" >&2
	exit 2
}
[[ $# -eq 2 ]] || usage
action=$1
dir=$2
[[ -n "${dir}" ]] || usage

say() {
	echo "postgres: $*" >&2
}

# as_server runs its arguments as the user the server runs as: "postgres"
# when this script runs as root, the caller otherwise.
as_server() {
	if [[ "$(id -u)" -eq 0 ]]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

# server_bindir prints the directory of the PostgreSQL server's initdb and
# pg_ctl: Debian's newest /usr/lib/postgresql/VERSION/bin, else the
# directory of the initdb on PATH when its pg_ctl is beside it. It prints
# nothing when there is none.
server_bindir() {
	local best="" best_version=0 candidate version
	for candidate in /usr/lib/postgresql/*/bin; do
		[[ -x "${candidate}/initdb" && -x "${candidate}/pg_ctl" ]] || continue
		version=$(basename "$(dirname "${candidate}")")
		[[ "${version}" =~ ^[0-9]+$ ]] || continue
		if ((version > best_version)); then
			best=${candidate}
			best_version=${version}
		fi
	done
	if [[ -n "${best}" ]]; then
		echo "${best}"
		return
	fi
	if candidate=$(command -v initdb) && [[ -x "$(dirname "${candidate}")/pg_ctl" ]]; then
		dirname "${candidate}"
	fi
}

# free_port prints a TCP port that nothing listens on at 127.0.0.1 now.
free_port() {
	local port tries
	for tries in $(seq 1 50); do
		port=$((20000 + RANDOM % 40000))
		if ! (echo >"/dev/tcp/127.0.0.1/${port}") 2>/dev/null; then
			echo "${port}"
			return
		fi
	done
	say "no free port found"
	return 1
}

# check connects as the URL will, over TCP with the password, when the
# server's psql is there.
check() {
	local bindir=$1 port=$2 password=$3
	[[ -x "${bindir}/psql" ]] || return 0
	PGPASSWORD=${password} "${bindir}/psql" -X -q -h 127.0.0.1 -p "${port}" -U outdial -d postgres \
		-c 'CREATE DATABASE outdial_ci_check' -c 'DROP DATABASE outdial_ci_check' >&2
}

stop() {
	if [[ -f "${dir}/data/postmaster.pid" && -f "${dir}/bindir" ]]; then
		say "stopping the server in ${dir}/data"
		as_server "$(cat "${dir}/bindir")/pg_ctl" -D "${dir}/data" -m fast -w stop >&2 ||
			say "pg_ctl stop failed; see ${dir}/postgres.log"
	fi
	rm -rf "${dir}"
}

start() {
	if [[ -e "${dir}" && -n "$(ls -A "${dir}")" ]]; then
		say "${dir} is not empty"
		return 1
	fi
	mkdir -p "${dir}"

	local bindir
	bindir=$(server_bindir)
	if [[ -z "${bindir}" ]]; then
		# apt-install.sh tells its progress on stdout: ours is for the URL.
		# Its BINARY is one that no machine has, as we have looked already.
		"$(dirname "${BASH_SOURCE[0]}")/apt-install.sh" postgresql /usr/lib/postgresql/VERSION/bin/initdb postgresql >&2
		bindir=$(server_bindir)
		if [[ -z "${bindir}" ]]; then
			say "Debian's postgresql installed no initdb in /usr/lib/postgresql/*/bin"
			return 1
		fi
	fi
	local version
	# "initdb (PostgreSQL) 15.14 (Debian 15.14-0+deb12u1)": the major version
	# is the first number.
	version=$("${bindir}/initdb" --version | sed -E 's/^[^0-9]*([0-9]+).*/\1/')
	if ! [[ "${version}" =~ ^[0-9]+$ ]] || ((version < 15)); then
		say "${bindir}/initdb is PostgreSQL ${version}; the tests need 15 or newer"
		return 1
	fi
	say "using PostgreSQL ${version} from ${bindir}"
	echo "${bindir}" >"${dir}/bindir"

	if [[ "$(id -u)" -eq 0 ]]; then
		if ! id postgres >/dev/null 2>&1; then
			say "creating the system user postgres"
			useradd --system --user-group --no-create-home --home-dir /var/lib/postgresql --shell /usr/sbin/nologin postgres
		fi
		chown postgres: "${dir}"
		chmod 0700 "${dir}"
		if ! runuser -u postgres -- test -w "${dir}"; then
			say "the user postgres cannot reach ${dir} (a parent directory closed to it?)"
			return 1
		fi
	fi

	local password
	password=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
	as_server mkdir -p "${dir}/socket"
	# The password reaches initdb through a file of the server's user,
	# never on a command line.
	as_server sh -c 'umask 077 && cat >"$1"' sh "${dir}/pwfile" <<<"${password}"
	say "initdb ${dir}/data"
	as_server "${bindir}/initdb" -D "${dir}/data" -U outdial --pwfile="${dir}/pwfile" \
		--auth-local=trust --auth-host=scram-sha-256 -E UTF8 --no-locale --no-sync >"${dir}/initdb.log" 2>&1 || {
		cat "${dir}/initdb.log" >&2
		return 1
	}
	as_server rm -f "${dir}/pwfile"

	local port attempt
	for attempt in 1 2 3 4 5; do
		port=$(free_port)
		as_server sh -c 'cat >>"$1"' sh "${dir}/data/postgresql.conf" <<EOF
# .ci/postgres.sh: a throwaway server for tests.
listen_addresses = '127.0.0.1'
port = ${port}
unix_socket_directories = '${dir}/socket'
max_connections = 300
fsync = off
synchronous_commit = off
full_page_writes = off
EOF
		say "starting on 127.0.0.1:${port}"
		if as_server "${bindir}/pg_ctl" -D "${dir}/data" -l "${dir}/postgres.log" -w -t 60 start >&2; then
			check "${bindir}" "${port}" "${password}"
			echo "postgres://outdial:${password}@127.0.0.1:${port}/postgres?sslmode=disable"
			return 0
		fi
		# Most likely the port was taken between our look and the start:
		# the last port line appended wins, so try another.
		say "start failed (attempt ${attempt}); the log says:"
		tail -n 5 "${dir}/postgres.log" >&2 || true
	done
	return 1
}

case "${action}" in
start) start ;;
stop) stop ;;
*) usage ;;
esac
