#!/usr/bin/env bash
# The low-latency one-shot (SYMMEM_CUDA_LL_MAX_BYTES) on two GPUs, in one go, under 9 minutes:
#   1. the native build (cmake -DSYMMEM_CUDA=ON, -j16);
#   2. the cuda tests that run its kernel or share its epochs and slots: test_cuda_collectives
#      (worlds 2 and 4: every dtype x op at 1, 7 and 4099 elements, and one-shots back to back
#      alternating the lines and the push scratch), test_cuda_graphs, test_cuda_threads,
#      test_cuda_streams, test_cuda_view, test_cuda_timeout (its deadline message), test_cuda_abort,
#      test_cuda_ce; test_nccl_gpu (the nccl backend's buffers run the same kernels);
#   3. symmem_graph_bench (world 2, 4 KiB..MAX_BYTES, NCCL captured in a graph beside it) and
#      symmem_bench (the eager GPU time and host column), each with the lines (default) and without
#      (SYMMEM_CUDA_LL_MAX_BYTES=0, i.e. the push one-shot), alternately, RUNS times.
# Never multicast. Logs go to $OUT; a short table last.
#   RUNS=2 MAX_BYTES=262144 TESTS=1 bash scripts/gpu/run-ll.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 SYMMEM_DISABLE_MULTICAST=1
export PATH=/opt/torch/.venv/bin:/usr/local/cuda/bin:$PATH
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
T0=$(date +%s)
STEP_WIDTH=64
. scripts/gpu/lib.sh
B=${BUILD_DIR:-/tmp/symmem-ll-build}
RUNS=${RUNS:-2}
MAX_BYTES=${MAX_BYTES:-262144}
NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || echo 0)
PIP_NCCL=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null || echo libnccl.so.2)
{
  echo "date: $(date -u +%FT%TZ)  gpus: $NGPU  NCCL: $PIP_NCCL"
  nvidia-smi --query-gpu=index,name,driver_version --format=csv 2>&1
} > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"

GEN=()
if [[ ! -f $B/CMakeCache.txt ]] && command -v ninja >/dev/null; then GEN=(-G Ninja); fi
step "native build (cmake -DSYMMEM_CUDA=ON, -j16)" 300 native.log bash -c \
  "cmake ${GEN[*]} -S src/native-cuda -B '$B' -DCMAKE_BUILD_TYPE=Release -DSYMMEM_CUDA=ON && cmake --build '$B' -j16"
BUILT=$?
if [[ $BUILT != 0 ]]; then
  grep -E "error" "$OUT/native.log" | head -20
else
  if [[ ${TESTS:-1} == 1 ]]; then
    SYMMEM_TEST_NCCL_LIB=$PIP_NCCL step "ctest cuda (collectives, graphs, threads, ...) + nccl_gpu" 300 ctest.log \
      bash -c "cd '$B' && ctest --output-on-failure --timeout 240 -R 'test_cuda_(collectives|graphs|threads|streams|view|timeout|abort|ce)\$|test_nccl_gpu\$'"
    grep -E "tests passed|Passed|Failed|SKIPPED|FAIL" "$OUT/ctest.log" | head -20
  fi
  if (( NGPU >= 2 )); then
    for i in $(seq 1 "$RUNS"); do
      for ll in default 0; do
        if [[ $ll == default ]]; then unset SYMMEM_CUDA_LL_MAX_BYTES; else export SYMMEM_CUDA_LL_MAX_BYTES=0; fi
        echo "### LL=$ll run $i" >> "$OUT/graph-bench.txt"
        SYMMEM_TEST_NCCL_LIB=$PIP_NCCL step "graph bench, lines $ll (run $i)" 90 graph-bench.txt \
          "$B/symmem_graph_bench" --world 2 --ops 100 --replays 20 --max-bytes "$MAX_BYTES"
        echo "### LL=$ll run $i" >> "$OUT/bench.txt"
        step "symmem_bench to $MAX_BYTES, lines $ll (run $i)" 90 bench.txt \
          "$B/symmem_bench" --world 2 --max-bytes "$MAX_BYTES"
      done
    done
    unset SYMMEM_CUDA_LL_MAX_BYTES
  else
    note "benches" "SKIPPED (needs 2 GPUs, this machine has $NGPU)"
  fi
fi

echo "=== per op in a graph / eager (us), by setting and run"
awk '/^### LL=/ {tag = $2 " " $4} $1 == "GRAPHBENCH" && ($2 ~ /^symmem-one-shot/ || $2 ~ /^nccl/) {printf "  %-14s %-22s %-6s %8s %8s\n", tag, $2, $3, $4, $5}' "$OUT/graph-bench.txt" 2>/dev/null
echo "=== symmem_bench one-shot / one-shot-ip (us) and host column, by setting and run"
awk '/^### LL=/ {tag = $2 " " $4} /^ +[0-9]+ / && NF > 8 {printf "  %-14s %10s %8s %8s\n", tag, $1, $2, $3} /^  host / {printf "  %-14s host %10s %8s\n", tag, $2, $3}' "$OUT/bench.txt" 2>/dev/null
echo "=== steps ($(elapsed) s)"
printf '%s\n' "${SUMMARY[@]}"
