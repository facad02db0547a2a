#!/usr/bin/env bash
# Mid-size all-reduce at world 2 (issue 31, item 4), under 7 minutes: the push one-shot with its
# scratch sized by SYMMEM_CUDA_PUSH_SCRATCH_BYTES (default 4 MiB) against the old sizing (=0: the
# 2 MiB pad region's spare room) from 256 KiB to 16 MiB. Builds src/native-cuda with CUDA, checks
# test_cuda_collectives, _view, _graphs and _buffer at the default (push one-shot in and out of
# place, odd counts, MiB inputs; the buffer test's case of different settings per rank), the
# collectives once more with =0, with 8 MiB and with SYMMEM_CUDA_UNROLL=2, then runs symmem_bench
# --world 2 alternately: default, old (=0) and scratch 8 MiB (twice each, up to 16 MiB), a small
# block/unroll sweep at the default (up to 8 MiB), default and old up to 256 MiB, and prints last a
# table: bytes x variant -> us of one-shot, one-shot-ip, two-shot-ip, auto, auto-ip (the best of
# the runs of that variant). Needs nothing but the repository (no carry): the native code is built
# here. Logs go to $OUT.
#   bash scripts/gpu/run-midsize.sh
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 SYMMEM_DISABLE_MULTICAST=1
export PATH=/usr/local/cuda/bin:$PATH
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
T0=$(date +%s)
BUDGET=${BUDGET:-400}
. scripts/gpu/lib.sh
B=${BUILD_DIR:-/tmp/symmem-midsize-build}
NGPU=$(gpu_count)
unset SYMMEM_CUDA_PUSH_SCRATCH_BYTES SYMMEM_CUDA_ONE_SHOT_BLOCKS SYMMEM_CUDA_TWO_SHOT_BLOCKS SYMMEM_CUDA_UNROLL

{
  echo "date: $(date -u +%FT%TZ)  gpus: $NGPU  commit: $(git rev-parse --short HEAD 2>/dev/null)"
  nvidia-smi --query-gpu=index,name,driver_version --format=csv 2>&1
  nvidia-smi topo -m 2>&1 | head -4
  nvcc --version 2>&1 | tail -1; nproc
} > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"

TARGETS=(symmem_bench test_cuda_collectives test_cuda_view test_cuda_graphs test_cuda_buffer)
qstep "native build (cmake, -j16)" 240 native.log bash -c \
  "cmake -S src/native-cuda -B '$B' -DCMAKE_BUILD_TYPE=Release -DSYMMEM_CUDA=ON && cmake --build '$B' -j16 --target ${TARGETS[*]}"
built=$?
if (( built != 0 )); then
  echo "=== steps ($(elapsed) s)"; printf '%s\n' "${SUMMARY[@]}"; tail -30 "$OUT/native.log"; exit 1
fi

# Correctness first: a wrong kernel's timings mean nothing. World 2 only (the bench's world).
MIB8=8388608
qstep "ctest collectives, view, graphs, buffer; default scratch (4 MiB)" 150 tests.log env \
  SYMMEM_TEST_WORLDS=2 bash -c \
  "cd '$B' && ctest --output-on-failure --timeout 80 -R 'test_cuda_collectives|test_cuda_view|test_cuda_graphs|test_cuda_buffer'"
tests_rc=$?
qstep "test_cuda_collectives; scratch 0 (old sizing)" 60 tests.log env \
  SYMMEM_CUDA_PUSH_SCRATCH_BYTES=0 SYMMEM_TEST_WORLDS=2 "$B/tests/test_cuda_collectives"
old_ok=$?
qstep "test_cuda_collectives; scratch 8 MiB" 60 tests.log env \
  SYMMEM_CUDA_PUSH_SCRATCH_BYTES=$MIB8 SYMMEM_TEST_WORLDS=2 "$B/tests/test_cuda_collectives"
scratch8_ok=$?
qstep "test_cuda_collectives; SYMMEM_CUDA_UNROLL=2" 60 tests.log env \
  SYMMEM_CUDA_UNROLL=2 SYMMEM_TEST_WORLDS=2 "$B/tests/test_cuda_collectives"
unroll_ok=$?

