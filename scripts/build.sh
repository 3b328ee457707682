#!/usr/bin/env bash
# Configures and builds tandem into build/ (Release, Ninja). The binary is build/tandem.
# A unity build (CMAKE_UNITY_BUILD: each target's sources compiled 8 to a translation unit; the
# sanitizer trees, rarely rebuilt one file at a time, put 16 in one): Boost.Beast, nlohmann::json and their templates are then parsed and
# instantiated once per 8 sources, and a clean build takes ~5 minutes on 2 cores instead of
# ~26 source by source (docs/benchmarks.md "Build and test tiers"). The header check below
# stays one header per translation unit.
# Configures only a new build folder: ninja re-runs CMake by itself when a CMakeLists.txt
# changes, and configuring an existing folder again gives some pkg-config flags in another
# order, which made the second of the README's two commands rebuild half the tree.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_UNITY_BUILD=ON \
    -DCMAKE_UNITY_BUILD_BATCH_SIZE=8
fi
cmake --build build
# Every src/ header compiles on its own (CMakeLists.txt: tandem_header_check). Checked: the
# headers changed since the main that last landed (.ci/lint-base) and those that include them,
# directly or not (tools/header_check_set.py says why that is the whole check); all ~280 cost
# ~9 minutes of a fresh clone on 2 cores. TANDEM_HEADER_CHECK=all checks every header.
check_args=()
if [ "${TANDEM_HEADER_CHECK:-}" = all ]; then check_args=(--all); fi
header_list="$(python3 tools/header_check_set.py build "${check_args[@]}")"
mapfile -t header_checks <<< "$header_list"
if [ -n "$header_list" ]; then
  ninja -C build "${header_checks[@]}"
fi
