#!/usr/bin/env bash
# A compiler launcher that records each compile's CPU time (user + sys of the compiler and its
# children) and wall time, one line per object, in $MA_COMPILE_TIMES (default
# compile-times.tsv in the working directory). Configure a build with it to find the dear
# translation units (docs/performance.md, "Build times"):
#   cmake -S . -B /tmp/bt -DCMAKE_CXX_COMPILER_LAUNCHER="$PWD/scripts/timed_compile.sh"
#   MA_COMPILE_TIMES=/tmp/times.tsv cmake --build /tmp/bt -j2
#   sort -t$'\t' -k1,1nr /tmp/times.tsv | head
set -uo pipefail
log=${MA_COMPILE_TIMES:-compile-times.tsv}
object=
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  [[ ${args[i]} == -o ]] && object=${args[i + 1]}
done
start=$(date +%s.%N)
"$@"
status=$?
end=$(date +%s.%N)
# times (a builtin: run in this shell, not a subshell, or its children would be another
# process's) prints this shell's and then its children's user and sys times.
times_file=$(mktemp)
times >"$times_file"
cpu=$(sed -n 2p "$times_file" | awk '{
  split($1, u, /m|s/); split($2, s, /m|s/); printf "%.2f", u[1] * 60 + u[2] + s[1] * 60 + s[2] }')
rm -f "$times_file"
printf '%s\t%.2f\t%s\n' "$cpu" "$(echo "$end - $start" | bc)" "${object:-?}" >>"$log"
exit $status
