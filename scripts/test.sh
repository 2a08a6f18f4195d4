#!/usr/bin/env bash
# The whole test gate: install dependencies, format check, build, unit and integration tests;
# then the same tests again in a clang AddressSanitizer + UndefinedBehaviorSanitizer (+ leak
# checking) build, where the libFuzzer targets also run for a fixed number of inputs each, and
# clang-tidy over src/ (.clang-tidy). Any sanitizer report or tidy finding fails the gate. Every
# stage prints how long it took.
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

stage "build"
scripts/build.sh

stage "tests"
(cd build && ctest --output-on-failure --timeout 600 -j2)

stage "sanitizer build (clang, ASan+UBSan, fuzz targets)"
scripts/fuzz.sh --build --build-dir build-asan --opt 0

stage "clang-tidy (what changed since the last whole-tree pass, .ci/tidy-clean)"
scripts/tidy.sh --since "$(cat .ci/tidy-clean)"

stage "tests and fuzz targets under the sanitizers"
# Reports are fatal (-fno-sanitize-recover=all at build time, halt_on_error here); a leak
# makes the process exit non-zero at its end, which ctest and the integration harness check.
asan_options=(detect_leaks=1 halt_on_error=1 strict_string_checks=1
  detect_stack_use_after_return=1 check_initialization_order=1)
ASAN_OPTIONS=$(IFS=:; echo "${asan_options[*]}")
export ASAN_OPTIONS
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
(cd build-asan && ctest --output-on-failure --timeout 900 -j2)

stage done
