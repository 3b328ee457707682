#!/usr/bin/env bash
# Installs every Debian 12 package tandem's build and tests need, on a bare machine.
# Idempotent: safe to run again. Needs root (or sudo).
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

PKGS=(
  build-essential cmake ninja-build pkg-config git curl ca-certificates iproute2 procps
  libgtest-dev libgmock-dev libbenchmark-dev
  libboost-dev libboost-system-dev
  libzmq3-dev cppzmq-dev libmsgpack-cxx-dev
  libdnnl-dev ocl-icd-opencl-dev opencl-c-headers  # dnnl-config.cmake requires OpenCL (Debian builds oneDNN with it)
  libpcre2-dev libutf8proc-dev nlohmann-json3-dev libcli11-dev libspdlog-dev libfmt-dev
  libxxhash-dev libssl-dev
  openssl  # e2e: test_tls.py makes its CA and certificates with the openssl command
  libgloo-dev  # comm/ "gloo" backend; pulls libhiredis-dev and libibverbs-dev (its Depends)
  libsqlite3-dev libpq-dev  # tandem manager's store: SQLite embedded, PostgreSQL via libpq
  libyaml-cpp-dev  # tandem serve --config FILE.yaml (vLLM's config files)
  postgresql  # the store tests start a real PostgreSQL server in a temporary directory
  python3 python3-jsonschema  # e2e: structured outputs validated by an independent JSON Schema validator
  chromium  # the web UI's browser tests (driven by npm's playwright-core)
  clang libclang-rt-14-dev  # scripts/fuzz.sh: libFuzzer + ASan/UBSan runtimes (libclang_rt.fuzzer)
  libtsan2 libasan8 libubsan1  # scripts/sanitize.sh: gcc's Thread/Address/UB sanitizer runtimes
  clang-format clang-tidy  # scripts/lint.sh: .clang-format over the tree, .clang-tidy on changed lines
)
# Node.js + npm for the real `openai` client: keep an existing install (e.g. NodeSource),
# otherwise take Debian's.
if ! command -v npm >/dev/null 2>&1; then PKGS+=(nodejs npm); fi
missing=()
for p in "${PKGS[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update
  $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
fi

# The real OpenAI client for e2e tests, in a test folder (never a global install).
HERE="$(cd "$(dirname "$0")/.." && pwd)"
NODE_DIR="$HERE/tests/e2e/node"
if [ ! -d "$NODE_DIR/node_modules/openai" ] || [ ! -d "$NODE_DIR/node_modules/zod" ]; then
  (cd "$NODE_DIR" && npm install --no-audit --no-fund --silent)
fi
# The web UI's pinned dependencies (ui/package-lock.json); the build compiles ui/ with them.
UI_DIR="$HERE/ui"
if [ ! -f "$UI_DIR/node_modules/.package-lock.json" ] ||
   [ "$UI_DIR/package-lock.json" -nt "$UI_DIR/node_modules/.package-lock.json" ]; then
  (cd "$UI_DIR" && npm ci --no-audit --no-fund --silent)
fi
echo "setup: all packages present"
