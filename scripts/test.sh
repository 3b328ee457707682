#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test tier (unit, parity, e2e; multinode
# when run as root, else those report SKIP).
# Extra arguments go to ctest, e.g. `scripts/test.sh -L unit`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
ctest --test-dir build --output-on-failure --timeout 900 "$@"
