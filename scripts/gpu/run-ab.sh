#!/usr/bin/env bash
# A change to the native library against a baseline, on the same GPUs in one run:
#   1. builds this tree and BASE_SRC (a directory holding a baseline's src/native-cuda, e.g. made with
#      `git archive REV src/native-cuda | tar -x -C .gpu/base`, carried by the device run) side by
#      side (cmake -DSYMMEM_CUDA=ON, -j8 each); BASE_TESTS=1 (default) builds the baseline's library
#      with this tree's tests, so that a new test shows what the baseline does with it;
#   2. NEW_TESTS (a ctest regex) once on this tree;
#   3. each of AB_TESTS (test names) RUNS times on both builds, alternating; each of NEW_REPEAT
#      NEW_RUNS times on this tree only;
#   4. symmem_bench --world WORLD (default 2; MIN_BYTES..MAX_BYTES, bf16 sum) BENCH_ROUNDS times on both, alternating,
#      and on this tree again under each of NEW_ENVS (space-separated VAR=VALUE, one variant each);
#   5. LAST: the last lines of every failed test run (a device run may not bring every log back),
#      passes per test and build, the median of each bench column per build and their ratio.
# Never multicast. Logs go to $OUT.
#   git archive HEAD src/native-cuda | tar -x -C .gpu/base   (here, before the device run)
#   BASE_SRC=.gpu/base AB_TESTS="test_cuda_streams test_cuda_ce" RUNS=3 bash scripts/gpu/run-ab.sh
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 SYMMEM_DISABLE_MULTICAST=1
export PATH=/opt/torch/.venv/bin:/usr/local/cuda/bin:$PATH
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
T0=$(date +%s)
BUDGET=${BUDGET:-560}
STEP_WIDTH=56
. scripts/gpu/lib.sh
BASE_SRC=${BASE_SRC:?BASE_SRC: a directory with the baseline src/native-cuda}
NEW_B=${BUILD_DIR:-/tmp/symmem-ab-new}
BASE_B=${BASE_BUILD_DIR:-/tmp/symmem-ab-base}
NEW_TESTS=${NEW_TESTS:-}
AB_TESTS=${AB_TESTS:-}
RUNS=${RUNS:-3}
NEW_REPEAT=${NEW_REPEAT:-}
NEW_RUNS=${NEW_RUNS:-5}
BENCH_ROUNDS=${BENCH_ROUNDS:-3}
read -r -a NEW_ENVS <<< "${NEW_ENVS:-}"
WORLD=${WORLD:-2}
MIN_BYTES=${MIN_BYTES:-4096}
MAX_BYTES=${MAX_BYTES:-268435456}
NGPU=$(gpu_count)
FAILURES=()
failed() {  # failed NAME LOG: keeps the log's last lines (that run's) for the summary
  FAILURES+=("--- $1" "$(tail -n 8 "$OUT/$2" | cut -c1-400)")
}
machine_txt

# The baseline's tree: its library, and this tree's tests unless BASE_TESTS=0.
BASE_TREE=/tmp/symmem-ab-base-src
rm -rf "$BASE_TREE" && mkdir -p "$BASE_TREE/src"
cp -r "$BASE_SRC/src/native-cuda" "$BASE_TREE/src/"
if [[ ${BASE_TESTS:-1} == 1 ]]; then
  rm -rf "$BASE_TREE/src/native-cuda/tests" && cp -r src/native-cuda/tests "$BASE_TREE/src/native-cuda/"
fi
qstep "build this tree and the baseline (-j8 each, at once)" 360 build.log bash -c "
  (cd '$BASE_TREE' && cmake -S src/native-cuda -B '$BASE_B' -DCMAKE_BUILD_TYPE=Release -DSYMMEM_CUDA=ON >/dev/null && cmake --build '$BASE_B' -j8) > '$OUT/build-base.log' 2>&1 &
  cmake -S src/native-cuda -B '$NEW_B' -DCMAKE_BUILD_TYPE=Release -DSYMMEM_CUDA=ON >/dev/null && cmake --build '$NEW_B' -j8 > '$OUT/build-new.log' 2>&1
  rn=\$?; wait \$!; rb=\$?; echo \"new rc \$rn, base rc \$rb\"; (( rn == 0 && rb == 0 ))"
if [[ $? != 0 ]]; then
  grep -h -E "error" "$OUT/build-new.log" "$OUT/build-base.log" | head -20
elif (( NGPU < WORLD )); then
  note "A/B" "SKIPPED (needs $WORLD GPUs, this machine has $NGPU)"
