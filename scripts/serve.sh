#!/usr/bin/env bash
# Installs what is missing, builds, and serves the real stories260K model on 127.0.0.1:8000
# (TANDEM_PORT changes the port). Extra arguments go to `tandem serve`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
# The shared folder beside the clone (TANDEM_SHARED_DIR overrides it), or the workplace's
# /work/shared for a clone elsewhere, as the test scripts look for it.
SHARED="${TANDEM_SHARED_DIR:-../shared}"
if [ ! -d "$SHARED/models" ] && [ -d /work/shared/models ]; then SHARED=/work/shared; fi
exec ./build/tandem serve "$SHARED/models/stories260k/stories260K.gguf" \
  --host 127.0.0.1 --port "${TANDEM_PORT:-8000}" "$@"
