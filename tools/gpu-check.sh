#!/usr/bin/env bash
# One command for the GPU machine: builds the core with CUDA and its tests, runs them (also under
# compute-sanitizer), builds and tests the Python package, runs the cross-binding conformance
# matrix, the benchmark and any carried Rust/Node test binaries. Keeps going after a failed step;
# writes everything to OUT_DIR:
#
#   gpu-check.log    every step's output, one after another, with a header per step
#   gpu-check.json   [{"step", "status": "pass"|"fail"|"skip", "seconds", "note"}]
#   (the benchmark writes its own results into OUT_DIR, the conformance matrix into OUT_DIR/conformance)
#
# and prints a short table last; exits non-zero if any step failed.
#
#   tools/gpu-check.sh [OUT_DIR]          OUT_DIR defaults to $OUT
#
# Needs: Linux + NVIDIA GPU, nvcc (13.0), cmake, ninja, python3 with torch/cupy/scipy/pybind11/
# scikit-build-core/pytest. No network. Environment:
#   BSRMM_BENCH_SUITE   benchmark suite (default grid)
#   BSRMM_GPU_STEPS     space-separated subset of steps to run (default: all), e.g. "build ctest"
#   BSRMM_GPU_BUILD     build directory (default <repo>/build/gpu-check)
#   BSRMM_JOBS          parallel build jobs (default: all cores)
set -u -o pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT_DIR="${1:-${OUT:-}}"
if [ -z "$OUT_DIR" ]; then
  echo "usage: tools/gpu-check.sh OUT_DIR   (or set OUT)" >&2
  exit 2
fi
mkdir -p "$OUT_DIR"
OUT_DIR="$(cd "$OUT_DIR" && pwd)"
BUILD="${BSRMM_GPU_BUILD:-$ROOT/build/gpu-check}"
JOBS="${BSRMM_JOBS:-$(nproc)}"
SUITE="${BSRMM_BENCH_SUITE:-grid}"
STEPS="${BSRMM_GPU_STEPS:-env build ctest timing roof memcheck racecheck synccheck python conformance bench carried}"
LOG="$OUT_DIR/gpu-check.log"
SUMMARY="$OUT_DIR/gpu-check.json"
: > "$LOG"
RESULTS=()   # "step|status|seconds|note"
CUDA_TESTS="$BUILD/tests/bsrmm_cuda_tests"
# The benchmark's GPU experiments (their README says what each measures): the timing and roof
# steps build and run grid_timing.cpp and row_tile_roof.cu; the build step reads ptxas -v with
# ptxas_report.py.
EXPERIMENTS="$ROOT/packages/bench/experiments"

# run_step NAME COMMAND...: runs the command with its output appended to the log, and records
# pass/fail and the time. A command that prints "SKIP: reason" as its last line and exits 0 is
# recorded as skipped.
run_step() {
  local name="$1"
  shift
  case " $STEPS " in *" $name "*) ;; *) return 0 ;; esac
  local start end status note=""
  start=$(date +%s%N)
  {
    echo
    echo "==================== step: $name ===================="
    echo "\$ $*"
  } >> "$LOG"
  echo ">>> $name" >&2
  local step_log="$OUT_DIR/.step.log"
  "$@" > "$step_log" 2>&1
  status=$?
  cat "$step_log" >> "$LOG"
  end=$(date +%s%N)
  local ms=$(((end - start) / 1000000))
  local seconds="$((ms / 1000)).$(((ms % 1000) / 100))"
  local last_line
  last_line="$(tail -n 1 "$step_log")"
  rm -f "$step_log"
  if [ $status -eq 0 ] && [[ "$last_line" == SKIP:* ]]; then
    RESULTS+=("$name|skip|$seconds|${last_line#SKIP: }")
  elif [ $status -eq 0 ]; then
    RESULTS+=("$name|pass|$seconds|")
  else
    note="exit $status; see gpu-check.log"
    RESULTS+=("$name|fail|$seconds|$note")
  fi
  echo "(step $name: exit $status)" >> "$LOG"
}

step_env() {
  nvidia-smi || return 1
  command -v nvcc && nvcc --version
  cmake --version | head -n 1
  ninja --version
  python3 -c 'import sys, torch; print(sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0))'
  command -v compute-sanitizer || echo "compute-sanitizer not on PATH"
  git -C "$ROOT" log --oneline -n 1 2>/dev/null || true
}

# The CUDA compiler the build uses: CMake's choice if given, else CUDACXX, else nvcc on PATH.
cuda_compiler() {
  echo "${CMAKE_CUDA_COMPILER:-${CUDACXX:-$(command -v nvcc)}}"
}

