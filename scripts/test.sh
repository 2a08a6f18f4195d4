#!/usr/bin/env bash
# The whole test gate: install dependencies, format and layering checks; a clang
# AddressSanitizer + UndefinedBehaviorSanitizer (+ leak checking) build, where the integration
# tests, the unit tests and the libFuzzer targets (a fixed number of inputs each) run; the g++
# build of the shipped server, where the allocation counts and the tests the sanitizers cannot
# run do (ctest label `shipped`); and clang-tidy over the changed sources (.clang-tidy). Any
# failure, sanitizer report or tidy finding fails the gate.
#
# The work is bound by two cores' CPU, so it runs as four jobs, each started as soon as what it
# needs is there, and niced by how soon the end depends on it: the integration tests mostly
# wait (on Prometheus, on the adapters they start), so they start as soon as the sanitized
# server is linked, and the compiles take the CPU they leave. Each job prints its log, and how
# long it took, when it is waited for.
set -euo pipefail
cd "$(dirname "$0")/.."

gate_start=$(date +%s)
since_start() { echo "$(($(date +%s) - gate_start))s"; }

stage_start=$gate_start
stage() {
  local now
  now=$(date +%s)
  [[ -z ${stage_name:-} ]] || echo "-- $stage_name took $((now - stage_start))s"
  stage_name=$1
  stage_start=$now
  if [[ $stage_name == "done" ]]; then
    echo "-- the test gate took $(since_start)"
  else
    echo "== $stage_name ($(since_start) into the gate)"
  fi
}

# Background jobs: start_job NAME COMMAND... runs it with its output in a file; wait_job NAME
# waits, prints that output (less the builds' progress lines) and returns its status.
declare -A job_pid job_log
start_job() {
  local name=$1
  shift
  job_log[$name]=$(mktemp)
  (
    job_start=$(date +%s)
    status=0
    "$@" || status=$?
    echo "-- $name: exit $status, took $(($(date +%s) - job_start))s, done $(since_start) into the gate"
    exit $status
  ) >"${job_log[$name]}" 2>&1 &
  job_pid[$name]=$!
}
wait_job() {
  local name=$1 status=0
  wait "${job_pid[$name]}" || status=$?
  echo "== $name"
  grep -v '^\[ *[0-9]*%\]' "${job_log[$name]}" || true
  rm -f "${job_log[$name]}"
  unset "job_pid[$name]"
  return $status
}
failed=()
wait_all_jobs() {
  local name
  for name in "${!job_pid[@]}"; do
    wait_job "$name" || failed+=("$name")
  done
}

stage "install dependencies"
scripts/install-deps.sh

stage "format and layering check"
git ls-files -- '*.cpp' '*.h' | xargs clang-format --dry-run -Werror
python3 scripts/check_layers.py

# The shipped server (g++ -O2) and the allocation counts, which need the sanitizers off, then the
# tests this build runs. Below the sanitized server and the tests, above the rest of the
# sanitizer build: its tests mostly wait, so they are best run beside the CPU-bound unit tests
# and fuzz targets, not after them. (Niced below the rest, its chain of modules, each batch
# waiting for the one before, was the only work left at the end.)
shipped_build_and_tests() {
  # (A function run for its status ignores set -e: hence the returns.)
  MA_UNITY_ALL=ON nice -n 5 scripts/build.sh shipped || return
  echo "-- the g++ build was done $(since_start) into the gate"
  (cd build && ctest --output-on-failure --timeout 600 -j3 -L 'alloc|shipped')
}
# clang-tidy checks what changed since the last whole-tree pass (.ci/tidy-clean), on idle CPU.
tidy_changes() { nice -n 15 scripts/tidy.sh --since "$(cat .ci/tidy-clean)"; }

# Reports are fatal (-fno-sanitize-recover=all at build time, halt_on_error here); a leak
# makes the process exit non-zero at its end, which ctest and the integration harness check.
asan_options=(detect_leaks=1 halt_on_error=1 strict_string_checks=1
  detect_stack_use_after_return=1 check_initialization_order=1)
ASAN_OPTIONS=$(IFS=:; echo "${asan_options[*]}")
export ASAN_OPTIONS
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# Three at a time: they mostly wait.
sanitized_integration_tests() {
  cd build-asan && ctest --output-on-failure --timeout 900 -j3 -L integration
}

stage "sanitizer build of the server; the g++ build and clang-tidy beside it, niced"
start_job "g++ build, then its tests" shipped_build_and_tests
start_job clang-tidy tidy_changes
if ! { scripts/fuzz.sh --configure --build-dir build-asan --opt 0 &&
  cmake --build build-asan -j"$(nproc)" --target metrics-adapter; }; then
  wait_all_jobs
  exit 1
fi

stage "the rest of the sanitizer build (unit tests, fuzz targets), the integration tests beside it"
start_job "integration tests under the sanitizers" sanitized_integration_tests
unit_status=0
if nice -n 10 cmake --build build-asan -j"$(nproc)"; then
  stage "unit tests and fuzz targets under the sanitizers, beside what is still running"
  # One process per binary, mostly CPU-bound (unit_server waits on its sockets).
  (cd build-asan && ctest --output-on-failure --timeout 900 -j3 -L 'unit|fuzz') || unit_status=$?
else
  unit_status=1
fi

stage "waiting for the other jobs"
wait_all_jobs
((unit_status)) && failed+=("unit tests and fuzz targets under the sanitizers (or their build)")
if ((${#failed[@]})); then
  printf 'failed: %s\n' "${failed[@]}" >&2
  exit 1
fi

stage "done"
