#!/usr/bin/env bash
# Concurrency on GPUs, in one go, under 8 minutes: the stress driver (io.symmem.stress, the same one
# StressIT runs on the host backend in CI) on world 2, backends cuda, nvshmem and nccl in turn: six
# threads over two groups of the same ranks, two buffers each, 10,000 random collectives (one-shot,
# two-shot, auto; fp32, bf16, fp16; 1 to 16392 elements) from seed 42, every result checked against
# float64 (cuda: each thread allocates its own buffers by name, all at once; nccl and nvshmem: by
# order from the main thread, their allocation being a collective of the whole communicator or
# world); then misuse that must be refused. Each rank prints collectives/s, wrong results and stalls
# (both must be 0) and "STRESS OK". Also the native concurrency tests, and with .gpu/native-before the
# all-reduce bench before and after, alternately. FAULTS=12: the fault rounds of issue 51 after it.
# The machine has no Java: the runtime and the app come from scripts/gpu/pack.sh as
# .gpu/symmem-gpu.tar.xz (carry that path). Logs go to $OUT.
#   bash scripts/gpu/run-stress.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 SYMMEM_DISABLE_MULTICAST=1
export PATH=/usr/local/cuda/bin:$PATH
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
T0=$(date +%s)
. scripts/gpu/lib.sh
symmem_runtime
B=${BUILD_DIR:-/tmp/symmem-stress-build}
NGPU=$(gpu_count)
WORLD=${WORLD:-2}
BACKENDS=${BACKENDS:-cuda nvshmem nccl}
NATIVE=${NATIVE:-1}
SEED=${SEED:-42}
COLLECTIVES=${COLLECTIVES:-10000}
if (( NGPU < WORLD )); then export SYMMEM_ALLOW_OVERLAPPING_DEVICES=1; fi
# A stall must show as a failed collective, not as the step's own timeout.
export SYMMEM_TIMEOUT_COLLECTIVE=${SYMMEM_TIMEOUT_COLLECTIVE:-20s}

{
  echo "date: $(date -u +%FT%TZ)  gpus: $NGPU  world: $WORLD  seed: $SEED  collectives: $COLLECTIVES"
  nvidia-smi --query-gpu=index,name,driver_version --format=csv 2>&1
  "$JAVA" -version 2>&1 | head -1; nvcc --version 2>&1 | tail -1; nproc
} > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"

if [[ $NATIVE == 1 ]]; then
  ( cmake -S src/native-cuda -B "$B" -DCMAKE_BUILD_TYPE=Release -DSYMMEM_CUDA=ON && cmake --build "$B" -j16 ) > "$OUT/native.log" 2>&1 &
  BUILD_PID=$!
fi
# The single-thread cost of the concurrency rules: with .gpu/native-before (the core before them,
# e.g. `git archive <commit> src/native-cuda | tar -x -C .gpu/native-before`), its symmem_bench is
# built too and both run alternately at world 2, 4 KiB to 256 MiB.
BB=${BEFORE_BUILD_DIR:-/tmp/symmem-stress-before}
if [[ -d .gpu/native-before/src/native-cuda ]]; then
  ( cmake -S .gpu/native-before/src/native-cuda -B "$BB" -DCMAKE_BUILD_TYPE=Release -DSYMMEM_CUDA=ON \
      && cmake --build "$BB" -j16 --target symmem_bench ) > "$OUT/native-before.log" 2>&1 &
  BEFORE_PID=$!
fi

for backend in $BACKENDS; do
  SYMMEM_BACKEND=$backend step "stress, $backend, world $WORLD, $COLLECTIVES collectives" 150 "stress-$backend.txt" \
    "${SYMMEM[@]}" launch -n "$WORLD" stress --seed "$SEED" --collectives "$COLLECTIVES" --threads 6 --buffers 2
  grep -E "stress rank|STRESS|LogManager" "$OUT/stress-$backend.txt" | head -20
done
# FAULTS=N: the fault rounds too (issue 51), per backend, with a 1 s collective deadline: ranks late
# past it, closes during calls, crossed allocations and pools, a second caller; every result checked,
# "FAULTS OK" with no wrong result, defect or hang (FAULTS_SEED, default 21: all five kinds in 12 rounds).
if (( ${FAULTS:-0} > 0 )); then
  for backend in $BACKENDS; do
    SYMMEM_BACKEND=$backend SYMMEM_TIMEOUT_COLLECTIVE=1s step "fault rounds, $backend, world $WORLD, $FAULTS rounds" 150 \
      "faults-$backend.txt" "${SYMMEM[@]}" launch -n "$WORLD" stress --seed "${FAULTS_SEED:-21}" --faults "$FAULTS"
    grep -E "faults rank|FAULTS" "$OUT/faults-$backend.txt" | head -20
  done
fi

rc=1
if [[ ${BUILD_PID:-} ]]; then
  wait "$BUILD_PID"; rc=$?
  note "native build (cmake, -j16) in $(elapsed) s" "$([[ $rc == 0 ]] && echo PASS || echo "FAIL (rc $rc, native.log)")"
fi
if [[ $rc == 0 ]]; then
  step "ctest test_host_concurrent, test_cuda_threads, test_cuda_copy_lock, test_cuda_streams, test_cuda_collectives, test_cuda_view" 200 native.log \
    bash -c "cd $B && ctest --output-on-failure --timeout 180 -R 'test_host_concurrent|test_cuda_threads|test_cuda_copy_lock|test_cuda_streams|test_cuda_collectives|test_cuda_view'"
fi

if [[ ${BEFORE_PID:-} ]] && wait "$BEFORE_PID" && [[ -x $B/symmem_bench ]] && (( NGPU >= 2 )); then
  for i in 1 2; do
    step "symmem_bench world 2 BEFORE (run $i)" 150 bench-ab.txt "$BB/symmem_bench" --world 2 --max-bytes 268435456
    step "symmem_bench world 2 AFTER  (run $i)" 150 bench-ab.txt "$B/symmem_bench" --world 2 --max-bytes 268435456
  done
fi

echo "=== steps ($(elapsed) s)"
printf '%s\n' "${SUMMARY[@]}"
for backend in $BACKENDS; do
  grep -h "collectives in" "$OUT/stress-$backend.txt" 2>/dev/null
done