step_build() {
  local nvcc
  nvcc="$(cuda_compiler)"
  [ -n "$nvcc" ] || { echo "no nvcc: set CUDACXX or put nvcc on PATH"; return 1; }
  # The GPU machine's image may lack GoogleTest and cannot download it: build a carried source
  # tree (.carry/googletest, e.g. a copy of Debian's /usr/src/googletest) when none is installed.
  local gtest=()
  if ! ls /usr/include/gtest/gtest.h /usr/local/include/gtest/gtest.h >/dev/null 2>&1; then
    [ -d "$ROOT/.carry/googletest" ] || { echo "GoogleTest is not installed and .carry/googletest is absent"; return 1; }
    cmake -S "$ROOT/.carry/googletest" -B "$BUILD/googletest" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DBUILD_GMOCK=OFF -DCMAKE_INSTALL_PREFIX="$BUILD/googletest-install" &&
      cmake --build "$BUILD/googletest" -j "$JOBS" && cmake --install "$BUILD/googletest" || return 1
    gtest=(-DGTest_ROOT="$BUILD/googletest-install")
  fi
  cmake -S "$ROOT/packages/core-cuda" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DBSRMM_BUILD_TESTS=ON -DBSRMM_CUDA=ON -DCMAKE_CUDA_COMPILER="$nvcc" -DBSRMM_PTXAS_VERBOSE=ON \
    "${gtest[@]}" || return 1
  local start=$SECONDS status
  # -k 0: one broken target (a shared tree holds others' work in progress) must not keep the
  # rest from building; the step still fails, and ctest runs what did build.
  cmake --build "$BUILD" -j "$JOBS" -- -k 0 > "$BUILD/build.log" 2>&1
  status=$?
  # The Python step links this build's library instead of compiling the CUDA core a second time.
  cmake --install "$BUILD" --prefix "$BUILD/install" > /dev/null || status=1
  grep -v "^ptxas info\|^    [0-9]* bytes" "$BUILD/build.log"
  echo "build: $((SECONDS - start)) s with $JOBS jobs (exit $status)"
  # Registers and spills of every kernel (ptxas -v ran during the build).
  python3 "$EXPERIMENTS/ptxas_report.py" "$BUILD/build.log" | head -n 60
  return $status
}

step_ctest() {
  ctest --test-dir "$BUILD" --output-on-failure -j "$JOBS" --timeout 300
}

# The whole GPU suite under memcheck except the few large-N cases, which memcheck makes slow.
step_memcheck() {
  command -v compute-sanitizer >/dev/null || { echo "SKIP: compute-sanitizer not on PATH"; return 0; }
  [ -x "$CUDA_TESTS" ] || { echo "no $CUDA_TESTS (build step failed?)"; return 1; }
  compute-sanitizer --tool memcheck --error-exitcode 1 --leak-check full \
    "$CUDA_TESTS" --gtest_filter='-*n4096*'
}

# racecheck and synccheck are slow: one tensor-core variant per operand path, small problems.
SMALL_FILTER='AllCudaVariants/ForcedVariant.*/sm80_f16_m64n128k32_*:AllCudaVariants/ForcedVariant.*/sm80_tf32_m32n128k16_*:AllCudaVariants/ForcedVariant.*/generic_f16_*'
step_racecheck() {
  command -v compute-sanitizer >/dev/null || { echo "SKIP: compute-sanitizer not on PATH"; return 0; }
  compute-sanitizer --tool racecheck --racecheck-report all --error-exitcode 1 \
    "$CUDA_TESTS" --gtest_filter="$SMALL_FILTER"
}
step_synccheck() {
  command -v compute-sanitizer >/dev/null || { echo "SKIP: compute-sanitizer not on PATH"; return 0; }
  compute-sanitizer --tool synccheck --error-exitcode 1 "$CUDA_TESTS" --gtest_filter="$SMALL_FILTER"
}

# Quick kernel timing on the grid problem (packages/bench/experiments/grid_timing.cpp), against the built core.
step_timing() {
  local nvcc
  nvcc="$(cuda_compiler)"
  "$nvcc" -O2 -std=c++17 "$EXPERIMENTS/grid_timing.cpp" -I"$ROOT/packages/core-cuda/include" \
    -I"$ROOT/packages/core-cuda/src" "$BUILD/libbsrmm.a" -lpthread -o "$BUILD/grid_timing" || return 1
  "$BUILD/grid_timing" ${BSRMM_TIMING_FILTER:-}
}

# The row tiles' data-movement floor (packages/bench/experiments/row_tile_roof.cu): their TMA traffic
# alone, no math.
step_roof() {
  local nvcc
  nvcc="$(cuda_compiler)"
  "$nvcc" -O2 -std=c++17 -gencode arch=compute_90a,code=sm_90a "$EXPERIMENTS/row_tile_roof.cu" \
    "$ROOT/packages/core-cuda/src/cuda/sm90/tensor_map.cu" -I"$ROOT/packages/core-cuda/include" \
    -I"$ROOT/packages/core-cuda/src" -o "$BUILD/row_tile_roof" || return 1
  "$BUILD/row_tile_roof"
}

