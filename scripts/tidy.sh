#!/usr/bin/env bash
# clang-tidy with the repository's .clang-tidy (STYLE.md: bugprone, performance, modernize and our
# naming) over src/, or over the files given. Any finding fails. It needs a configured build
# directory for compile_commands.json; the sanitizer build's (clang) is the default.
#
#   scripts/tidy.sh [--build-dir DIR] [FILE...]
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=build-asan
if [[ ${1:-} == --build-dir ]]; then
  build_dir=$2
  shift 2
fi
if [[ ! -f $build_dir/compile_commands.json ]]; then
  echo "tidy: $build_dir/compile_commands.json is missing; configure that build first" >&2
  exit 2
fi
paths=("$@")
[[ ${#paths[@]} -gt 0 ]] || paths=(src/)
# run-clang-tidy exits non-zero when clang-tidy failed on any file (WarningsAsErrors: '*').
run-clang-tidy-14 -clang-tidy-binary clang-tidy-14 -p "$build_dir" -quiet -j "$(nproc)" "${paths[@]}"
