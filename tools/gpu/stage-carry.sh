#!/usr/bin/env bash
# Builds, on this (CPU-only) machine, the Rust, Burn and Node test programs with CUDA and stages
# them into .carry/ for the GPU machine, where tools/gpu-check.sh's `carried` step runs them
# (that machine has no cargo, no node and no network):
#
#   .carry/payload.tar.xz    one xz archive: lib/libbsrmm.so.0 (the core with CUDA, shared: one
#                            copy of the kernels for every program), rust/bsrmm/* and
#                            rust/burn-bsrmm/cuda (cargo's test executables, dynamically linked),
#                            rust/examples/* (the GPU timing example), node/node (this machine's
#                            node) and node/pkg/ (dist/ with the CUDA addon, test/)
#   .carry/unpack.sh         sourced by the runners: unpacks the payload once into $TMPDIR
#   .carry/bin/rust-bsrmm, .carry/bin/rust-burn-bsrmm, .carry/bin/gpu-timing, .carry/node/run.sh,
#   .carry/node/bench.sh (the Node benchmark runner, packages/node/bench)
#
# The runners set LD_LIBRARY_PATH for libbsrmm.so.0 and, where nvidia-smi sees a GPU,
# BSRMM_TEST_REQUIRE_CUDA=1 (a GPU test that cannot reach the GPU fails instead of skipping).
# .carry/googletest (gpu-check's build step) is left alone. Everything carried must fit 64 MiB;
# the sizes are printed and checked.
#
#   tools/gpu/stage-carry.sh            (from anywhere; re-runs only rebuild what changed)
#
# Environment: BSRMM_CARRY_BUILD (build dir, default build/carry), BSRMM_JOBS (default 2),
# BSRMM_CARRY_NO_BURN_CUDA=1 (skip Burn's CUDA backend: its build needs the LLVM 23.1 SDK).
# Needs the toolchain (`npm run bootstrap`: nvcc, the venv) and the node package's dist/ built.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# Every build below uses the project toolchain (nvcc, CUDACXX, the venv).
if [ -z "${BSRMM_TOOLCHAIN:-}" ]; then
  exec "$ROOT/node_modules/.bin/tsx" "$ROOT/tools/with-toolchain.ts" bash "${BASH_SOURCE[0]}" "$@"
fi
BUILD="${BSRMM_CARRY_BUILD:-$ROOT/build/carry}"
JOBS="${BSRMM_JOBS:-2}"
CARRY="$ROOT/.carry"
STAGE="$BUILD/stage"
LIMIT_BYTES=$((64 * 1024 * 1024))
# Burn 0.22.1's CUDA backend (cubecl-cuda 0.11.3) always builds cubecl-llvm, whose build script
# (tracel-llvm-bundler 23.1.0-4) takes an LLVM 23.1 install from its cache directory
# ($XDG_DATA_HOME/tracel/tracel-llvm-23.1.0-4, used as is when it holds the file
# .tracel-llvm-installed) and otherwise downloads one from outside the package registries. The
# same LLVM release comes from PyPI as a static SDK with llvm-config (mlc-llvm-static, plus the
# NVPTX backend in its extra-targets wheel); it is installed into .toolchain and placed there.
LLVM_SDK_VERSION="23.1.1.post0"
LLVM_ROOT="$ROOT/.toolchain/llvm-23"
TRACEL_LLVM="$LLVM_ROOT/data/tracel/tracel-llvm-23.1.0-4"

say() { echo "stage-carry: $*"; }
die() { echo "stage-carry: $*" >&2; exit 1; }

[ -n "${CUDACXX:-}" ] && [ -x "$CUDACXX" ] || die "no nvcc (CUDACXX): run 'npm run bootstrap' first (and not with BSRMM_NO_CUDA=1)"
command -v cargo >/dev/null || die "no cargo on PATH"

# ---- the core: shared, with CUDA ----
say "core (shared, CUDA) in $BUILD/core"
cmake -S "$ROOT/packages/core-cuda" -B "$BUILD/core" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DBUILD_SHARED_LIBS=ON -DBSRMM_CUDA=ON -DBSRMM_BUILD_TESTS=OFF -DCMAKE_CUDA_COMPILER="$CUDACXX" \
  -DCMAKE_INSTALL_PREFIX="$BUILD/core/install" > "$BUILD/core-configure.log" 2>&1 ||
  { cat "$BUILD/core-configure.log"; die "core configure failed"; }
cmake --build "$BUILD/core" -j "$JOBS"
cmake --install "$BUILD/core" > /dev/null

