#!/usr/bin/env bash
# Configures and builds tandem into build/ (Release, Ninja). The binary is build/tandem.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build
