#!/usr/bin/env bash
# Issue 51 on the GPU: after a collective gave up on the device (deadline or abort), every later
# collective on that buffer is right or refused, never silently wrong. Builds src/native-cuda and runs
# the native GPU tests that exercise it (test_cuda_out_of_step: a rank 1.5 s late at one all-reduce,
# then 50 checked calls, four algorithms; test_cuda_timeout, test_cuda_abort, test_cuda_ce: the refusal
# after a timeout and an abort) and the rest of the CUDA suite beside them (nothing else may change).
# One GPU works too (SYMMEM_ALLOW_OVERLAPPING_DEVICES=1, set by the tests). Logs under $OUT; a table last.
#   bash scripts/gpu/run-out-of-step.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 SYMMEM_DISABLE_MULTICAST=1
export PATH=/usr/local/cuda/bin:$PATH
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
. scripts/gpu/lib.sh
NGPU=$(gpu_count)
machine_txt
B=${BUILD_DIR:-/tmp/symmem-oos-build}
T0=$(date +%s)
if ! bash -c "$(native_build_cmd "$B")" > "$OUT/native-build.log" 2>&1; then
  echo "native build FAILED (native-build.log):"; tail -20 "$OUT/native-build.log"; exit 1
fi
echo "native build: $(( $(date +%s) - T0 )) s"
cd "$B"
first='test_cuda_out_of_step|test_cuda_timeout|test_cuda_abort|test_cuda_ce'
timeout 300 ctest --output-on-failure --timeout 150 -R "$first" > "$OUT/ctest-out-of-step.log" 2>&1
timeout 420 ctest --output-on-failure --timeout 200 -E "$first" > "$OUT/ctest-rest.log" 2>&1
echo
echo "== the out-of-step tests"
grep -E "^ *[0-9]+/[0-9]+ Test|tests passed|tests failed" "$OUT/ctest-out-of-step.log"
grep -E "test_cuda_out_of_step:|FAIL|call [0-9]+ " "$OUT/ctest-out-of-step.log" | head -20
echo "== the rest of the suite"
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Skipped" "$OUT/ctest-rest.log" | tail -12
