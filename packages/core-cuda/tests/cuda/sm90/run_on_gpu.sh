#!/usr/bin/env bash
# Builds the sm90 check (unless build/sm90_check exists), shows the resource report and the
# HGMMA count of its machine code, runs the check and the dense reference rate.
#   ./run_on_gpu.sh [sm90_check flags]      CUDACXX or PATH gives nvcc (13.0+)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
core=$(cd "$here/../../.." && pwd)
nvcc=${CUDACXX:-nvcc}
cd "$here"
if [ ! -x build/sm90_check ]; then
  mkdir -p build
  "$nvcc" -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -Xptxas -v -I "$core/include" \
    -I "$core/src" sm90_check.cu "$core/src/cuda/sm90/sm90_variants.cu" \
    "$core/src/cuda/sm90/row_tile_variants.cu" "$core/src/cuda/sm90/transposed_variants.cu" \
    "$core/src/cuda/sm90/tensor_map.cu" "$core/src/matrix/work_schedule.cpp" \
    "$core/src/matrix/group_columns.cpp" "$core/src/matrix/row_groups.cpp" \
    -o build/sm90_check 2>&1 | grep -E "spill|Used|C75|error" || true
fi
echo "HGMMA instructions in the sm90 kernels: $(cuobjdump -sass build/sm90_check | grep -c HGMMA)"
cuobjdump -sass build/sm90_check | grep -oE "HGMMA\.[0-9A-Za-z.]+" | sort | uniq -c
status=0
./build/sm90_check "$@" || status=$?
python3 dense_rate.py || echo "dense rate: PyTorch not available"
exit $status