# bench NAME MAXBYTES ENV...: one symmem_bench --world 2 into bench-NAME.txt (appended per run).
bench() {
  local name=$1 max=$2; shift 2
  qstep "bench $name (max $max)" 45 "bench-$name.txt" env "$@" "$B/symmem_bench" --world 2 --max-bytes "$max"
}
if (( NGPU < 2 )); then
  note "benches" "NOT RUN (needs 2 GPUs, $NGPU here)"
elif (( tests_rc != 0 )); then
  note "benches" "NOT RUN (the correctness tests failed: tests.log)"
else
  MIB16=16777216
  for _ in 1 2; do
    bench default $MIB16
    if (( old_ok == 0 )); then bench old $MIB16 SYMMEM_CUDA_PUSH_SCRATCH_BYTES=0; fi
    if (( scratch8_ok == 0 )); then bench scratch8M $MIB16 SYMMEM_CUDA_PUSH_SCRATCH_BYTES=$MIB8; fi
  done
  (( old_ok == 0 )) || note "bench old" "NOT RUN (SYMMEM_CUDA_PUSH_SCRATCH_BYTES=0 failed its test)"
  (( scratch8_ok == 0 )) || note "bench scratch8M" "NOT RUN (SYMMEM_CUDA_PUSH_SCRATCH_BYTES=$MIB8 failed its test)"
  bench oneshot264 $MIB8 SYMMEM_CUDA_ONE_SHOT_BLOCKS=264
  bench oneshot512 $MIB8 SYMMEM_CUDA_ONE_SHOT_BLOCKS=512
  bench twoshot264 $MIB8 SYMMEM_CUDA_TWO_SHOT_BLOCKS=264
  bench twoshot512 $MIB8 SYMMEM_CUDA_TWO_SHOT_BLOCKS=512
  if (( unroll_ok == 0 )); then
    bench unroll2 $MIB8 SYMMEM_CUDA_UNROLL=2
  else
    note "bench unroll2" "NOT RUN (SYMMEM_CUDA_UNROLL=2 failed its test)"
  fi
  bench default-256M 268435456
  if (( old_ok == 0 )); then bench old-256M 268435456 SYMMEM_CUDA_PUSH_SCRATCH_BYTES=0; fi
fi

echo "=== steps ($(elapsed) s)"
printf '%s\n' "${SUMMARY[@]}"
# The table, last. A bench row: bytes, then one column per variant in the header's order ("-" where
# not run). Per cell the best (lowest) of the variant's runs; n = runs that gave a number.
echo "=== world 2 bf16 sum, us per op (best of n runs; - = not run); $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
echo "issue 31 goals (H200 anchors x 0.8): 512K 6.91, 1M 8.70, 2M 10.86, 4M 16.52, 8M 26.55; 64M <= 203.5 and 256M <= 778 (x 0.95)"
for f in "$OUT"/bench-*.txt; do
  [[ -e $f ]] || continue
  awk -v name="$(basename "$f" .txt | cut -c7-)" '
    $1 == "bytes" { for (i = 2; i <= NF; i++) col[$i] = i; next }
    $1 ~ /^[0-9]+$/ && ("one-shot" in col) {
      b = $1
      if (b < 262144 && name !~ /256M/) next
      if (name ~ /256M/ && b < 67108864) next
      split("one-shot one-shot-ip two-shot-ip auto auto-ip", want, " ")
      for (k = 1; k <= 5; k++) {
        v = $(col[want[k]])
        key = b SUBSEP k
        if (v != "-" && (!(key in best) || v + 0 < best[key])) best[key] = v + 0
      }
      n[b]++
      sizes[b] = 1
    }
    END {
      for (b in sizes) {
        line = sprintf("%10d %-18s", b, name)
        for (k = 1; k <= 5; k++) line = line sprintf(" %11s", ((b SUBSEP k) in best) ? sprintf("%.2f", best[b SUBSEP k]) : "-")
        print line sprintf("  n=%d", n[b])
      }
    }' "$f"
done | sort -k1,1n -k2,2 | awk 'BEGIN { printf "%10s %-18s %11s %11s %11s %11s %11s\n", "bytes", "variant", "one-shot", "one-shot-ip", "two-shot-ip", "auto", "auto-ip" } { print }'
