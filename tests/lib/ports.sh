# tests/lib/ports.sh - sourced by the server tests.
#
# free_ports N: N distinct free loopback TCP ports, one per line. They are
# drawn at random below the kernel's ephemeral range
# (/proc/sys/net/ipv4/ip_local_port_range), where no connect() is ever
# given a port: a port taken from the ephemeral range and released until
# the server binds it can meanwhile become some other test's client port
# ("address already in use" on a busy machine). Each is checked by a bind,
# and all are held until every one is chosen, so no two are the same.
free_ports() {
	python3 -c 'import random, socket, sys
low = 32768
try:
    low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
except (OSError, ValueError, IndexError):
    pass
lo, hi = (10000, low - 1) if low > 11000 else (1024, 9999)
socks, seen = [], set()
while len(socks) < int(sys.argv[1]):
    p = random.randint(lo, hi)
    if p in seen:
        continue
    seen.add(p)
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p))
    except OSError:
        s.close(); continue
    socks.append(s)
print("\n".join(str(s.getsockname()[1]) for s in socks))' "$1"
}
