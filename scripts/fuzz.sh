#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan+UBSan, coverage where the targets feed) and runs one of
# them, or all in turn, for a while. Not part of the test gate, which runs each target for a
# fixed number of inputs through ctest (label `fuzz`).
#
#   scripts/fuzz.sh --list                    the targets
#   scripts/fuzz.sh label_selector 3600       one target for an hour
#   scripts/fuzz.sh all 600                   every target for ten minutes each
#   scripts/fuzz.sh --build                   only configure and build
#   scripts/fuzz.sh --configure               only configure (scripts/test.sh, which then builds
#                                             the server first)
#
# Options: --build-dir DIR (default build-fuzz), --opt N (optimisation level, default 1: faster
# fuzzing; scripts/test.sh builds build-asan with 0, which compiles in half the time),
# --jobs N (parallel fuzzing processes per target, default 1). Arguments after `--` go to
# libFuzzer.
# Inputs that find new coverage are kept in DIR/fuzz-corpus/<target>/ (fold the good ones into
# tests/fuzz/corpus/<target>/ with `-merge=1`); crashes are written to DIR/fuzz-artifacts/ and
# replay with `DIR/tests/fuzz/fuzz_<target> <crash file>`.
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=build-fuzz
opt=1
jobs=1
build_only=0
configure_only=0
positional=()
libfuzzer_args=()
while (($#)); do
  case "$1" in
    --build-dir) build_dir=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --opt) opt=$2; shift 2 ;;
    --build) build_only=1; shift ;;
    --configure) configure_only=1; shift ;;
    --list) ls tests/fuzz/*_fuzz.cpp | sed 's|.*/||; s|_fuzz.cpp$||'; exit 0 ;;
    --) shift; libfuzzer_args=("$@"); break ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) positional+=("$1"); shift ;;
  esac
done

if ((!build_only && !configure_only && ${#positional[@]} < 1)); then
  echo "usage: scripts/fuzz.sh [--build-dir DIR] [--opt N] [--jobs N] TARGET|all [SECONDS]" \
    "[-- libFuzzer flags]" >&2
  exit 2
fi

# The sanitizer build: clang for everything, line tables only (fast to build, still readable
# stacks). scripts/test.sh builds its sanitized tests and fuzz targets the same way.
cmake -S . -B "$build_dir" -DMA_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_COMPILER=clang++-14 -DMA_UNITY_ALL=ON \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O$opt -gline-tables-only" >/dev/null
((configure_only)) && exit 0
if ((build_only)); then
  cmake --build "$build_dir" -j"$(nproc)"
  exit 0
fi

target=${positional[0]}
seconds=${positional[1]:-600}
if [[ $target == all ]]; then
  mapfile -t targets < <("$0" --list)
else
  targets=("$target")
fi
cmake --build "$build_dir" -j"$(nproc)" --target "${targets[@]/#/fuzz_}"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
parallel=()
((jobs > 1)) && parallel=(-jobs="$jobs" -workers="$jobs")
status=0
for name in "${targets[@]}"; do
  corpus=$build_dir/fuzz-corpus/$name
  artifacts=$build_dir/fuzz-artifacts
  mkdir -p "$corpus" "$artifacts"
  echo "== fuzz_$name for ${seconds}s (corpus $corpus, crashes in $artifacts)"
  "$build_dir/tests/fuzz/fuzz_$name" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    "${parallel[@]}" -print_final_stats=1 -artifact_prefix="$artifacts/$name-" \
    "${libfuzzer_args[@]}" "$corpus" "tests/fuzz/corpus/$name" || status=1
done
exit $status
