#!/usr/bin/env bash
# The fail-fast issue's GPU-machine run (one GPU or nvidia-h200-x2), in one go:
#   1. builds src/native-cuda (and, when packed, .gpu/native-before: the same core before the abort
#      flag, for an A/B of the kernels' fast path) with CMake -j16, then ctest on the GPU (the
#      device abort test included)
#   2. symmem_bench world 2, before and after, alternating (when there are 2 GPUs)
#   3. scripts/chaos.sh on cuda: one rank per GPU, then 4 ranks sharing the GPUs
#      (SYMMEM_ALLOW_OVERLAPPING_DEVICES=1: correctness of the abort, not speed)
#   4. LAST: the steps and the chaos tables
# Needs .gpu/symmem-gpu.tar.xz (scripts/gpu/pack.sh; carry it, and .gpu/native-before when present).
set -uo pipefail
cd "$(dirname "$0")/../.."
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 SYMMEM_DISABLE_MULTICAST=1
export PATH=/usr/local/cuda/bin:$PATH
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
T0=$(date +%s)
. scripts/gpu/lib.sh
symmem_runtime
NGPU=$(gpu_count)
ROUNDS=${ROUNDS:-12}
machine_txt

B=/tmp/symmem-cuda-build
BB=/tmp/symmem-cuda-before
( cmake -S src/native-cuda -B "$B" -DCMAKE_BUILD_TYPE=Release -DSYMMEM_CUDA=ON && cmake --build "$B" -j16 ) > "$OUT/native.log" 2>&1 &
P1=$!
if [[ -d .gpu/native-before ]]; then
  ( cmake -S .gpu/native-before/src/native-cuda -B "$BB" -DCMAKE_BUILD_TYPE=Release -DSYMMEM_CUDA=ON \
      && cmake --build "$BB" -j16 --target symmem_bench ) > "$OUT/native-before.log" 2>&1 &
  P2=$!
fi
wait $P1; rc=$?
note "native build" "$([[ $rc == 0 ]] && echo PASS || echo "FAIL (rc $rc)")"
step "ctest on the GPU (abort tests included)" 240 native.log bash -c "cd $B && ctest --output-on-failure --timeout 150"
grep -E "tests passed|tests failed|Skipped|\(Failed\)|abort" "$OUT/native.log" | tail -12

if [[ ${P2:-} ]]; then wait "$P2"; fi
if (( NGPU >= 2 )) && [[ -x $BB/symmem_bench ]]; then
  for i in 1 2 3; do
    step "symmem_bench world 2 BEFORE (run $i)" 120 bench-ab.txt "$BB/symmem_bench" --world 2 --max-bytes 8388608
    step "symmem_bench world 2 AFTER  (run $i)" 120 bench-ab.txt "$B/symmem_bench" --world 2 --max-bytes 8388608
  done
fi

if (( NGPU >= 2 )); then
  SYMMEM_BIN="${SYMMEM[*]}" CHAOS_LOG="$OUT/chaos-cuda-2.log" step "chaos: cuda, 2 ranks on 2 GPUs, $ROUNDS rounds" 300 chaos.txt \
    bash -c 'scripts/chaos.sh cuda '"$ROUNDS"' 2'
fi
SYMMEM_BIN="${SYMMEM[*]}" CHAOS_LOG="$OUT/chaos-cuda-4.log" step "chaos: cuda, 4 ranks on $NGPU GPU(s) (overlapping), $ROUNDS rounds" 360 chaos.txt \
  bash -c 'scripts/chaos.sh cuda '"$ROUNDS"' 4'

{
  echo "===== steps ($(elapsed) s in all)"; printf '%s\n' "${SUMMARY[@]}"
  echo "===== bench A/B (us per op, world 2)"; grep -E "^(=== symmem_bench|symmem_bench:| *[0-9]+ )" "$OUT/bench-ab.txt" 2>/dev/null | head -80
  echo "===== chaos"; grep -E "^(===|round|phase|[a-z]+ +[0-9]|all detections|chaos:)" "$OUT/chaos.txt"
} 2>&1 | tee "$OUT/summary.txt"