# ---- LLVM 23.1 for Burn's CUDA backend ----
burn_cuda=1
if [ "${BSRMM_CARRY_NO_BURN_CUDA:-}" = 1 ]; then
  burn_cuda=0
  say "BSRMM_CARRY_NO_BURN_CUDA=1: Burn's CUDA backend is not built"
elif [ ! -f "$TRACEL_LLVM/.tracel-llvm-installed" ]; then
  say "LLVM $LLVM_SDK_VERSION SDK from PyPI into $LLVM_ROOT"
  python -m pip install --quiet --no-deps --target "$LLVM_ROOT/sdk" \
    "mlc-llvm-static==$LLVM_SDK_VERSION" "mlc-llvm-static-extra-targets==$LLVM_SDK_VERSION"
  sdk="$LLVM_ROOT/sdk/mlc_llvm_static/static"
  "$sdk/bin/llvm-config" --targets-built | grep -qw NVPTX || die "the LLVM SDK in $sdk has no NVPTX backend"
  mkdir -p "$TRACEL_LLVM"
  for dir in bin include lib; do ln -sfn "$sdk/$dir" "$TRACEL_LLVM/$dir"; done
  touch "$TRACEL_LLVM/.tracel-llvm-installed"
fi

# ---- Rust: test executables and examples, linked against the shared core ----
export CARGO_TARGET_DIR="$BUILD/cargo" BSRMM_CORE_LINK=dynamic BSRMM_CORE_PREFIX="$BUILD/core/install"
export BSRMM_JOBS="$JOBS" XDG_DATA_HOME="$LLVM_ROOT/data"
# The dev profile (dependencies at opt-level 1, see Cargo.toml) without debug info: the test
# binaries stay small enough to carry and Burn builds in a fraction of release's time.
export CARGO_PROFILE_DEV_DEBUG=0 CARGO_INCREMENTAL=0
features=()
[ $burn_cuda = 1 ] && features=(--features burn-bsrmm/cuda)
rm -rf "$STAGE"
mkdir -p "$STAGE/lib" "$STAGE/rust/bsrmm" "$STAGE/rust/burn-bsrmm" "$STAGE/rust/examples" "$STAGE/node/pkg"
# cargo's JSON messages name every executable it built: "<package dir> <kind> <path>" lines.
executables() {
  python -c '
import json, os, sys
for line in sys.stdin:
    if not line.startswith("{"):
        continue
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable"):
        package = os.path.basename(os.path.dirname(m["manifest_path"]))
        print(package, m["target"]["kind"][0], m["executable"])
'
}
say "cargo: bsrmm and burn-bsrmm tests${features:+ (burn-bsrmm with cuda)}"
(cd "$ROOT/packages/rust-burn" &&
  cargo test --no-run -j "$JOBS" -p bsrmm -p burn-bsrmm "${features[@]}" --message-format=json-render-diagnostics) |
  executables > "$BUILD/tests.txt"
(cd "$ROOT/packages/rust-burn" &&
  cargo build -j "$JOBS" -p bsrmm --example gpu_timing --message-format=json-render-diagnostics) |
  executables > "$BUILD/examples.txt"
