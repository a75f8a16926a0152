#!/usr/bin/env bash
# Stages STK (stanford-stk 0.7.1, BSD: MegaBlocks' block-sparse Triton kernels) for the benchmark's
# STK peer: downloads its PyPI sdist (pure Python over Triton) and unpacks its `stk/` package into
# .carry/stk/stk/ at the repo root, where bsrmm_bench/peers/stk_triton.py finds it. Run it on a
# machine with PyPI access; .carry is ignored by git, so carry it to the GPU machine (which has
# torch and triton but no network). Never vendored into the repo.
#   packages/bench/experiments/stage-stk.sh [PYTHON]    (default: python3)
set -euo pipefail
VERSION=0.7.1
PYTHON=${1:-python3}
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
DEST="$ROOT/.carry/stk"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
"$PYTHON" -m pip download --quiet --no-deps --no-binary :all: "stanford-stk==$VERSION" -d "$WORK"
tar -xzf "$WORK/stanford_stk-$VERSION.tar.gz" -C "$WORK"
rm -rf "$DEST"
mkdir -p "$DEST"
cp -r "$WORK/stanford_stk-$VERSION/stk" "$DEST/stk"
cp "$WORK/stanford_stk-$VERSION/LICENSE" "$DEST/" 2>/dev/null || true
find "$DEST" -name '*_test.py' -delete   # STK's own tests need absl; the peer does not run them
echo "STK $VERSION staged in $DEST/stk ($(find "$DEST/stk" -name '*.py' | wc -l) files); carry .carry to the GPU machine"
