#!/usr/bin/env bash
# Configures and builds into ./build (Release, -O2, no debug info: debug info made the build
# about 40 % slower, and CI's time is bounded). With no argument it builds everything (the test
# gate); otherwise only the targets named, e.g. `scripts/build.sh metrics-adapter` for the
# server alone (the demo), which skips compiling the unit tests.
#   scripts/build.sh [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
targets=()
(($#)) && targets=(--target "$@")
cmake --build build -j"$(nproc)" "${targets[@]}"
