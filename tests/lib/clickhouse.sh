# clickhouse.sh - two clickhouse-server processes on 127.0.0.1, two shards
# of one cluster ("perfrec") behind Distributed tables, for tests and
# benchmarks (sourced, not run).
#
#   source tests/lib/clickhouse.sh
#   ch_cluster_start DIR        # sets CH_URL1, CH_URL2 (HTTP), CH_TCP1, CH_TCP2
#   ch_query N SQL              # SQL on server N through clickhouse-client
#   ch_kill N / ch_start N      # kill -9 server N / start it again (same ports, data)
#   ch_cluster_stop             # also called by the caller's EXIT trap
#
# Ports are chosen free at start (tests/lib/ports.sh); each server has its
# own config.xml, users.xml, data, tmp and log directories under DIR/chN.
# The cluster's shards are the two servers' TCP ports, so a Distributed
# table created on either server reaches both. No ZooKeeper: tables are
# plain MergeTree, not replicated; the loader creates them on each shard
# it is told about (perfrec-analyze load --clickhouse URL).

. "$(dirname "${BASH_SOURCE[0]}")/ports.sh"

ch_server_bin() {
	# Debian's clickhouse-server package ships /usr/sbin/clickhouse-server;
	# upstream packages ship one `clickhouse` binary with a server mode
	if command -v clickhouse-server >/dev/null; then
		echo clickhouse-server
	elif [ -x /usr/sbin/clickhouse-server ]; then
		echo /usr/sbin/clickhouse-server
	elif command -v clickhouse >/dev/null; then
		echo "clickhouse server"
	else
		return 1
	fi
}

ch_start() {   # N
	local i=$1 bin
	bin=$(ch_server_bin) || { echo "clickhouse: no clickhouse-server installed" >&2; return 1; }
	# shellcheck disable=SC2086 # "clickhouse server" is a command and its mode
	$bin --config-file="$CH_DIR/ch$i/config.xml" >>"$CH_DIR/ch$i/stdout.log" 2>&1 &
	eval "CH_PID_$i=$!"
}

ch_kill() {   # N
	local pid
	eval "pid=\${CH_PID_$1:-}"
	[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
}

ch_wait() {   # N: the server answers HTTP /ping
	local url
	eval "url=\$CH_URL$1"
	for _ in $(seq 300); do
		[ "$(curl -s "$url/ping" 2>/dev/null)" = "Ok." ] && return 0
		sleep 0.1
	done
	echo "clickhouse: server $1 ($url) did not answer /ping within 30 s" >&2
	tail -n 20 "$CH_DIR/ch$1/server.err.log" "$CH_DIR/ch$1/stdout.log" >&2 2>/dev/null
	return 1
}

ch_query() {   # N SQL
	local port
	eval "port=\$CH_TCP$1"
	clickhouse-client --host 127.0.0.1 --port "$port" --query "$2"
}

ch_cluster_start() {   # DIR
	CH_DIR=$1
	local ports i
	mapfile -t ports < <(free_ports 6)
	CH_HTTP1=${ports[0]} CH_TCP1=${ports[1]} CH_IS1=${ports[2]}
	CH_HTTP2=${ports[3]} CH_TCP2=${ports[4]} CH_IS2=${ports[5]}
	CH_URL1="http://127.0.0.1:$CH_HTTP1"
	CH_URL2="http://127.0.0.1:$CH_HTTP2"
	export CH_DIR CH_URL1 CH_URL2 CH_TCP1 CH_TCP2 CH_HTTP1 CH_HTTP2
	for i in 1 2; do
		local dir=$CH_DIR/ch$i http tcp is
		eval "http=\$CH_HTTP$i tcp=\$CH_TCP$i is=\$CH_IS$i"
		mkdir -p "$dir/data" "$dir/tmp" "$dir/user_files" "$dir/format_schemas"
		cat >"$dir/config.xml" <<CONF
<?xml version="1.0"?>
<yandex>
    <logger>
        <level>warning</level>
        <log>$dir/server.log</log>
        <errorlog>$dir/server.err.log</errorlog>
        <size>10M</size>
        <count>1</count>
    </logger>
    <listen_host>127.0.0.1</listen_host>
    <http_port>$http</http_port>
    <tcp_port>$tcp</tcp_port>
    <interserver_http_port>$is</interserver_http_port>
    <interserver_http_host>127.0.0.1</interserver_http_host>
    <path>$dir/data/</path>
    <tmp_path>$dir/tmp/</tmp_path>
    <user_files_path>$dir/user_files/</user_files_path>
    <format_schema_path>$dir/format_schemas/</format_schema_path>
    <users_config>$dir/users.xml</users_config>
    <default_profile>default</default_profile>
    <default_database>default</default_database>
    <timezone>UTC</timezone>
    <mark_cache_size>67108864</mark_cache_size>
    <uncompressed_cache_size>67108864</uncompressed_cache_size>
    <max_concurrent_queries>50</max_concurrent_queries>
    <mlock_executable>false</mlock_executable>
    <remote_servers>
        <perfrec>
            <shard><replica><host>127.0.0.1</host><port>$CH_TCP1</port></replica></shard>
            <shard><replica><host>127.0.0.1</host><port>$CH_TCP2</port></replica></shard>
        </perfrec>
    </remote_servers>
</yandex>
CONF
		cat >"$dir/users.xml" <<'USERS'
<?xml version="1.0"?>
<yandex>
    <profiles>
        <default>
            <max_memory_usage>2000000000</max_memory_usage>
            <load_balancing>random</load_balancing>
        </default>
    </profiles>
    <users>
        <default>
            <password></password>
            <networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
            <profile>default</profile>
            <quota>default</quota>
        </default>
    </users>
    <quotas>
        <default>
            <interval>
                <duration>3600</duration>
                <queries>0</queries>
                <errors>0</errors>
                <result_rows>0</result_rows>
                <read_rows>0</read_rows>
                <execution_time>0</execution_time>
            </interval>
        </default>
    </quotas>
</yandex>
USERS
		ch_start "$i" || return 1
	done
	ch_wait 1 && ch_wait 2
}

ch_cluster_stop() {
	ch_kill 1
	ch_kill 2
}