# Every bsrmm test executable (a few MB each); of burn-bsrmm only tests/cuda.rs: each Burn test
# executable links Burn, CubeCL and LLVM (~100 MB), and the others test Flex, which CI runs here.
while read -r package kind path; do
  name="$(basename "$path")"
  name="${name%-*}"
  case "$package/$kind/$name" in bsrmm/test/* | bsrmm/lib/* | burn-bsrmm/test/cuda) ;; *) continue ;; esac
  cp "$path" "$STAGE/rust/$package/$name"
done < "$BUILD/tests.txt"
while read -r package kind path; do
  if [ "$kind" = example ]; then cp "$path" "$STAGE/rust/examples/"; fi
done < "$BUILD/examples.txt"
cp "$ROOT/packages/rust-burn/bsrmm/examples/gpu_timing.py" "$STAGE/rust/examples/"

# ---- Node: the addon on the shared core, the built TypeScript layer, the tests, node ----
say "cargo: the Node addon"
(cd "$ROOT/packages/rust-burn" &&
  cargo build -j "$JOBS" -p bsrmm-node --message-format=json-render-diagnostics) > "$BUILD/node-addon.json"
addon="$(python -c '
import json, sys
for line in open(sys.argv[1]):
    m = json.loads(line) if line.startswith("{") else {}
    if m.get("reason") == "compiler-artifact" and "cdylib" in m["target"]["crate_types"]:
        print([f for f in m["filenames"] if f.endswith(".so")][0])
' "$BUILD/node-addon.json")"
node_pkg="$ROOT/packages/node"
[ -f "$node_pkg/dist/esm/index.js" ] && [ -f "$node_pkg/dist/native/binding.cjs" ] ||
  die "packages/node/dist is not built: run 'pnpm --filter bsrmm build' (or npm run build) first"
stale="$(find "$node_pkg/ts" -name '*.ts' -newer "$node_pkg/dist/esm/index.js" | head -n 1)"
[ -z "$stale" ] || die "packages/node/dist is older than $stale: run 'pnpm --filter bsrmm build:ts' first"
cp -r "$node_pkg/dist" "$node_pkg/package.json" "$STAGE/node/pkg/"
cp "$addon" "$STAGE/node/pkg/dist/native/bsrmm.linux-x64-gnu.node"
mkdir -p "$STAGE/node/pkg/test"
# pack.test.mjs packs and installs with npm, which the GPU machine does not have.
for test in "$node_pkg"/test/*; do
  [ "$(basename "$test")" = pack.test.mjs ] || cp "$test" "$STAGE/node/pkg/test/"
done
# The Node benchmark runner (its suites are read from the GPU machine's checkout: --cases-dir).
rm -rf "$STAGE/node/pkg/bench"
cp -r "$node_pkg/bench" "$STAGE/node/pkg/bench"
cp "$(readlink -f "$(command -v node)")" "$STAGE/node/node"
# Its symbol table only (addons bind to the dynamic symbols, which stay): 12 MiB less to carry.
strip --strip-unneeded "$STAGE/node/node"

cp -L "$BUILD/core/install/lib/libbsrmm.so.0" "$STAGE/lib/"
# Symbols are not needed to run tests; stripping roughly halves what xz has to carry.
find "$STAGE/rust" "$STAGE/lib" -type f ! -name '*.py' -exec strip --strip-unneeded {} +
strip --strip-unneeded "$STAGE/node/pkg/dist/native/bsrmm.linux-x64-gnu.node"

# ---- .carry/: the payload and its runners ----
say "packing (xz -9)"
rm -rf "$CARRY/bin" "$CARRY/node" "$CARRY/payload.tar.xz" "$CARRY/unpack.sh"
mkdir -p "$CARRY/bin" "$CARRY/node"
tar -C "$STAGE" -cf - lib rust node | xz -9e -T "$JOBS" > "$CARRY/payload.tar.xz"

cat > "$CARRY/unpack.sh" <<'EOF'
# Sourced by the carried runners: unpacks payload.tar.xz once (per payload) into $TMPDIR and
# sets PAYLOAD, LD_LIBRARY_PATH (libbsrmm.so.0) and, with a GPU, BSRMM_TEST_REQUIRE_CUDA=1. python3's
# tarfile reads xz, so the GPU machine needs no xz binary. Written by tools/gpu/stage-carry.sh.
CARRY_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PAYLOAD="${TMPDIR:-/tmp}/bsrmm-carry-$(cksum < "$CARRY_DIR/payload.tar.xz" | cut -d' ' -f1)"
if [ ! -d "$PAYLOAD" ]; then
  python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' \
    "$CARRY_DIR/payload.tar.xz" "$PAYLOAD.partial" && mv "$PAYLOAD.partial" "$PAYLOAD" || exit 1
fi
export LD_LIBRARY_PATH="$PAYLOAD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# Where the driver sees a GPU, a GPU test that would skip fails instead (a CPU-only build or a
# broken CUDA setup must not pass as skips); elsewhere the GPU tests skip with their reason.
if [ -z "${BSRMM_TEST_REQUIRE_CUDA:-}" ] && nvidia-smi -L > /dev/null 2>&1; then
  export BSRMM_TEST_REQUIRE_CUDA=1
fi
EOF

# rust-<package>: every test executable of the package, one after another (burn-bsrmm staged
# without its CUDA tests, BSRMM_CARRY_NO_BURN_CUDA=1: says so and passes).
for package in bsrmm burn-bsrmm; do
  cat > "$CARRY/bin/rust-$package" <<EOF
#!/usr/bin/env bash
# The $package crate's cargo test executables (built with CUDA by tools/gpu/stage-carry.sh).
. "\$(dirname "\${BASH_SOURCE[0]}")/../unpack.sh"
if [ "$package" = burn-bsrmm ] && ! compgen -G "\$PAYLOAD/rust/$package/*" > /dev/null; then
  echo "$package: no test executables carried (staged with BSRMM_CARRY_NO_BURN_CUDA=1?)"
  exit 0
fi
failed=0
for test in "\$PAYLOAD/rust/$package"/*; do
  echo "--- \$(basename "\$test")"
  "\$test" || failed=1
done
exit \$failed
EOF
done

cat > "$CARRY/bin/gpu-timing" <<'EOF'
#!/usr/bin/env bash
# M = K = 8192, N = 4096, 64x64 blocks, density 1/8, fp16: the same product through the Rust
# API (device-resident), Burn's CUDA tensors and the Python binding (when gpu-check's python
# step installed it). Each checks 256 elements of its result against float64.
. "$(dirname "${BASH_SOURCE[0]}")/../unpack.sh"
if ! nvidia-smi -L > /dev/null 2>&1; then
  echo "gpu-timing: SKIP, no GPU (nvidia-smi -L fails)"
  exit 0
fi
failed=0
"$PAYLOAD/rust/examples/gpu_timing" || failed=1
if [ -x "$PAYLOAD/rust/burn-bsrmm/cuda" ]; then
  "$PAYLOAD/rust/burn-bsrmm/cuda" --ignored --nocapture --exact cuda_timing || failed=1
else
  echo "burn-bsrmm cuda_timing: not carried (staged with BSRMM_CARRY_NO_BURN_CUDA=1)"
fi
if python3 -c 'import bsrmm, torch' 2>/dev/null; then
  python3 "$PAYLOAD/rust/examples/gpu_timing.py" || failed=1
else
  echo "gpu_timing.py: bsrmm or torch is not importable (gpu-check's python step installs bsrmm)"
fi
exit $failed
EOF

cat > "$CARRY/node/run.sh" <<'EOF'
#!/usr/bin/env bash
# The bsrmm npm package's node:test suites (GPU ones included) on the carried node and the
# CUDA addon (built by tools/gpu/stage-carry.sh).
. "$(dirname "${BASH_SOURCE[0]}")/../unpack.sh"
cd "$PAYLOAD/node/pkg" && exec "$PAYLOAD/node/node" --test --test-reporter=spec test/*.test.mjs test/*.test.cjs
EOF
cat > "$CARRY/node/bench.sh" <<'EOF'
#!/usr/bin/env bash
# The Node benchmark runner on the carried node and CUDA addon:
#   .carry/node/bench.sh --suite grid --device cuda:0 --out DIR [--filter REGEX]
# (the suites come from the checkout beside .carry: packages/bench/cases).
. "$(dirname "${BASH_SOURCE[0]}")/../unpack.sh"
exec "$PAYLOAD/node/node" "$PAYLOAD/node/pkg/bench/run.mjs" --cases-dir "$CARRY_DIR/../packages/bench/cases" "$@"
EOF
chmod +x "$CARRY"/bin/* "$CARRY/node/run.sh" "$CARRY/node/bench.sh"

# ---- sizes ----
say "staged, uncompressed:"
(cd "$STAGE" && du -sb lib/libbsrmm.so.0 rust/bsrmm rust/burn-bsrmm rust/examples node/node node/pkg | sort -rn |
  awk '{ printf "  %8.1f MiB  %s\n", $1 / 1048576, $2 }')
total=$(du -sb "$CARRY" | cut -f1)
say "payload.tar.xz $(du -b "$CARRY/payload.tar.xz" | awk '{ printf "%.1f MiB", $1 / 1048576 }'), .carry/ in all $(awk -v b="$total" 'BEGIN { printf "%.1f MiB", b / 1048576 }') (limit 64 MiB)"
[ "$total" -le $LIMIT_BYTES ] || die ".carry/ is $total bytes, over the 64 MiB that travels to the GPU machine"
# The tracked tree travels too, within the same 64 MiB: say what fits beside it.
tree=$(cd "$ROOT" && git ls-files -z | xargs -0 du -cb 2>/dev/null | tail -n 1 | cut -f1)
runners=$(du -sb "$CARRY/payload.tar.xz" "$CARRY/unpack.sh" "$CARRY/bin" "$CARRY/node" | awk '{ s += $1 } END { print s }')
if [ $((tree + total)) -le $LIMIT_BYTES ]; then
  say "done: run tools/gpu-check.sh there with carry=[\".carry\"] (BSRMM_GPU_STEPS=\"build python carried\" for these alone)"
elif [ $((tree + runners)) -le $LIMIT_BYTES ]; then
  say "done: with the tracked tree ($((tree / 1048576)) MiB) all of .carry/ exceeds 64 MiB: carry"
  say "  [\".carry/payload.tar.xz\", \".carry/unpack.sh\", \".carry/bin\", \".carry/node\"] (BSRMM_GPU_STEPS=\"env python carried\")"
else
  die "the payload and the tracked tree ($((tree / 1048576)) MiB) exceed 64 MiB together: stage with BSRMM_CARRY_NO_BURN_CUDA=1"
fi
