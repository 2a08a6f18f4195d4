#!/usr/bin/env bash
# clang-tidy with the repository's .clang-tidy (bugprone, performance, modernize and our
# naming) over src/, or over the files given. Any finding fails. It reads the compile database
# of a clang build configured file by file (MA_UNITY=OFF: a unity build lists its batches, not
# the sources): by default it configures build-tidy so, without building it (a few seconds).
#
#   scripts/tidy.sh [--build-dir DIR] [--since REV] [FILE...]
#
# --since REV checks only the sources that changed since REV (a commit whose whole tree passed),
# and for a changed header the source of the same name: the whole tree costs about 6 minutes of
# the test gate's 2 cores, a change usually seconds. An unknown REV (a shallow clone) checks all.
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=
since=
while [[ ${1:-} == --* ]]; do
  case $1 in
    --build-dir) build_dir=$2 ;;
    --since) since=$2 ;;
    *) echo "tidy: unknown option $1" >&2; exit 2 ;;
  esac
  shift 2
done
if [[ -z $build_dir ]]; then
  build_dir=build-tidy
  cmake -S . -B "$build_dir" -DMA_FUZZ=ON -DMA_UNITY=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_COMPILER=clang++-14 >/dev/null
fi
if [[ ! -f $build_dir/compile_commands.json ]]; then
  echo "tidy: $build_dir/compile_commands.json is missing; configure that build first" >&2
  exit 2
fi

paths=("$@")
if [[ -n $since ]] && git rev-parse --verify --quiet "$since^{commit}" >/dev/null; then
  mapfile -t changed < <(
    { git diff --name-only "$since" -- src include; git ls-files --others --exclude-standard src; } |
      sort -u)
  for file in "${changed[@]}"; do
    case $file in
      *.cpp) [[ -f $file ]] && paths+=("$file") ;;
      *.h)
        stem=$(basename "$file" .h)
        while IFS= read -r source; do paths+=("$source"); done < <(find src -name "$stem.cpp")
        ;;
    esac
  done
  if [[ ${#paths[@]} -eq 0 ]]; then
    echo "tidy: no source changed since $since"
    exit 0
  fi
  mapfile -t paths < <(printf '%s\n' "${paths[@]}" | sort -u)
  echo "tidy: ${#paths[@]} sources changed since $since"
elif [[ -n $since ]]; then
  echo "tidy: $since is not in this clone; checking everything"
fi
[[ ${#paths[@]} -gt 0 ]] || paths=(src/)
# run-clang-tidy exits non-zero when clang-tidy failed on any file (WarningsAsErrors: '*'). Its
# file arguments are regular expressions matched against the compile database's paths.
run-clang-tidy-14 -clang-tidy-binary clang-tidy-14 -p "$build_dir" -quiet -j "$(nproc)" "${paths[@]}"
