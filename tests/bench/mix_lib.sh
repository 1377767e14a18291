# shellcheck shell=bash
# mix_lib.sh - the workloads ("mixes") the recorder benchmarks record,
# sourced by record_vs_perf_atonce.sh, profile_recorder.sh and
# host_impact.sh, so each mix is set up in one place.
#
#   mix_start MIX SRC BUILD DIR   starts mix MIX in its own process group
#                          (files in DIR): sets mix_opts (the recorders'
#                          options, without -m), mix_what (a line saying
#                          what runs) and mix_pid; returns 2 when MIX is
#                          unknown or cannot run here
#   mix_stop               stops it (also safe when none runs)
#
# Mixes: deep (a make -j2 of this tree with gcc: many short-lived
# processes, deep compiler stacks without frame pointers; -a -g -F 4000),
# switch (tests/kernel/workloads/pingpong: two threads passing a byte
# over pipes; -a -g -F 10000 --switch-events), redis (a real server:
# redis-server under redis-benchmark, GET/SET, 50 clients; -a -g -F 4000).
#
# The redis server of its own on a free loopback port (no persistence),
# and redis-benchmark driving it (Debian packages redis-server,
# redis-tools: tests/install-deps.sh):
#
#   redis_start DIR        starts the server (its files in DIR): sets
#                          redis_pid, redis_port
#   redis_load ARGS...     runs redis-benchmark against it (GET and SET,
#                          50 clients) with ARGS added; prints the mean
#                          requests per second of its tests
#   redis_stop             stops the server (also safe when none runs)

redis_start() {
	local dir=$1 _
	for x in redis-server redis-benchmark redis-cli; do
		command -v "$x" >/dev/null ||
			{ echo "no $x: apt-get install redis-server redis-tools" >&2; return 2; }
	done
	# a port the kernel just gave someone else is free for us too
	redis_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	redis-server --bind 127.0.0.1 --port "$redis_port" --save "" --appendonly no \
		--daemonize no --dir "$dir" --logfile "$dir/redis.log" &
	redis_pid=$!
	for _ in $(seq 100); do
		[ "$(redis-cli -p "$redis_port" ping 2>/dev/null)" = PONG ] && return 0
		sleep 0.1
	done
	echo "redis-server did not answer on port $redis_port: $dir/redis.log" >&2
	return 1
}

redis_load() {
	redis-benchmark -h 127.0.0.1 -p "$redis_port" -t get,set -c 50 --csv "$@" 2>/dev/null |
		awk -F'"' 'NR > 1 && $4 + 0 > 0 { s += $4; n++ } END { if (n) printf "%.0f\n", s / n; else print 0 }'
}

redis_stop() {
	if [ -n "${redis_pid:-}" ]; then
		kill "$redis_pid" 2>/dev/null || true
		wait "$redis_pid" 2>/dev/null || true
		redis_pid=
	fi
}

mix_start() {
	local mix=$1 src=$2 build=$3 dir=$4
	case $mix in
	deep)
		mix_opts=(-a -F 4000 -g -e cpu-clock)
		mix_what="make -j2 of this tree (gcc)"
		# configured first (not recorded)
		cmake -S "$src" -B "$dir/wl" -DCMAKE_C_COMPILER=gcc -DCMAKE_BUILD_TYPE=RelWithDebInfo \
			>"$dir/cmake.out" 2>&1 || { echo "configure failed: $dir/cmake.out" >&2; return 1; }
		set -m   # its own process group, to be stopped whole
		make -C "$dir/wl" -j2 >/dev/null 2>&1 &
		;;
	switch)
		mix_opts=(-a -F 10000 -g --switch-events -e cpu-clock)
		mix_what="pingpong (pipe ping-pong, 2 threads)"
		[ -x "$build/tests/pingpong" ] || { echo "missing $build/tests/pingpong" >&2; return 2; }
		set -m
		"$build/tests/pingpong" 1000000000 0 0 >/dev/null 2>&1 &
		;;
	redis)
		mix_opts=(-a -F 4000 -g -e cpu-clock)
		mix_what="redis-server under redis-benchmark (GET/SET, 50 clients)"
		redis_start "$dir" || return 2
		set -m
		(while :; do redis_load -n 10000000 >/dev/null; done) &
		;;
	*)
		echo "MIX must be deep, switch or redis" >&2
		return 2
		;;
	esac
	mix_pid=$!
	set +m
}

mix_stop() {
	if [ -n "${mix_pid:-}" ]; then
		kill -- -"$mix_pid" 2>/dev/null || true
		wait "$mix_pid" 2>/dev/null || true
		mix_pid=
	fi
	redis_stop
}
