#!/usr/bin/env bash
# host_impact.sh - what recording costs the workload: the same work with
# no recorder, under perf record and under perfrec record, the same
# options for both.
#
#   tests/bench/host_impact.sh [BUILD_DIR] [ROUNDS] [SIZE]
#
# WORK=redis (default): redis-server (mix_lib.sh) under redis-benchmark,
# GET and SET, 50 clients, SIZE requests each (default 200000). Printed:
# requests/s, and redis-server's own CPU time (user+sys) per request.
# WORK=compile: SIZE runs (default 3) of `gcc -O2 -c` of one of our
# sources (Debian's cc1 has no frame pointers: the kernel's callchain
# walk reads junk to its depth limit). Printed: the compiles' wall time,
# and their CPU time (user+sys) per compile.
# The CPU figures are the kernel's share: with a fixed amount of work,
# what the sampling interrupts add to the workload's own CPU time. On a
# host shared with other work they move less than requests/s or wall
# time, which follow that work (and, in a VM, idle CPUs: a recorder's
# 4 kHz timers keep vCPUs from halting, which can make a ping-pong
# server faster with a recorder than without).
#
# Each round runs the work once per condition, in the same order every
# round (none, perf, perfrec, then the variants), so a machine that slows
# down or speeds up weighs on every condition alike; ROUNDS (default 5,
# at least 5 for the medians to mean something). A recorder starts as
# `-- sleep 3600` a second before the work (past its startup: /proc walk,
# kallsyms) and is stopped (SIGINT) after it. Printed per condition: the
# median and its change against no recorder, then every round's value.
#
# OPTS: the options both recorders get (default -a -g -F 4000 -e
# cpu-clock). VARIANTS: more perfrec conditions, separated by `;`, each
# OPTS of its own (e.g. VARIANTS='-a -F 4000 -e cpu-clock;-a -g -F 4000
# -e cpu-clock --max-stack 32'): what perfrec could do about the kernel's
# share. Needs root, perf (and redis-server, redis-tools, or gcc). Not a
# timed test: run it by hand.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build}
rounds=${2:-5}
work=${WORK:-redis}
perfrec=$build/recorder/perfrec
tmp=$(mktemp -d /tmp/host_impact.XXXXXX)
# shellcheck source=mix_lib.sh
. "$(dirname "$0")/mix_lib.sh"
rec=
cleanup() {
	[ -n "$rec" ] && kill -INT "$rec" 2>/dev/null && wait "$rec" 2>/dev/null || true
	redis_stop
	rm -rf "$tmp"
}
trap cleanup EXIT
[ -x "$perfrec" ] || { echo "missing $perfrec: build first" >&2; exit 2; }
command -v perf >/dev/null || { echo "perf not installed" >&2; exit 2; }

read -r -a opts <<<"${OPTS:--a -g -F 4000 -e cpu-clock}"
labels=(none perf perfrec)
cmds=("" "perf record -z -q ${opts[*]} -o $tmp/out.data" "$perfrec record -q ${opts[*]} -o $tmp/out.prec")
IFS=';' read -r -a variants <<<"${VARIANTS:-}"
for v in "${variants[@]}"; do
	[ -n "${v// /}" ] || continue
	labels+=("perfrec $v")
	cmds+=("$perfrec record -q $v -o $tmp/out.prec")
done

# work_run: one run of the work; sets val (the throughput or time) and cpu
# (the workload's CPU per unit of work)
case $work in
redis)
	size=${3:-200000}
	what="redis-server, redis-benchmark -t get,set -c 50 -n $size"
	vname=requests/s
	cname=us/request
	redis_start "$tmp" || exit 2
	redis_load -n 20000 >/dev/null   # warm up: the server's allocations
	redis_ticks() { awk '{ print $14 + $15 }' "/proc/$redis_pid/stat"; }
	work_run() {
		local c0 c1
		c0=$(redis_ticks)
		val=$(redis_load -n "$size")
		c1=$(redis_ticks)
		cpu=$(awk -v d=$((c1 - c0)) -v n="$size" -v hz="$(getconf CLK_TCK)" \
			'BEGIN { printf "%.2f", d * 1e6 / hz / (2 * n) }')
	}
	;;
compile)
	size=${3:-3}
	command -v gcc >/dev/null || { echo "no gcc" >&2; exit 2; }
	what="$size x gcc -O2 -c analyzer/symbols/demangle_rust.c"
	vname="wall s"
	cname="CPU s/compile"
	work_run() {
		local t0 t1 i
		t0=$(date +%s.%N)
		: >"$tmp/cc.time"
		for ((i = 0; i < size; i++)); do
			/usr/bin/time -a -o "$tmp/cc.time" -f "%U %S" gcc -O2 -I"$src" -I"$build" \
				-c "$src/analyzer/symbols/demangle_rust.c" -o "$tmp/cc.o"
		done
		t1=$(date +%s.%N)
		val=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
		cpu=$(awk -v n="$size" '{ s += $1 + $2 } END { printf "%.3f", s / n }' "$tmp/cc.time")
	}
	;;
*)
	echo "WORK must be redis or compile" >&2
	exit 2
	;;
esac

declare -A vals cpus
for ((r = 1; r <= rounds; r++)); do
	for i in "${!labels[@]}"; do
		if [ -n "${cmds[$i]}" ]; then
			# shellcheck disable=SC2086
			${cmds[$i]} -- sleep 3600 >"$tmp/rec.out" 2>&1 &
			rec=$!
			sleep 1
		fi
		work_run
		vals[$i,$r]=$val
		cpus[$i,$r]=$cpu
		if [ -n "$rec" ]; then
			kill -INT "$rec" 2>/dev/null || true
			wait "$rec" 2>/dev/null || true
			rec=
		fi
		rm -f "$tmp/out.data" "$tmp/out.prec"
	done
done

median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
change() { awk -v m="$1" -v b="$2" 'BEGIN { printf "%+.1f", (b > 0) ? (m - b) * 100 / b : 0 }'; }
echo "$what; $rounds rounds alternated; recorders: ${opts[*]}"
printf "%-50s %12s %7s %14s %7s\n" "condition (median of rounds)" "$vname" "change" "$cname" "change"
base=''
cbase=''
for i in "${!labels[@]}"; do
	all=''
	call=''
	for ((r = 1; r <= rounds; r++)); do
		all+="${vals[$i,$r]} "
		call+="${cpus[$i,$r]} "
	done
	m=$(echo "$all" | median)
	cm=$(echo "$call" | median)
	[ -n "$base" ] || base=$m
	[ -n "$cbase" ] || cbase=$cm
	printf "%-50s %12s %6s%% %14s %6s%%\n" "${labels[$i]}" "$m" "$(change "$m" "$base")" \
		"$cm" "$(change "$cm" "$cbase")"
	printf "    %s: %s\n    CPU: %s\n" "$vname" "$all" "$call"
done
