#!/usr/bin/env bash
# The whole test gate: install dependencies, format check, the g++ build of the server with its
# integration tests and the allocation counts; then (built while those run) a clang
# AddressSanitizer + UndefinedBehaviorSanitizer (+ leak checking) build, where the unit tests,
# the integration tests again and the libFuzzer targets (a fixed number of inputs each) run,
# and clang-tidy over src/ (.clang-tidy). Any sanitizer report or tidy finding fails the gate.
# Every stage prints how long it took.
set -euo pipefail
cd "$(dirname "$0")/.."

gate_start=$(date +%s)
stage_start=$gate_start
stage() {
  local now
  now=$(date +%s)
  [[ -z ${stage_name:-} ]] || echo "-- $stage_name took $((now - stage_start))s"
  stage_name=$1
  stage_start=$now
  if [[ $stage_name == done ]]; then
    echo "-- the test gate took $((now - gate_start))s"
  else
    echo "== $stage_name"
  fi
}

stage "install dependencies"
scripts/install-deps.sh

stage "format and layering check"
git ls-files -- '*.cpp' '*.h' | xargs clang-format --dry-run -Werror
python3 scripts/check_layers.py

# The two builds are CPU-bound and the tests mostly wait (on Prometheus, on the adapters they
# start): so the sanitizer build starts at once, niced, and takes whatever CPU the g++ build
# and then the g++ tests leave. Its output is kept in a file and printed when it is waited for.
sanitizer_log=$(mktemp)
(
  nice -n 10 scripts/fuzz.sh --build --build-dir build-asan --opt 0
  echo "-- the sanitizer build took $(($(date +%s) - gate_start))s from the gate's start"
) >"$sanitizer_log" 2>&1 &
sanitizer_build=$!
finish_sanitizer_build() {
  local status=0
  wait "$sanitizer_build" || status=$?
  # Warnings and errors, not the progress lines.
  grep -v '^\[ *[0-9]*%\]' "$sanitizer_log" || true
  rm -f "$sanitizer_log"
  return $status
}

stage "build (g++: the server and the allocation tests), the sanitizer build beside it"
# The unit tests are compiled and run once, in the sanitizer build: there they also check
# memory and undefined behaviour. Here the shipped server runs the integration tests, and the
# allocation counts need the sanitizers off. (scripts/build.sh with no target builds them all.)
MA_UNITY_ALL=ON scripts/build.sh metrics-adapter alloc_discovery || { finish_sanitizer_build || true; exit 1; }

stage "integration and allocation tests (g++ build), the sanitizer build beside them"
tests_status=0
(cd build && ctest --output-on-failure --timeout 600 -j3 -L 'integration|alloc') || tests_status=$?
echo "-- tests took $(($(date +%s) - stage_start))s"
sanitizer_status=0
finish_sanitizer_build || sanitizer_status=$?
if ((tests_status || sanitizer_status)); then
  echo "tests: exit $tests_status; sanitizer build: exit $sanitizer_status" >&2
  exit 1
fi

stage "tests and fuzz targets under the sanitizers, clang-tidy beside them"
# clang-tidy checks what changed since the last whole-tree pass (.ci/tidy-clean). It runs
# beside the sanitized tests, which leave about half a core idle (they mostly wait); its
# output is printed when it ends.
tidy_log=$(mktemp)
(
  tidy_start=$(date +%s)
  nice -n 10 scripts/tidy.sh --since "$(cat .ci/tidy-clean)"
  echo "-- clang-tidy took $(($(date +%s) - tidy_start))s"
) >"$tidy_log" 2>&1 &
tidy=$!
# Reports are fatal (-fno-sanitize-recover=all at build time, halt_on_error here); a leak
# makes the process exit non-zero at its end, which ctest and the integration harness check.
asan_options=(detect_leaks=1 halt_on_error=1 strict_string_checks=1
  detect_stack_use_after_return=1 check_initialization_order=1)
ASAN_OPTIONS=$(IFS=:; echo "${asan_options[*]}")
export ASAN_OPTIONS
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# Three at a time: the integration tests among the sanitized tests mostly wait, and two at a
# time left a core idle for much of the stage.
sanitized_status=0
(cd build-asan && ctest --output-on-failure --timeout 900 -j3) || sanitized_status=$?
tidy_status=0
wait "$tidy" || tidy_status=$?
cat "$tidy_log"
rm -f "$tidy_log"
if ((sanitized_status || tidy_status)); then
  echo "sanitized tests: exit $sanitized_status; clang-tidy: exit $tidy_status" >&2
  exit 1
fi

stage done
