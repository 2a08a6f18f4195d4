#!/usr/bin/env bash
# The whole test gate: install dependencies, format check, build, unit and integration tests.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh

echo "== format check"
git ls-files -- '*.cpp' '*.h' | xargs clang-format --dry-run -Werror

echo "== build"
start=$(date +%s)
scripts/build.sh
echo "build took $(( $(date +%s) - start ))s"

echo "== tests"
cd build
ctest --output-on-failure --timeout 600 -j2
