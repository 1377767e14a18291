# tests/lib/kerntest.sh - the preamble every kernel test script
# (tests/kernel/*.sh) shares, sourced first:
#
#   . "$(dirname "$0")/../lib/kerntest.sh"
#   kt_begin test_name prefix     # binaries, $d, pids, the exit trap
#   kt_need_root                  # or kt_need_perf: else skip
#
# kt_begin NAME PREFIX sets, from the environment ctest gives every test
# (tests/CMakeLists.txt; each is required): perfrec (PERFREC_BIN), analyze
# (PERFREC_ANALYZE_BIN), build (PERFREC_BUILD_DIR), src
# (PERFREC_SOURCE_DIR); d, a new directory /tmp/perfrec-PREFIX-XXXXXX;
# pids, the background processes of the test. At exit, in this order: the
# script's kt_on_exit (when it defines one: its own cleanup), every pid
# in pids killed (-9) and waited for, then $d removed (kept when KEEP is
# set, to look at).
#
# fail MSG: "NAME: FAIL: MSG" on stderr, then the script's kt_on_fail
# (when defined: the logs worth reading), exit 1. A script may define its
# own fail after kt_begin.
# skip MSG: "NAME: skipped: MSG", exit 0 -- except under CI=true, where
# it fails: CI runs as root with perf events, so a skip there would hide
# a test that no longer runs.
# step MSG: "NAME: [  1.2s] MSG", the time since kt_begin.
# json FILE EXPR: EXPR (Python, over r, the document) of a JSON file.
# kt_tail_logs FILE...: the last 20 lines of each file that exists.
# free_ports N: tests/lib/ports.sh.

. "$(dirname "${BASH_SOURCE[0]}")/ports.sh"

kt_begin() {   # NAME PREFIX
	kt_name=$1
	kt_t0=$(date +%s.%N)
	perfrec=${PERFREC_BIN:?}
	analyze=${PERFREC_ANALYZE_BIN:?}
	build=${PERFREC_BUILD_DIR:?}
	src=${PERFREC_SOURCE_DIR:?}
	pids=()
	d=$(mktemp -d "/tmp/perfrec-$2-XXXXXX")
	trap kt_cleanup EXIT
}

kt_cleanup() {
	if declare -F kt_on_exit >/dev/null; then
		kt_on_exit || true
	fi
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	[ -n "${KEEP:-}" ] || rm -rf "$d"
}

fail() {
	echo "$kt_name: FAIL: $*" >&2
	if declare -F kt_on_fail >/dev/null; then
		kt_on_fail >&2 || true
	fi
	exit 1
}

skip() {
	if [ -n "${CI:-}" ]; then
		fail "$* (CI=true: kernel tests must run)"
	fi
	echo "$kt_name: skipped: $*"
	exit 0
}

step() {
	printf '%s: [%5.1fs] %s\n' "$kt_name" \
		"$(awk "BEGIN { print $(date +%s.%N) - $kt_t0 }")" "$*"
}

json() {
	python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1"
}

kt_tail_logs() {
	for f in "$@"; do
		[ -f "$f" ] && { echo "--- $f"; tail -n 20 "$f"; }
	done
	return 0
}

kt_need_root() {
	[ "$(id -u)" = 0 ] || skip "needs root"
}

# Perf events work here: a 0.1 s recording of cpu-clock.
kt_need_perf() {
	if ! "$perfrec" record -e cpu-clock -d 0.1 -q -o "$d/probe.prec" -- true \
		2>"$d/probe.err"; then
		skip "perf events unavailable: $(cat "$d/probe.err")"
	fi
}

kt_need_nats() {
	command -v nats-server >/dev/null ||
		skip "no nats-server (tests/install-deps.sh installs it)"
}
