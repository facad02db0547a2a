#!/usr/bin/env bash
# The low-latency one-shot (SYMMEM_CUDA_LL_MAX_BYTES) on two GPUs, in one go, under 9 minutes:
#   1. the native build (cmake -DSYMMEM_CUDA=ON, -j16);
#   2. the cuda tests that run its kernel or share its epochs and slots: test_cuda_collectives
#      (worlds 2 and 4: every dtype x op at 1, 7 and 4099 elements, and one-shots back to back
#      alternating the lines and the push scratch), test_cuda_graphs, test_cuda_threads,
#      test_cuda_streams, test_cuda_view, test_cuda_timeout (its deadline message), test_cuda_abort,
#      test_cuda_ce, test_cuda_buffer (import refuses unequal one-shot path settings); test_nccl_gpu
#      (the nccl backend's buffers run the same kernels);
#   3. symmem_graph_bench (world 2, MIN_BYTES..MAX_BYTES in steps of 4x, NCCL captured in a graph
#      beside it) and symmem_bench (the eager GPU time and host column), once per SETTINGS entry
#      (default: with the lines, and without them: SYMMEM_CUDA_LL_MAX_BYTES=0, the push one-shot),
#      alternately, RUNS times.
# Never multicast. Logs go to $OUT; a short table last.
#   RUNS=2 MIN_BYTES=4096 MAX_BYTES=262144 TESTS=1 bash scripts/gpu/run-ll.sh
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
MIN_BYTES=${MIN_BYTES:-4096}
# Space-separated settings, each "-" (none) or VAR=value[,VAR=value]: every bench runs once per
# setting per run, alternately.
SETTINGS=${SETTINGS:-- SYMMEM_CUDA_LL_MAX_BYTES=0}
NGPU=$(gpu_count)
PIP_NCCL=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null || echo libnccl.so.2)
machine_txt "NCCL: $PIP_NCCL"

step "native build (cmake -DSYMMEM_CUDA=ON, -j16)" 300 native.log bash -c "$(native_build_cmd "$B")"
BUILT=$?
if [[ $BUILT != 0 ]]; then
  grep -E "error" "$OUT/native.log" | head -20
else
  if [[ ${TESTS:-1} == 1 ]]; then
    SYMMEM_TEST_NCCL_LIB=$PIP_NCCL step "ctest cuda (collectives, graphs, threads, buffer, ...) + nccl_gpu" 300 ctest.log \
      bash -c "cd '$B' && ctest --output-on-failure --timeout 240 -R 'test_cuda_(collectives|graphs|threads|streams|view|timeout|abort|ce|buffer)\$|test_nccl_gpu\$'"
    grep -E "tests passed|Passed|Failed|SKIPPED|FAIL" "$OUT/ctest.log" | head -20
  fi
  if (( NGPU >= 2 )); then
    for i in $(seq 1 "$RUNS"); do
      for setting in $SETTINGS; do
        envs=(); [[ $setting != - ]] && envs=("${setting//,/ }")
        echo "### $setting run $i" | tee -a "$OUT/graph-bench.txt" >> "$OUT/bench.txt"
        SYMMEM_TEST_NCCL_LIB=$PIP_NCCL step "graph bench, $setting (run $i)" 90 graph-bench.txt \
          env ${envs[@]} "$B/symmem_graph_bench" --world 2 --ops 100 --replays 20 --min-bytes "$MIN_BYTES" --max-bytes "$MAX_BYTES"
        step "symmem_bench to $MAX_BYTES, $setting (run $i)" 90 bench.txt \
          env ${envs[@]} "$B/symmem_bench" --world 2 --max-bytes "$MAX_BYTES"
      done
    done
  else
    note "benches" "SKIPPED (needs 2 GPUs, this machine has $NGPU)"
  fi
fi

echo "=== per op in a graph / eager (us), by setting and run"
awk '/^### / {tag = $2 " " $4} $1 == "GRAPHBENCH" && $3 == "graph" {printf "  %-14s %-22s %-6s %8s %8s\n", tag, $2, $3, $4, $5}' "$OUT/graph-bench.txt" 2>/dev/null
echo "=== symmem_bench one-shot / one-shot-ip (us) and host column, by setting and run"
awk '/^### / {tag = $2 " " $4} /^ +[0-9]+ / && NF > 8 {printf "  %-14s %10s %8s %8s\n", tag, $1, $2, $3} /^  host / {printf "  %-14s host %10s %8s\n", tag, $2, $3}' "$OUT/bench.txt" 2>/dev/null
echo "=== steps ($(elapsed) s)"
printf '%s\n' "${SUMMARY[@]}"
