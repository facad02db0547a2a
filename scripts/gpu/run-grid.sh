#!/usr/bin/env bash
# The collectives' grid size on two GPUs: what bandwidth each cap on blocks costs, against whether
# concurrent large collectives of several threads (test_cuda_ce, part 1) still all fit on the SMs.
#   1. the native build (cmake -DSYMMEM_CUDA=ON, -j16);
#   2. TESTS=1: ctest test_cuda_(buffer|collectives|graphs|streams|threads) once, with the defaults;
#   3. per SETTINGS entry ("-" for the defaults, or VAR=value[,VAR=value]): symmem_bench --world 2,
#      MIN_BYTES..MAX_BYTES (bf16 sum), BENCH=0 skips it; then test_cuda_ce CE_RUNS times with the
#      same settings (the test keeps block caps given to it, else sets its own of 32).
#   4. LAST: per setting, one-shot / two-shot / two-shot in place at four sizes (us and GB/s bus
#      bandwidth), test_cuda_ce passes; the steps.
# Never multicast. Logs go to $OUT.
#   SETTINGS="SYMMEM_CUDA_ONE_SHOT_BLOCKS=132,SYMMEM_CUDA_TWO_SHOT_BLOCKS=132 ..." CE_RUNS=2 \
#     bash scripts/gpu/run-grid.sh
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 SYMMEM_DISABLE_MULTICAST=1
export PATH=/opt/torch/.venv/bin:/usr/local/cuda/bin:$PATH
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
T0=$(date +%s)
BUDGET=${BUDGET:-560}
STEP_WIDTH=64
. scripts/gpu/lib.sh
B=${BUILD_DIR:-/tmp/symmem-grid-build}
MIN_BYTES=${MIN_BYTES:-1048576}
MAX_BYTES=${MAX_BYTES:-268435456}
CE_RUNS=${CE_RUNS:-2}
SETTINGS=${SETTINGS:--}
NGPU=$(gpu_count)
machine_txt

qstep "native build (cmake -DSYMMEM_CUDA=ON, -j16)" 300 native.log bash -c "$(native_build_cmd "$B")"
if [[ $? != 0 ]]; then
  grep -E "error" "$OUT/native.log" | head -20
elif (( NGPU < 2 )); then
  note "grid sweep" "SKIPPED (needs 2 GPUs, this machine has $NGPU)"
else
  if [[ ${TESTS:-1} == 1 ]]; then
    qstep "ctest test_cuda_(buffer|collectives|graphs|streams|threads)" 200 ctest.log \
      bash -c "cd '$B' && ctest --output-on-failure --timeout 180 -R 'test_cuda_(buffer|collectives|graphs|streams|threads)\$'"
  fi
  for setting in $SETTINGS; do
    envs=(); [[ $setting != - ]] && envs=("${setting//,/ }")
    if [[ ${BENCH:-1} == 1 ]]; then
      echo "### $setting" >> "$OUT/bench.txt"
      qstep "symmem_bench, $setting" 150 bench.txt \
        env ${envs[@]} "$B/symmem_bench" --world 2 --min-bytes "$MIN_BYTES" --max-bytes "$MAX_BYTES"
    fi
    for i in $(seq 1 "$CE_RUNS"); do
      echo "### $setting run $i" >> "$OUT/ce.txt"
      qstep "test_cuda_ce, $setting (run $i)" 120 ce.txt env ${envs[@]} "$B/tests/test_cuda_ce"
    done
  done
fi

echo "=== per op (us) and bus bandwidth (GB/s, world 2: bytes / time), by setting"
awk '/^### / {tag = $2}
     /^ +[0-9]+ / && NF > 8 && ($1 == 1048576 || $1 == 8388608 || $1 == 67108864 || $1 == 268435456) {
       printf "  %-62s %10s  one %9s (%5.0f)  two %9s (%5.0f)  two-ip %9s (%5.0f)\n", tag, $1,
         $2, $1 / $2 / 1000, $4, $1 / $4 / 1000, $5, $1 / $5 / 1000 }' "$OUT/bench.txt" 2>/dev/null
echo "=== steps ($(elapsed) s)"
printf '%s\n' "${SUMMARY[@]}"
