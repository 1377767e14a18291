#!/usr/bin/env bash
# Installs everything perfrec needs to build and test on Debian 12 (as root).
set -euo pipefail
# No libelf-dev: perfrec reads ELF itself (format/base/elf.c); libelf comes
# only as libbpf's own dependency (libbpf-dev pulls it in).
pkgs=(build-essential cmake pkg-config clang clang-tidy libclang-rt-14-dev
      libzstd-dev zstd libprotobuf-c-dev protobuf-c-compiler protobuf-compiler
      libcmocka-dev libbpf-dev zlib1g-dev libsqlite3-dev linux-perf
      libssl-dev openssl libnats-dev nats-server python3 procps elfutils binutils gzip chromium bpftool
      libdebuginfod-dev debuginfod curl
      libcurl4-openssl-dev clickhouse-server clickhouse-client
      redis-server redis-tools)   # redis: the real-server mix of tests/bench (mix_lib.sh)
# npm (the browser tests fetch speedscope's page with it): Debian's
# package only where no npm is installed already -- it would conflict with
# a Node.js from elsewhere (NodeSource's nodejs ships its own npm).
command -v npm >/dev/null || pkgs+=(npm)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
