#!/usr/bin/env bash
# Broadcast, all-to-all and all-to-all-v on GPUs: correctness first, then time. Builds src/native-cuda
# (only the targets below; or PREBUILT=DIR of binaries built elsewhere), then
#   1. test_cuda_all_to_all at worlds 2 to 4: every dtype, in place and out of place, splits written on
#      the stream, a captured all-to-all-v replayed with new splits, splits that do not fit (one GPU:
#      the ranks share it, SYMMEM_ALLOW_OVERLAPPING_DEVICES=1);
#   2. test_cuda_out_of_step and test_cuda_graphs beside it (the kernels' shared code: nothing else may
#      change);
#   3. with 2 GPUs or more, symmem_bench at world NGPU up to 8 (its broadcast, all-to-all and
#      all-to-all-v columns beside the all-reduce).
# Logs under $OUT; the steps table last.
#   bash scripts/gpu/run-a2a.sh            BUDGET=540 by default (seconds for the whole run)
set -uo pipefail
cd "$(dirname "$0")/../.."
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 SYMMEM_DISABLE_MULTICAST=1
export PATH=/usr/local/cuda/bin:$PATH
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
. scripts/gpu/lib.sh
BUDGET=${BUDGET:-540}
T0=$(date +%s)
NGPU=$(gpu_count)
machine_txt
if [[ -n ${PREBUILT:-} ]]; then
  use_prebuilt "$PREBUILT" libsymmem.so || exit 1
else
  B=${BUILD_DIR:-/tmp/symmem-a2a-build}
  BENCH_ENV=(env)
  qstep "native build" 420 native-build.log bash -c "$(native_build_cmd "$B" symmem test_cuda_all_to_all test_cuda_out_of_step test_cuda_graphs symmem_bench)" \
    || { printf '%s\n' "${SUMMARY[@]}"; tail -20 "$OUT/native-build.log"; exit 1; }
fi
# A build puts the tests under tests/ and the bench beside the library; a carried folder may be flat.
find_bin() { if [[ -x $B/tests/$1 ]]; then echo "$B/tests/$1"; else echo "$B/$1"; fi; }
WORLDS=2,3,4
(( NGPU < 4 )) && export SYMMEM_ALLOW_OVERLAPPING_DEVICES=1
qstep "test_cuda_all_to_all (worlds $WORLDS, $NGPU GPU(s))" 240 a2a-test.log \
  "${BENCH_ENV[@]}" SYMMEM_TEST_WORLDS=$WORLDS "$(find_bin test_cuda_all_to_all)"
qstep "test_cuda_out_of_step" 150 oos-test.log "${BENCH_ENV[@]}" "$(find_bin test_cuda_out_of_step)"
qstep "test_cuda_graphs" 120 graphs-test.log "${BENCH_ENV[@]}" "$(find_bin test_cuda_graphs)"
unset SYMMEM_ALLOW_OVERLAPPING_DEVICES
if (( NGPU >= 2 )); then
  W=$(( NGPU < 8 ? NGPU : 8 ))
  qstep "symmem_bench world $W (bf16)" 240 bench.log "${BENCH_ENV[@]}" "$(find_bin symmem_bench)" --world "$W"
  grep -E "^ *bytes|^ *[0-9]+ " "$OUT/bench.log" | awk 'NR==1 { for (i = 1; i <= NF; i++) c[$i] = i }
    { printf "%10s %12s %12s %12s %12s\n", $1, $(c["auto"]), $(c["broadcast"]), $(c["all-to-all"]), $(c["all-to-all-v"]) }' \
    > "$OUT/bench-movers.txt"
else
  note "symmem_bench" "NOT RUN (one GPU: timing needs a GPU per rank)"
fi
echo
[[ -f $OUT/bench-movers.txt ]] && { echo "== us per op, max over ranks: auto all-reduce, broadcast, all-to-all, all-to-all-v"; cat "$OUT/bench-movers.txt"; }
echo "== steps"
printf '%s\n' "${SUMMARY[@]}"
