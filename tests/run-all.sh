#!/usr/bin/env bash
# The whole test suite, as the README and CI run it:
#   1. install dependencies (apt-get) 2. build and run every ctest test
#   3. the same suite under ASan+UBSan 4. short libFuzzer runs of every
#   fuzz target. Exits non-zero on any failure.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
bash "$src/tests/install-deps.sh"

echo "== build + tests (RelWithDebInfo)"
bash "$src/tests/build.sh" "$src/build"
(cd "$src/build" && ctest --output-on-failure -j2)

echo "== build + tests (ASan+UBSan)"
bash "$src/tests/build.sh" "$src/build-asan" -DCMAKE_BUILD_TYPE=Debug -DPERFREC_SANITIZE=ON
(cd "$src/build-asan" && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
   UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j2)

echo "== fuzz (libFuzzer, short runs)"
bash "$src/tests/build.sh" "$src/build-fuzz" -DCMAKE_C_COMPILER=clang -DPERFREC_FUZZ=ON -DPERFREC_TESTS=ON
bash "$src/tests/fuzz/run.sh" "$src/build-fuzz" "${FUZZ_SECONDS:-30}"
echo "run-all: all suites passed"
