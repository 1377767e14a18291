#!/usr/bin/env bash
# The whole test suite, as the README and CI run it:
#   1. install dependencies (apt-get) 2. build and run every ctest test
#   3. the include/call graph check and the static analyser on that
#   build 4. the laptop configuration (format/ and analyzer/ only) and its
#   tests 5. the same suite under ASan+UBSan 6. short libFuzzer runs of
#   every fuzz target (FUZZ_SECONDS each, default 20). Exits non-zero on
#   any failure; the last line counts
#   what ran ("run-all: N passed, 0 failed"; the include graph and the
#   analyser count one each).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
bash "$src/tests/install-deps.sh"
passed=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# run_ctest DIR [env...]: ctest in DIR; adds its passed count or fails.
run_ctest() {
  local dir=$1; shift
  (cd "$dir" && env "$@" ctest --output-on-failure -j2) | tee "$log"
  local n
  n=$(sed -n 's/.*tests passed, 0 tests failed out of \([0-9]*\).*/\1/p' "$log")
  [ -n "$n" ] || { echo "run-all: ctest in $dir did not report a clean run"; exit 1; }
  passed=$((passed + n))
}

echo "== build + tests (RelWithDebInfo)"
bash "$src/tests/build.sh" "$src/build" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON
run_ctest "$src/build"

echo "== include and call graph (format/, recorder/, analyzer/)"
bash "$src/tests/include-graph.sh" "$src" "$src/build"
passed=$((passed + 1))

echo "== static analysis (clang-tidy, .clang-tidy)"
bash "$src/tests/static-analysis.sh" "$src/build"
passed=$((passed + 1))

echo "== laptop build + tests (-DPERFREC_LAPTOP=ON: format/ and analyzer/ only)"
bash "$src/tests/build.sh" "$src/build-laptop" -DPERFREC_LAPTOP=ON
run_ctest "$src/build-laptop"

echo "== build + tests (ASan+UBSan)"
bash "$src/tests/build.sh" "$src/build-asan" -DCMAKE_BUILD_TYPE=Debug -DPERFREC_SANITIZE=ON
run_ctest "$src/build-asan" ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

echo "== fuzz (libFuzzer, short runs)"
bash "$src/tests/build.sh" "$src/build-fuzz" -DCMAKE_C_COMPILER=clang -DPERFREC_FUZZ=ON -DPERFREC_TESTS=ON
bash "$src/tests/fuzz/run.sh" "$src/build-fuzz" "${FUZZ_SECONDS:-20}" | tee "$log"
n=$(sed -n 's/^fuzz: \([0-9]*\) targets ran clean$/\1/p' "$log")
[ -n "$n" ] || { echo "run-all: fuzz runs did not finish clean"; exit 1; }
passed=$((passed + n))
echo "run-all: $passed passed, 0 failed"