else
  if [[ -n $NEW_TESTS ]]; then
    qstep "ctest '$NEW_TESTS' (this tree)" 300 ctest-new.log \
      bash -c "cd '$NEW_B' && ctest --output-on-failure --timeout 180 -R '$NEW_TESTS'"
  fi
  for t in $AB_TESTS; do
    for i in $(seq 1 "$RUNS"); do
      for side in base new; do
        b=$BASE_B; [[ $side == new ]] && b=$NEW_B
        qstep "$t, $side (run $i)" 150 "ab-$t-$side.log" "$b/tests/$t" || failed "$t, $side (run $i)" "ab-$t-$side.log"
      done
    done
  done
  for t in $NEW_REPEAT; do
    for i in $(seq 1 "$NEW_RUNS"); do
      qstep "$t, new only (run $i)" 150 "rep-$t.log" "$NEW_B/tests/$t" || failed "$t, new only (run $i)" "rep-$t.log"
    done
  done
  for i in $(seq 1 "$BENCH_ROUNDS"); do
    for side in base new; do
      b=$BASE_B; [[ $side == new ]] && b=$NEW_B
      echo "### $side $i" >> "$OUT/bench-$side.txt"
      qstep "symmem_bench, $side (round $i)" 120 "bench-$side.txt" \
        "$b/symmem_bench" --world "$WORLD" --min-bytes "$MIN_BYTES" --max-bytes "$MAX_BYTES"
    done
    for k in "${!NEW_ENVS[@]}"; do
      echo "### ${NEW_ENVS[$k]} $i" >> "$OUT/bench-env$k.txt"
      qstep "symmem_bench, new with ${NEW_ENVS[$k]} (round $i)" 120 "bench-env$k.txt" \
        env "${NEW_ENVS[$k]}" "$NEW_B/symmem_bench" --world "$WORLD" --min-bytes "$MIN_BYTES" --max-bytes "$MAX_BYTES"
    done
  done
fi

if (( ${#FAILURES[@]} > 0 )); then
  echo "=== failed runs, last lines"
  printf '%s\n' "${FAILURES[@]}"
fi
echo "=== passes per test (base / new)"
for t in $AB_TESTS; do
  pb=$(printf '%s\n' "${SUMMARY[@]}" | grep -c "^$t, base (run .* PASS")
  pn=$(printf '%s\n' "${SUMMARY[@]}" | grep -c "^$t, new (run .* PASS")
  printf "  %-30s base %d of %d   new %d of %d\n" "$t" "$pb" "$RUNS" "$pn" "$RUNS"
done
for t in $NEW_REPEAT; do
  printf "  %-30s new %d of %d\n" "$t" "$(printf '%s\n' "${SUMMARY[@]}" | grep -c "^$t, new only .* PASS")" "$NEW_RUNS"
done
for side in new "${!NEW_ENVS[@]}"; do
[[ $side == new ]] && f=bench-new.txt label=new || f=bench-env$side.txt label="new with ${NEW_ENVS[$side]}"
echo "=== symmem_bench: median per column over rounds (us), base -> $label (ratio)"
python3 - "$OUT/bench-base.txt" "$OUT/$f" <<'EOF' 2>/dev/null
import re, statistics, sys
def read(path):
    cols, rows = None, {}
    for line in open(path):
        f = line.split()
        if f and f[0] == "bytes":
            cols = f[1:]
        elif cols and f and f[0].isdigit() and len(f) > 3:
            for c, v in zip(cols, f[1:]):
                try:
                    x = float(v)
                except ValueError:
                    continue
                rows.setdefault((int(f[0]), c), []).append(x)
    return cols, {k: statistics.median(v) for k, v in rows.items()}
cols, base = read(sys.argv[1])
_, new = read(sys.argv[2])
show = [c for c in cols if c in ("one-shot", "one-shot-ip", "two-shot", "two-shot-ip", "all-gather", "reduce-scatter", "auto", "auto-ip")]
print("  %10s  " % "bytes" + "  ".join("%-24s" % c for c in show))
for n in sorted({k[0] for k in base}):
    cells = []
    for c in show:
        b, v = base.get((n, c)), new.get((n, c))
        cells.append("%-24s" % ("%.2f -> %.2f (%.2f)" % (b, v, v / b) if b and v else "-"))
    print("  %10d  " % n + "  ".join(cells))
EOF
done
echo "=== steps ($(elapsed) s)"
printf '%s\n' "${SUMMARY[@]}"
