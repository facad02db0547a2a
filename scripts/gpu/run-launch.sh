#!/usr/bin/env bash
# The launch cost of a symmem collective, this branch against main, in one device run (< 5 min).
#   1. build, in parallel: this tree (symmem_bench + the 8 CUDA tests below), main's native code
#      carried as .gpu/launch-before (symmem_bench, with this tree's bench source so that both
#      print the same columns), and this tree with -DSYMMEM_HOT_PATH_COUNTERS=ON (symmem_bench);
#   2. symmem_bench --world 2 --max-bytes 1048576: before, after, before, after (alternating, so a
#      drift of the machine shows as a difference between the two runs of one build); after the
#      tests (4.), which come next so that a tight budget cuts only the extras, once
#      after with SYMMEM_CUDA_DIRECT_LAUNCH=0 (the runtime's launch: what the driver launch saves)
#      and once after with --streams sym (the GPU time on a symmem stream, no order event per op);
#   3. the counting build's bench to 64 KiB, once with every loop on a symmem stream and once on
#      the program's own: its stderr line per rank says how many runtime/driver calls and
#      process-wide locks the ordered launches took (want, per launch: one cuLaunchKernelEx and one
#      cudaGetDevice on a symmem stream, nothing else; one cudaStreamIsCapturing and one
#      cudaEventRecord more on the program's own stream; the setup adds a handful);
#   4. test_cuda_collectives test_cuda_streams test_cuda_threads test_cuda_copy_lock test_cuda_view
#      test_cuda_graphs test_cuda_timeout test_cuda_abort on this tree's build.
# Prints: host enqueue per call (us, max over ranks) before/after at 4 KiB..1 MiB for one-shot,
# two-shot and auto, on the program's cudaStreamCreate stream and on a symmem_stream_create stream
# (what the Java façade passes), barrier_on_stream's likewise, the GPU time per op, the counters,
# then the PASS/FAIL table. Never multicast. Logs in $OUT.
#   bash scripts/gpu/run-launch.sh              (on the device machine)
#   bash scripts/gpu/run-launch.sh --prepare    (here, first: main's src/native-cuda into
#                                                .gpu/launch-before, which the device run carries)
set -uo pipefail
cd "$(dirname "$0")/../.."
BEFORE=.gpu/launch-before
if [[ ${1:-} == --prepare ]]; then
  rm -rf "$BEFORE" && mkdir -p "$BEFORE" &&
    git archive "${2:-main}" src/native-cuda | tar -x -C "$BEFORE" --strip-components=2 &&
    echo "$BEFORE: src/native-cuda of ${2:-main} ($(git rev-parse --short "${2:-main}"))"
  exit $?
fi
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 SYMMEM_DISABLE_MULTICAST=1
export PATH=/usr/local/cuda/bin:$PATH
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
T0=$(date +%s)
BUDGET=${BUDGET_S:-285}
STEP_WIDTH=58
. scripts/gpu/lib.sh
BA=/tmp/launch-after BB=/tmp/launch-before BC=/tmp/launch-count SB=/tmp/launch-before-src

{ echo "date: $(date -u +%FT%TZ)  commit: $(git rev-parse --short HEAD 2>/dev/null)"; nvidia-smi -L; } \
  > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"
[[ -f $BEFORE/CMakeLists.txt ]] || { echo "no $BEFORE/CMakeLists.txt: run '$0 --prepare' first"; exit 2; }

TESTS=(test_cuda_collectives test_cuda_streams test_cuda_threads test_cuda_copy_lock test_cuda_view
       test_cuda_graphs test_cuda_timeout test_cuda_abort)
rm -rf "$SB" && cp -r "$BEFORE" "$SB" && cp src/native-cuda/tests/symmem_bench.cpp "$SB/tests/"
GEN=()
command -v ninja >/dev/null && GEN=(-G Ninja)
build() {  # build DIR SRC JOBS EXTRA_CMAKE TARGETS...
  local dir=$1 src=$2 jobs=$3 extra=$4; shift 4
  [[ -f $dir/CMakeCache.txt ]] || cmake "${GEN[@]}" -S "$src" -B "$dir" -DCMAKE_BUILD_TYPE=Release \
    -DSYMMEM_CUDA=ON $extra || return 1
  cmake --build "$dir" -j"$jobs" --target "$@"
}
# qstep runs its command under timeout, which cannot run a shell function: this runs `build` in a bash.
BUILD=(bash -c "$(declare -f build); GEN=(${GEN[*]}); build \"\$@\"" build)
# cuda_kernels.cu is one long nvcc job per tree: the three trees side by side take about as long as one.
qstep "build after (bench + 8 tests)" 150 build-after.log "${BUILD[@]}" "$BA" src/native-cuda 8 "" symmem_bench "${TESTS[@]}" &
P1=$!
qstep "build before (main, bench)" 150 build-before.log "${BUILD[@]}" "$BB" "$SB" 4 "" symmem_bench &
P2=$!
qstep "build after with counters (bench)" 150 build-count.log "${BUILD[@]}" "$BC" src/native-cuda 4 -DSYMMEM_HOT_PATH_COUNTERS=ON symmem_bench &
P3=$!
wait $P1; OK_A=$?; wait $P2; OK_B=$?; wait $P3; OK_C=$?
# The background steps' table rows were lost with their subshells: add them here.
for x in "after:$OK_A:build-after.log" "before:$OK_B:build-before.log" "counters:$OK_C:build-count.log"; do
  IFS=: read -r n rc log <<<"$x"
  note "build $n" "$([[ $rc == 0 ]] && echo PASS || echo "FAIL (rc $rc, $log)")"
  [[ $rc == 0 ]] || grep -E "error" "$OUT/$log" | head -10
