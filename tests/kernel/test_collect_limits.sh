#!/usr/bin/env bash
# test_collect_limits.sh - how many sessions `perfrec collect` takes:
#   - its open-file soft limit is raised to the hard limit at start, and
#     the default --max-sessions follows it (2 files a session with --dir:
#     its connection and its archive file), logged;
#   - an explicit --max-sessions past what the limit gives is warned about,
#     naming ulimit -n;
#   - a session past --max-sessions is refused, the reason naming
#     --max-sessions and ulimit -n, in the collector's log and in the
#     recorder's, while the first session is archived whole.
set -euo pipefail
# shellcheck source=../lib/kerntest.sh
. "$(dirname "$0")/../lib/kerntest.sh"
kt_begin test_collect_limits climits
kt_on_fail() { kt_tail_logs "$d"/coll*.log "$d"/rec*.err; }
kt_need_perf

start_collect() {   # LOG ARGS...: runs collect in the background, waits for it
	local log=$1
	shift
	"$perfrec" collect --listen "127.0.0.1:0" "$@" 2>"$log" &
	pids+=("$!")
	for _ in $(seq 100); do
		grep -q "listening on" "$log" 2>/dev/null && break
		sleep 0.05
	done
	grep -q "listening on" "$log" || fail "the collector did not start: $(cat "$log")"
}
stop_last() { kill "${pids[-1]}"; wait "${pids[-1]}" || true; unset 'pids[-1]'; }

# --- soft limit 256 under a hard limit of 4096: raised to 4096, and the
# default is (4096 - 80) * 8 / 17 sessions (a session's 2 files and an
# eighth more connections, 80 files kept for the rest)
(
	ulimit -n 4096   # hard and soft (a soft limit above a new hard one is refused)
	ulimit -Sn 256
	start_collect "$d/coll1.log" --dir "$d/arch1"
	pid=${pids[-1]}
	soft=$(awk '/^Max open files/ { print $4 }' "/proc/$pid/limits")
	[ "$soft" = 4096 ] || fail "the soft open-file limit is $soft, not the hard 4096"
	stop_last
)
grep -q "collect: at most 1889 sessions at once (open-file limit 4096; --max-sessions sets it)" \
	"$d/coll1.log" || fail "default from 4096 files: $(grep -i sessions "$d/coll1.log")"
step "soft 256, hard 4096: raised to 4096, 1889 sessions"
# --- an explicit --max-sessions past what 4096 files give: warned
(
	ulimit -n 4096   # hard and soft (a soft limit above a new hard one is refused)
	start_collect "$d/coll2.log" --dir "$d/arch2" --max-sessions 5000
	stop_last
)
grep -q "collect: --max-sessions 5000 needs about 10080 open files, the limit is 4096: raise ulimit -n" \
	"$d/coll2.log" || fail "no warning for --max-sessions past the limit: $(cat "$d/coll2.log")"
step "--max-sessions 5000 with 4096 files: warned"

# --- --max-sessions 1: a second session at once is refused, naming the fix
start_collect "$d/coll3.log" --dir "$d/arch3" --max-sessions 1
port=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$d/coll3.log")
[ -n "$port" ] || fail "no port in $(cat "$d/coll3.log")"
"$perfrec" record -e cpu-clock -d 4 -o "$d/a.prec" --to "127.0.0.1:$port" --host ha --session s \
	2>"$d/rec-a.err" &
ra=$!
pids+=("$ra")
for _ in $(seq 100); do
	[ -s "$d/arch3/ha/s.prec" ] && break
	sleep 0.05
done
[ -s "$d/arch3/ha/s.prec" ] || fail "the first session was not archived: $(cat "$d/rec-a.err")"
"$perfrec" record -e cpu-clock -d 1 -o "$d/b.prec" --to "127.0.0.1:$port" --host hb --session s \
	--finish-timeout 2s 2>"$d/rec-b.err" || true
reason="too many sessions at once (1): raise --max-sessions, whose default follows the open-file limit (ulimit -n)"
grep -qF "$reason" "$d/coll3.log" || fail "the collector's refusal: $(grep -i refus "$d/coll3.log")"
grep -qF "$reason" "$d/rec-b.err" || fail "the recorder does not give the reason: $(cat "$d/rec-b.err")"
wait "$ra" || fail "the first recording failed: $(cat "$d/rec-a.err")"
cmp "$d/a.prec" "$d/arch3/ha/s.prec" || fail "the first session's archive differs from its -o copy"
echo "test_collect_limits: PASS"
