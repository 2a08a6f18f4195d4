#!/usr/bin/env bash
# A/B of two commits on this machine (issue 47): builds each in a work tree of its own, cached by
# full commit hash, then runs this tree's perf suite (bench/run.py) against the two builds in
# turn, A, B, A, B, ..., and prints each figure's medians, B/A and whether the difference is
# larger than the runs' own spread (bench/ab_summary.py). One run per build says little on a
# shared 2-core host, whose timings drift by 15-30 % within minutes; interleaving puts that drift
# on both builds alike.
#
#   bench/ab.sh REV_A REV_B [--rounds N] [--out DIR] [--build-only] [bench/run.py options...]
#
# bench/run.py options are passed through and replace the defaults below (e.g. --sizes 100000,
# --seconds 10, --runs 3); --json and --build-dir are set per run. Environment:
#   AB_CACHE  where builds and runs are kept (default ~/.cache/metrics-adapter-ab);
#             <cache>/<sha>/src is the work tree, <cache>/<sha>/build its build
#   AB_JOBS   parallel compile jobs (default 1: the machine is shared)
# Not part of the test gate: timings belong to benches.
set -euo pipefail

usage() {
  sed -n '/^#   bench/p' "$0" | sed 's/^#   //' >&2
  exit 2
}

here="$(cd "$(dirname "$0")/.." && pwd)"
cache="${AB_CACHE:-$HOME/.cache/metrics-adapter-ab}"
jobs="${AB_JOBS:-1}"
rounds=5
out=""
build_only=0
(($# >= 2)) || usage
rev_a="$1"
rev_b="$2"
shift 2
# Five rounds of these take about 12 minutes here: each run is about 70 s (the discovery,
# start-up, load, split and real-Prometheus phases at 10k series, 3 s load runs).
run_args=(--sizes 10000 --runs 1 --seconds 3)
passed=()
while (($#)); do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --build-only) build_only=1; shift ;;
    -h|--help) usage ;;
    *) passed+=("$1"); shift ;;
  esac
done
((rounds >= 1)) || usage
# run.py's last occurrence of an option wins, so the caller's come after the defaults.
run_args+=("${passed[@]+"${passed[@]}"}")

for tool in wrk nginx prometheus; do
  command -v "$tool" >/dev/null || [[ -x /usr/sbin/$tool ]] || {
    echo "ab.sh: $tool is missing (python3 bench/run.py installs what the bench needs)" >&2
    exit 1
  }
done

sha_a="$(git -C "$here" rev-parse --verify "$rev_a^{commit}")"
sha_b="$(git -C "$here" rev-parse --verify "$rev_b^{commit}")"

# What the three programs are built from: the commit's tree without the documentation, the
# tests and the bench's scripts. Commits that differ only there share one build, so a commit of
# docs or bench/*.py after an A/B costs no build from nothing.
build_inputs() {
  git -C "$here" ls-tree -r --full-tree "$1" |
    grep -Ev $'\t(docs/|tests/|bench/baselines/|bench/.*\\.(py|sh)$|.*\\.md$)' |
    git hash-object --stdin
}

# The build of one commit, as bench/run.py builds: Release at -O2, the bench programs on. A
# commit's build is made once and reused; "built" is written only when every target is there.
build_commit() {
  local sha="$1" dir="$cache/$1" lock inputs same
  inputs="$(build_inputs "$sha")"
  mkdir -p "$cache/inputs"
  if [[ ! -e "$dir" && -f "$cache/inputs/$inputs" ]]; then
    same="$(cat "$cache/inputs/$inputs")"
    if [[ -f "$cache/$same/built" ]]; then
      echo "ab.sh: ${sha:0:10} builds from the same sources as ${same:0:10}: its build serves" >&2
      ln -s "$same" "$dir"
    fi
  fi
  mkdir -p "$dir"
  # Two A/Bs started together that need the same commit build it once: the second waits.
  exec {lock}>"$dir/lock"
  flock "$lock"
  if [[ -f "$dir/built" ]]; then
    echo "ab.sh: ${sha:0:10} already built in $dir/build" >&2
    [[ -f "$cache/inputs/$inputs" ]] || echo "$sha" >"$cache/inputs/$inputs"
    exec {lock}>&-
    return
  fi
  if [[ ! -e "$dir/src/.git" ]]; then
    git -C "$here" worktree prune
    git -C "$here" worktree add --detach "$dir/src" "$sha" >&2
  fi
  local launcher=()
  # ccache, when installed, shares the unchanged files' objects between commits (the base
  # directory makes the work trees' different paths hash alike).
  if command -v ccache >/dev/null; then
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
    export CCACHE_BASEDIR="$dir/src" CCACHE_NOHASHDIR=1
  fi
  echo "ab.sh: building ${sha:0:10} in $dir/build (-j$jobs)" >&2
  cmake -S "$dir/src" -B "$dir/build" -DCMAKE_BUILD_TYPE=Release \
    "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG" -DMA_BUILD_BENCH=ON "${launcher[@]}" >/dev/null
  cmake --build "$dir/build" -j"$jobs" --target metrics-adapter fake_prometheus >/dev/null
  # Older commits may lack the parse microbenchmark: run.py then leaves its line out.
  local targets
  targets="$(cmake --build "$dir/build" --target help)"
  if grep -qw discovery_parse_bench <<<"$targets"; then
    cmake --build "$dir/build" -j"$jobs" --target discovery_parse_bench >/dev/null
  else
    echo "ab.sh: ${sha:0:10} has no discovery_parse_bench target" >&2
  fi
  touch "$dir/built"
  echo "$sha" >"$cache/inputs/$inputs"
  exec {lock}>&-
}

build_commit "$sha_a"
build_commit "$sha_b"
((build_only)) && exit 0

out="${out:-$cache/runs/${sha_a:0:10}-${sha_b:0:10}-$(date -u +%Y%m%dT%H%M%SZ)}"
mkdir -p "$out"
printf '%s\n' "A $rev_a $sha_a" "B $rev_b $sha_b" "rounds $rounds" \
  "run.py ${run_args[*]}" >"$out/ab.txt"
for ((round = 1; round <= rounds; round++)); do
  for side in A B; do
    sha="$sha_a"
    [[ $side == B ]] && sha="$sha_b"
    log="$out/round$round-$side.log"
    echo "ab.sh: round $round/$rounds, $side (${sha:0:10}) ..." >&2
    if ! python3 "$here/bench/run.py" --no-build --build-dir "$cache/$sha/build" \
      "${run_args[@]}" --json "$out/round$round-$side.json" >"$log" 2>&1; then
      echo "ab.sh: the run failed; its output: $log" >&2
      tail -n 20 "$log" >&2
      exit 1
    fi
  done
done
python3 "$here/bench/ab_summary.py" "$out"
