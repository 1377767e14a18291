# nats_cluster.sh - a 3-node JetStream cluster of nats-server processes on
# 127.0.0.1 for tests and benchmarks (sourced, not run).
#
#   source tests/lib/nats_cluster.sh
#   nats_cluster_start DIR       # sets NATS_URLS (client URLs, comma list)
#   nats_kill 2                  # kill -9 node 2
#   nats_start 2                 # start it again (same ports, same store)
#   nats_cluster_stop
#   nats_js_api PORT SUBJECT JSON   # one JetStream API request; the reply
#                                   # on stdout, status 1 on an error
#
# Ports are chosen free at start; stores live in DIR/n1..n3. max_payload is
# 8 MB so 1 MiB frames fit with room (see docs/fleet.md); with
# NATS_DEFAULT_PAYLOAD=1 the servers keep NATS's default (1 MiB), as most
# deployments run.
# The kernel tests' fail/skip rules and temp dir are tests/lib/kerntest.sh's.

# nats_free_ports N: free ports for servers (tests/lib/ports.sh)
. "$(dirname "${BASH_SOURCE[0]}")/ports.sh"
nats_free_ports() { free_ports "$1"; }

nats_start() {   # N
	local i=$1
	nats-server -c "$NATS_DIR/n$i.conf" >>"$NATS_DIR/n$i.log" 2>&1 &
	eval "NATS_PID_$i=$!"
}

nats_kill() {   # N
	local pid
	eval "pid=\${NATS_PID_$1:-}"
	[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
}

nats_cluster_start() {   # DIR
	NATS_DIR=$1
	mkdir -p "$NATS_DIR"
	local cp=() p=() i j routes
	local ports
	mapfile -t ports < <(nats_free_ports 6)
	for i in 1 2 3; do p[$i]=${ports[$((i - 1))]}; cp[$i]=${ports[$((i + 2))]}; done
	for i in 1 2 3; do
		routes=""
		for j in 1 2 3; do
			[ "$j" = "$i" ] || routes="$routes${routes:+, }\"nats-route://127.0.0.1:${cp[$j]}\""
		done
		cat >"$NATS_DIR/n$i.conf" <<CONF
server_name: n$i
listen: 127.0.0.1:${p[$i]}
$([ -n "${NATS_DEFAULT_PAYLOAD:-}" ] || echo "max_payload: 8MB")
jetstream { store_dir: "$NATS_DIR/n$i" }
cluster {
  name: perfrec-test
  listen: 127.0.0.1:${cp[$i]}
  routes: [ $routes ]
}
CONF
		nats_start "$i"
	done
	NATS_URLS="nats://127.0.0.1:${p[1]},nats://127.0.0.1:${p[2]},nats://127.0.0.1:${p[3]}"
	export NATS_URLS NATS_DIR
	# JetStream is usable once the meta group has a leader
	for _ in $(seq 150); do
		if grep -q "JetStream cluster new metadata leader\|Self is new JetStream cluster metadata leader" \
			"$NATS_DIR"/n*.log 2>/dev/null; then
			return 0
		fi
		sleep 0.1
	done
	echo "nats_cluster: no JetStream leader after 15 s" >&2
	tail -n 5 "$NATS_DIR"/n*.log >&2
	return 1
}

nats_cluster_stop() {
	for i in 1 2 3; do nats_kill "$i"; done
}

# nats_js_api PORT SUBJECT JSON: one JetStream API request over the NATS
# protocol (no nats CLI needed)
nats_js_api() {
	python3 - "$1" "$2" "$3" <<'PY'
import socket, sys
port, subj, body = int(sys.argv[1]), sys.argv[2], sys.argv[3].encode()
s = socket.create_connection(("127.0.0.1", port), timeout=10)
f = s.makefile("rb")
f.readline()                                   # INFO
s.sendall(b'CONNECT {"verbose":false,"pedantic":false}\r\nSUB _INBOX.t 1\r\n')
s.sendall(b"PUB %s _INBOX.t %d\r\n%s\r\nPING\r\n" % (subj.encode(), len(body), body))
while True:
    line = f.readline()
    if line.startswith(b"MSG"):
        n = int(line.split()[-1])
        reply = f.read(n + 2)[:n].decode()
        print(reply)
        sys.exit(1 if '"error"' in reply else 0)
    if line.startswith(b"-ERR") or not line:
        print(line.decode()); sys.exit(1)
PY
}
