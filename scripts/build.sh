#!/usr/bin/env bash
# Configures and builds tandem into build/ (Release, Ninja). The binary is build/tandem.
# Configures only a new build folder: ninja re-runs CMake by itself when a CMakeLists.txt
# changes, and configuring an existing folder again gives some pkg-config flags in another
# order, which made the second of the README's two commands rebuild half the tree.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
fi
cmake --build build
# Every src/ header compiles on its own (CMakeLists.txt: tandem_header_check; ~4 min on 2 cores
# the first time, nothing after unless a header changes).
cmake --build build --target tandem_header_check