done

BENCH=(--world 2 --max-bytes 1048576)
# The comparison and the tests first; the extra runs after them, so a tight budget cuts those.
if [[ $OK_A == 0 && $OK_B == 0 ]]; then
  for i in 1 2; do
    qstep "bench before (run $i)" 40 "bench-before-$i.log" "$BB/symmem_bench" "${BENCH[@]}"
    qstep "bench after (run $i)" 40 "bench-after-$i.log" "$BA/symmem_bench" "${BENCH[@]}"
  done
fi
if [[ $OK_A == 0 ]]; then
  # World 2 (test_cuda_collectives would try 4 too); every test keeps its own deadlines inside.
  for t in "${TESTS[@]}"; do SYMMEM_TEST_WORLDS=2 qstep "$t" 60 "test-$t.log" "$BA/tests/$t"; done
  SYMMEM_CUDA_DIRECT_LAUNCH=0 qstep "bench after, SYMMEM_CUDA_DIRECT_LAUNCH=0" 40 bench-after-rt.log \
    "$BA/symmem_bench" "${BENCH[@]}"
  # Every loop on a symmem stream: its GPU time too (the own stream's carries an event record per op).
  qstep "bench after, --streams sym" 40 bench-after-sym.log "$BA/symmem_bench" "${BENCH[@]}" --streams sym
fi
if [[ $OK_C == 0 ]]; then
  for st in sym own; do
    qstep "bench with counters ($st stream, to 64 KiB)" 30 "bench-count-$st.log" \
      "$BC/symmem_bench" --world 2 --max-bytes 65536 --streams "$st"
  done
fi

python3 - "$OUT" <<'PY'
import glob, os, re, sys
out = sys.argv[1]
def parse(path):
    host, gpu, bar = {}, {}, None
    if not os.path.exists(path): return None
    for line in open(path, errors="replace"):
        m = re.match(r"\s+host\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)(?:\s+\|\s+([\d.]+)\s+([\d.]+)\s+([\d.]+))?", line)
        if m:
            host[int(m.group(1))] = [float(x) if x else None for x in m.groups()[1:]]
            continue
        m = re.match(r"\s*(\d+)\s+([\d.-]+)\s+([\d.-]+)\s+([\d.-]+)\s+([\d.-]+)\s+([\d.-]+)", line)
        if m and int(m.group(1)) >= 4096:
            gpu[int(m.group(1))] = (m.group(2), m.group(4), m.group(6))  # one-shot, two-shot, auto
            continue
        m = re.search(r"barrier_on_stream: ([\d.]+) us.*host enqueue ([\d.]+) us per call(?: \| ([\d.]+))?", line)
        if m: bar = m.groups()
    return host, gpu, bar
runs = [(n, parse(f"{out}/bench-{n}.log")) for n in
        ("before-1", "after-1", "before-2", "after-2", "after-rt", "after-sym")]
runs = [(n, r) for n, r in runs if r]
if runs:
    print("=== host enqueue per call, us, max over ranks (own = the program's cudaStreamCreate stream;"
          " sym = a symmem_stream_create stream); after-rt = SYMMEM_CUDA_DIRECT_LAUNCH=0;"
          " after-sym = every loop on a symmem stream (its 'own' columns are that stream)")
    print(f"{'bytes':>8} {'algo':>8} " + " ".join(f"{n + ' own':>13} {n + ' sym':>13}" for n, _ in runs))
    for size in (4096, 16384, 65536, 262144, 1048576):
        for k, algo in enumerate(("one-shot", "two-shot", "auto")):
            cells = []
            for n, (host, _, _) in runs:
                h = host.get(size)
                f = lambda v: f"{v:13.2f}" if v is not None else f"{'-':>13}"
                cells.append(f(h[k]) + " " + f(h[k + 3]) if h else f"{'-':>13} {'-':>13}")
            print(f"{size:>8} {algo:>8} " + " ".join(cells))
    print("=== barrier_on_stream: GPU us / host us own / host us sym")
    for n, (_, _, bar) in runs: print(f"  {n:>9}: {bar}")
    print("=== GPU time per op, us (one-shot, two-shot, auto; out of place)")
    for n, (_, gpu, _) in runs:
        print(f"  {n:>9}: " + "  ".join(f"{s >> 10}K {'/'.join(gpu[s])}" for s in sorted(gpu)))
for st in ("sym", "own"):
    cnt = f"{out}/bench-count-{st}.log"
    if not os.path.exists(cnt): continue
    print(f"=== hot-path counters, every loop on the {st} stream (per rank process, 4-64 KiB, setup included)")
    for line in open(cnt, errors="replace"):
        if not line.startswith("symmem hot path"): continue
        print("  " + line.rstrip())
        m = re.search(r": (\d+) ordered launches:(.*)", line)
        if m and int(m.group(1)):
            n = int(m.group(1))
            print("    per launch: " + ", ".join(f"{k.strip()} {int(v) / n:.3f}" for k, v in
                  re.findall(r"([A-Za-z ]+?) (\d+)(?:,|$)", m.group(2).strip())))
PY
echo "=== steps ($(elapsed) s of a $BUDGET s budget; logs in $OUT)"
printf '%s\n' "${SUMMARY[@]}"
