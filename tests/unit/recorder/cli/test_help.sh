#!/usr/bin/env bash
# test_help.sh - every `perfrec COMMAND --help` reads as text: no escape
# written literally ("\n" in an option's help), and each option's help
# continues on lines of its own.
set -euo pipefail
bin=${PERFREC_BIN:?}
fail() { echo "FAIL: $*" >&2; exit 1; }

for cmd in record stat list collect archive daemon ctl; do
  out=$("$bin" "$cmd" --help 2>&1) || fail "perfrec $cmd --help exits $?"
  [ -n "$out" ] || fail "perfrec $cmd --help prints nothing"
  if grep -nF '\n' <<<"$out"; then
    fail "perfrec $cmd --help prints a literal \\n (above)"
  fi
done
# the token file's help is two lines, the second aligned under the first
"$bin" record --help | grep -A1 -- '--token-file FILE' | tail -1 | grep -q '^ \+bytes); give the same file' ||
  fail "record --help: --token-file's help does not continue on its own line"
echo "test_help: ok"
