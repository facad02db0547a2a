#!/usr/bin/env bash
# The memory pool's GPU-machine run, in one go, under 8 minutes, on one GPU or more:
#   1. native build (CMake, in the background while 2 runs) and the view tests: test_buffer_view
#      (host), test_cuda_view (views on cuda: collectives at offsets, two streams, markers) and
#      test_cuda_collectives (nothing else broke: the collectives now take the data offset)
#   2. symmem bench pool on cuda, world 2 (two ranks on one GPU with SYMMEM_ALLOW_OVERLAPPING_DEVICES=1
#      when there is a single GPU): warm allocate+close pair from Java vs a plain rendezvous
#      allocation, 100,000 random cycles with the leak check, all-reduce on a pool block vs a
#      dedicated buffer (bf16 sum, median of alternating runs); then the same on the host backend
#   3. LAST: the steps with PASS/FAIL and the benches' summaries
# The machine has no Java: the runtime and the app come from scripts/gpu/pack.sh as
# .gpu/symmem-gpu.tar.xz (carry that path). Logs go to $OUT.
#   bash scripts/gpu/run-pool.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 SYMMEM_DISABLE_MULTICAST=1
export PATH=/usr/local/cuda/bin:$PATH
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
T0=$(date +%s)
. scripts/gpu/lib.sh
symmem_runtime
B=${BUILD_DIR:-/tmp/symmem-pool-build}
NGPU=$(gpu_count)
WORLD=${WORLD:-2}
if (( NGPU < WORLD )); then export SYMMEM_ALLOW_OVERLAPPING_DEVICES=1; fi

{
  echo "date: $(date -u +%FT%TZ)  gpus: $NGPU  world: $WORLD  overlapping: ${SYMMEM_ALLOW_OVERLAPPING_DEVICES:-0}"
  nvidia-smi --query-gpu=index,name,driver_version --format=csv 2>&1
  "$JAVA" -version 2>&1 | head -1; nvcc --version 2>&1 | tail -1; nproc
} > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"

# 1. native build in the background (CPU) while the Java bench runs on the GPU.
( cmake -S src/native-cuda -B "$B" -DCMAKE_BUILD_TYPE=Release -DSYMMEM_CUDA=ON && cmake --build "$B" -j16 ) > "$OUT/native.log" 2>&1 &
BUILD_PID=$!

# 2. the Java bench: cuda first (the figures the issue asks for), then host for reference.
SYMMEM_BACKEND=cuda step "bench pool, cuda, world $WORLD" 240 bench-cuda.txt \
  "${SYMMEM[@]}" launch -n "$WORLD" bench pool --sizes 4KiB,64KiB,1MiB,16MiB,64MiB --repeats 5 --min-time-ms 50

wait "$BUILD_PID"; rc=$?
note "native build (cmake, -j16) in $(elapsed) s" "$([[ $rc == 0 ]] && echo PASS || echo "FAIL (rc $rc, native.log)")"
if [[ $rc == 0 ]]; then
  step "ctest test_buffer_view + test_cuda_view (views)" 120 native.log \
    bash -c "cd $B && ctest --output-on-failure --timeout 100 -R 'test_buffer_view|test_cuda_view'"
  step "ctest test_cuda_collectives (collectives take the offset)" 200 native.log \
    bash -c "cd $B && ctest --output-on-failure --timeout 180 -R 'test_cuda_collectives|test_cuda_copy|test_host_coll'"
  grep -E "tests passed|tests failed|Skipped|\(Failed\)|SKIPPED" "$OUT/native.log" | tail -8
fi

if (( $(elapsed) < 400 )); then
  SYMMEM_BACKEND=host step "bench pool, host, world $WORLD (reference)" 120 bench-host.txt \
    "${SYMMEM[@]}" launch -n "$WORLD" bench pool --sizes 4KiB,1MiB --repeats 3 --min-time-ms 20
else
  note "bench pool, host" "SKIPPED (time budget: $(elapsed) s elapsed)"
fi

# 3. last: steps and the benches' summaries.
{
  echo "===== steps ($(elapsed) s in all; gpus $NGPU, world $WORLD, overlapping ${SYMMEM_ALLOW_OVERLAPPING_DEVICES:-0})"
  printf '%s\n' "${SUMMARY[@]}"
  for b in cuda host; do
    [[ -f $OUT/bench-$b.txt ]] || continue
    echo "===== bench pool, $b"
    sed -n '/---- summary ----/,$p' "$OUT/bench-$b.txt" | grep -v -- '---- summary ----' | sed 's/^\[0\] //' | grep -v -e '^symmem launch' -e ' INFO '
  done
} 2>&1 | tee "$OUT/summary.txt"
