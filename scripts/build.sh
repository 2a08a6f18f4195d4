#!/usr/bin/env bash
# Configures and builds into ./build (Release, -O2, no debug info: debug info made the build
# about 40 % slower, and CI's time is bounded). With no argument it builds everything;
# otherwise only the targets named, e.g. `scripts/build.sh metrics-adapter` for the server
# alone (the demo), or `shipped` for the server and the allocation counts (the test gate).
#   scripts/build.sh [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
# MA_UNITY_ALL=ON (the test gate, the demo: builds from nothing) compiles each module as one
# batch, where the default is batches of 8 and file by file for the handlers, for quick
# rebuilds after an edit; given on every run so that it never sticks to build/ from an earlier
# one.
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DMA_UNITY_ALL="${MA_UNITY_ALL:-OFF}" >/dev/null
targets=()
(($#)) && targets=(--target "$@")
cmake --build build -j"$(nproc)" "${targets[@]}"
