#!/bin/bash
# One device-machine run: configure + build, ctest, compute-sanitizer on a small case, the bench.
# Logs go to $OUT; a short table is printed last. Usage (repo root): bash src/native-cuda/tests/gpu_run.sh
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 SYMMEM_DISABLE_MULTICAST=1
OUT=${OUT:-/tmp/symmem-out}
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
B=/tmp/symmem-build
STEPS=${SYMMEM_GPU_STEPS:-build,ctest,sanitizer,bench}
{ nvidia-smi --query-gpu=index,name,uuid,clocks.sm,clocks.mem --format=csv; nvidia-smi topo -m; } > "$OUT/machine.txt" 2>&1
head -6 "$OUT/machine.txt"
t0=$(date +%s)
cmake -S src/native-cuda -B $B -DCMAKE_BUILD_TYPE=Release -DSYMMEM_CUDA=ON > "$OUT/build.log" 2>&1 &&
  cmake --build $B -j16 >> "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
echo "build: $(( $(date +%s) - t0 )) s"
readelf -d $B/libsymmem.so | grep NEEDED | tr -s ' ' | cut -d' ' -f6 | tr '\n' ' '; echo
if [[ $STEPS == *ctest* ]]; then
  (cd $B && ctest --output-on-failure --timeout 300) > "$OUT/ctest.log" 2>&1
  grep -E "tests passed|Failed|\*\*\*|SKIP" "$OUT/ctest.log" | head -20
  grep -E "topology|^  [0-9] |cycles|rank 0 saw|cases passed" "$OUT/ctest.log" | head -12
  echo "ctest: $(( $(date +%s) - t0 )) s"
fi
if [[ $STEPS == *sanitizer* ]]; then
  CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  for tool in memcheck racecheck; do
    SYMMEM_TEST_SMALL=1 timeout 200 $CS --tool $tool --target-processes all --error-exitcode 9 \
      $B/tests/test_cuda_collectives > "$OUT/sanitizer-$tool.log" 2>&1
    echo "compute-sanitizer $tool: exit $? ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitizer-$tool.log" | sort | uniq -c | tr -s ' ' | tr '\n' ';'))"
  done
  echo "sanitizer: $(( $(date +%s) - t0 )) s"
fi
if [[ $STEPS == *bench* ]]; then
  timeout 240 $B/symmem_bench ${SYMMEM_BENCH_ARGS:-} > "$OUT/bench.txt" 2>&1
  echo "bench exit $?"
  cat "$OUT/bench.txt" | tail -30
fi
if [[ -n ${SYMMEM_BENCH2_ENV:-} ]]; then  # a second bench with other tuning, e.g. "SYMMEM_CUDA_TWO_SHOT_BLOCKS=512"
  env $SYMMEM_BENCH2_ENV timeout 200 $B/symmem_bench ${SYMMEM_BENCH_ARGS:-} > "$OUT/bench2.txt" 2>&1
  echo "bench2 ($SYMMEM_BENCH2_ENV) exit $?"; cat "$OUT/bench2.txt" | tail -22
fi