step_python() {
  [ -d "$ROOT/packages/python" ] || { echo "SKIP: packages/python is absent"; return 0; }
  CMAKE_BUILD_PARALLEL_LEVEL="$JOBS" python3 -m pip install --no-build-isolation --no-deps -v \
    -Ccmake.define.CMAKE_PREFIX_PATH="$BUILD/install" "$ROOT/packages/python" || return 1
  (cd "$ROOT/packages/python" && python3 -m pytest -q tests)
}

# The conformance matrix (packages/conformance/README.md) on the CPU and cuda:0: the C runner
# built here against this build's core and the Python binding the python step installed are
# required; the Rust and Node runners run when carried in (.carry/conformance.env, if present,
# exports BSRMM_CONFORMANCE_RUST_RUNNER / BSRMM_CONFORMANCE_NODE and links the node package);
# the matrix lists every binding that did not run, with the reason.
step_conformance() {
  [ -d "$ROOT/packages/conformance" ] || { echo "SKIP: packages/conformance is absent"; return 0; }
  cmake -S "$ROOT/packages/conformance" -B "$BUILD/conformance" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$BUILD/install" && cmake --build "$BUILD/conformance" || return 1
  (
    # shellcheck disable=SC1091
    [ -f "$ROOT/.carry/conformance.env" ] && . "$ROOT/.carry/conformance.env"
    cd "$ROOT/packages/conformance" &&
      BSRMM_CONFORMANCE_C_RUNNER="$BUILD/conformance/bsrmm_conformance_c" \
      PYTHONPATH=".:../bench${PYTHONPATH:+:$PYTHONPATH}" \
      python3 -m bsrmm_conformance run --device all --require c,python --out "$OUT_DIR/conformance"
  )
}

step_bench() {
  [ -d "$ROOT/packages/bench" ] || { echo "SKIP: packages/bench is absent"; return 0; }
  (cd "$ROOT/packages/bench" && PYTHONPATH="$ROOT/packages/bench${PYTHONPATH:+:$PYTHONPATH}" \
    python3 -m bsrmm_bench run --suite "$SUITE" --out "$OUT_DIR")
}

# Test binaries built elsewhere and carried in (tools/gpu/stage-carry.sh writes them): .carry/bin/*
# (runners of the Rust test executables and the GPU timing examples, run one by one) and
# .carry/node/run.sh (a carried Node runtime and its test command).
step_carried() {
  local carry="$ROOT/.carry" ran=0 failed=0
  [ -d "$carry" ] || { echo "SKIP: no .carry/ folder"; return 0; }
  if [ -d "$carry/bin" ]; then
    for binary in "$carry"/bin/*; do
      [ -x "$binary" ] && [ -f "$binary" ] || continue
      echo "--- $binary"
      ran=$((ran + 1))
      "$binary" || failed=$((failed + 1))
    done
  fi
  if [ -x "$carry/node/run.sh" ]; then
    echo "--- $carry/node/run.sh"
    ran=$((ran + 1))
    (cd "$ROOT" && "$carry/node/run.sh") || failed=$((failed + 1))
  fi
  [ $ran -gt 0 ] || { echo "SKIP: .carry/ holds no bin/* or node/run.sh"; return 0; }
  echo "$ran carried test runs, $failed failed"
  [ $failed -eq 0 ]
}

run_step env step_env
run_step build step_build
run_step ctest step_ctest
run_step timing step_timing
run_step roof step_roof
run_step memcheck step_memcheck
run_step racecheck step_racecheck
run_step synccheck step_synccheck
run_step python step_python
run_step conformance step_conformance
run_step bench step_bench
run_step carried step_carried

# Summary: JSON, then the table (last, so it is what a truncated reply shows).
{
  echo "["
  for i in "${!RESULTS[@]}"; do
    IFS='|' read -r step status seconds note <<< "${RESULTS[$i]}"
    sep=","
    [ "$i" -eq $((${#RESULTS[@]} - 1)) ] && sep=""
    printf '  {"step": "%s", "status": "%s", "seconds": %.1f, "note": "%s"}%s\n' \
      "$step" "$status" "$seconds" "${note//\"/\'}" "$sep"
  done
  echo "]"
} > "$SUMMARY"

failed=0
echo
echo "gpu-check: $LOG, $SUMMARY"
printf '%-10s %-6s %9s  %s\n' step status seconds note
for result in "${RESULTS[@]}"; do
  IFS='|' read -r step status seconds note <<< "$result"
  printf '%-10s %-6s %9.1f  %s\n' "$step" "$status" "$seconds" "$note"
  [ "$status" = fail ] && failed=1
done
exit $failed
