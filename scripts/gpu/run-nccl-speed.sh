#!/usr/bin/env bash
# NCCL from Java at NCCL's speed: every all-reduce timed three ways side by side, and the deadline and
# abort checks that must hold with it, in one go (about 6-9 minutes on 2 GPUs):
#   1. native build (CPU, in the background): symmem_nccl_bench, test_nccl_fake, test_nccl_gpu
#   2. the abort checks: world 1 (an init whose rank 1 never comes ends at its deadline, the same cut
#      short by NativeCore.abort, recovery) and world 2 (rank 1 skips rank 0's FIRST allReduce: NCCL
#      connected every algorithm at init (symmem sets NCCL_RUNTIME_CONNECT=0; checked in NCCL's own
#      ENV log), so rank 0's call enqueues and its synchronize ends at the 3 s deadline, the
#      communicator aborted, and a new communicator must work), correctness at world 2
#   3. symmem_nccl_bench: NCCL's own C loop (ncclAllReduce on its own blocking communicator) beside
#      symmem's C ABI call (symmem_nccl_all_reduce), plain cudaMalloc memory and NCCL_WIN_COLL_SYMMETRIC
#      windows, in place and out of place, bf16 sum, 4 KiB..256 MiB by 4x, world = 2 (or 1); with 2+
#      GPUs also both from a thread whose current device is another rank's (nccl-otherdev,
#      abi-otherdev: what a switch of device costs NCCL's call, and symmem's)
#   4. the same from Java: SYMMEM_BACKEND=nccl launch -n W bench allreduce --nccl (columns nccl,
#      nccl-window in place, nccl-oop, nccl-window-oop out of place), timed as the native bench times
#      (best of 2 rounds of ~100 ms, slowest rank), twice: C1 only (-XX:TieredStopAtLevel=1, what
#      bin/symmem runs ranks with) and C2 (-XX:TieredStopAtLevel=4), so that C1's cost shows; beside
#      each column the same calls made by NCCL's own C loop inside the JVM's process, on the same
#      buffers (its -c columns): Java minus that is what the Java call costs, whatever the process
#      does to NCCL
#   5. native test_nccl_fake (the deadline/abort logic, lever and watchdog included) and test_nccl_gpu
#      (windows, 200 cycles, abort with a window registered) on the real NCCL
#   6. LAST: the table (NCCL C loop | C ABI | both from another device | Java C1 | Java C2, and the
#      differences; host = µs a call costs the caller before the stream sync; which rank was the
#      slowest, whose time is reported) and the steps
# The machine has no Java: carry .gpu/symmem-gpu.tar.xz made by scripts/gpu/pack.sh (it holds
# libsymmem: pack again after any native change).
#   bash scripts/gpu/run-nccl-speed.sh
# Knobs for a shorter look at the small sizes: SIZES=4KiB,16KiB (Java's and the C loop's sizes),
# JAVA_WARMUP_MS=20 (the Java bench's --warmup-ms; default 1000 here: with 20 ms single rounds ran before the JIT settled), CHECKS=0 (leaves out the abort,
# hang and correctness checks and the native tests: only the benches run). ROUNDS=5 (default 2) and
# ROUND_MS=200 (default 100, Java's --min-time-ms; the C loop fills 100 ms) give both benches more and
# longer rounds, the best kept, where a run-to-run spread of a few µs decides a cell (the largest sizes).
# JITS=1 runs the Java bench with C1 only (default "1 4": C1, then C2). PASSES=3 (default 1) runs the C loop
# and the Java bench alternately three times each and keeps each cell's best over the passes: the two benches
# are separate processes a minute apart, and at 64-256 MiB the GPUs' own time drifts by more than 1 µs over
# that; alternating brackets the drift.
# CLOCKS=0 leaves out the GPU clock log: by default nvidia-smi is asked about every 0.2 s for each GPU's SM and
# memory clocks, power, temperature and active clock-event reasons while the benches run, and the table ends
# with their averages per bench process (C loop or Java, each pass), to see whether the GPUs ran the two
# benches at the same clocks.
# JAVA_BACKEND=cuda runs the Java bench on the cuda backend (its window columns then use a communicator and
# windows the bench makes itself, as the C loop does, instead of the nccl backend's group communicator).
set -uo pipefail
cd "$(dirname "$0")/../.."
# NVLink multicast must never be used on the shared machines.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 SYMMEM_DISABLE_MULTICAST=1
export TORCH_CPP_LOG_LEVEL=ERROR PYTHONUNBUFFERED=1 PYTHONWARNINGS=ignore
export PATH=/opt/torch/.venv/bin:/usr/local/cuda/bin:$PATH
unset SYMMEM_NCCL_LIBRARY
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
T0=$(date +%s)
STEP_WIDTH=72
. scripts/gpu/lib.sh
symmem_runtime
B=${BUILD_DIR:-/tmp/symmem-nccl-speed-build}
NGPU=$(gpu_count)
W=$(( NGPU >= 2 ? 2 : 1 ))
PIP_NCCL=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null || echo /opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2)

{
  echo "date: $(date -u +%FT%TZ)  gpus: $NGPU  world: $W  pip NCCL: $PIP_NCCL"
  nvidia-smi --query-gpu=index,name,driver_version --format=csv 2>&1
  env | grep -E '^(NCCL_NVLS_ENABLE|TORCH_SYMM_MEM_DISABLE_MULTICAST|NVSHMEM_DISABLE_NVLS)='
} > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"

# 1. native build, in the background (native.log: the build, then the native tests of step 5; $OUT brings
# back 8 files at most)
# PREBUILT=DIR (symmem_nccl_bench and libsymmem.so built elsewhere for this machine's CUDA, carried
# with the run) skips it; with CHECKS=0 nothing else of the build is used.
BENCH_ENV=()
if [[ -n ${PREBUILT:-} ]]; then
  use_prebuilt "$PREBUILT" libsymmem.so symmem_nccl_bench > "$OUT/native.log" 2>&1
  ( exit $? ) &  # its status stands in for the build's, waited for below
else
( cmake -S src/native-cuda -B "$B" -DCMAKE_BUILD_TYPE=Release -DSYMMEM_CUDA=ON \
    && cmake --build "$B" -j16 --target symmem_nccl_bench test_nccl_fake test_nccl_gpu ) > "$OUT/native.log" 2>&1 &
fi
BUILD_PID=$!

SIZES=${SIZES:-4KiB,16KiB,64KiB,256KiB,1MiB,4MiB,16MiB,64MiB,256MiB}
JAVA_WARMUP_MS=${JAVA_WARMUP_MS:-1000}
ROUNDS=${ROUNDS:-2}
ROUND_MS=${ROUND_MS:-100}
PASSES=${PASSES:-1}
JAVA_BACKEND=${JAVA_BACKEND:-nccl}
CHECKS=${CHECKS:-1}
# 2. deadlines and aborts (the app finds the pip NCCL through python3, as run-nccl.sh checks)
export SYMMEM_BACKEND=cuda MASTER_PORT=29661
if [[ $CHECKS == 0 ]]; then
  note "deadline, abort and correctness checks" "NOT RUN (CHECKS=0)"
else
step "world 1: abort (init deadline 5 s, NativeCore.abort, recovery)" 90 abort.log "${SYMMEM[@]}" nccl-check abort --deadline-ms 5000
if (( W >= 2 )); then
  # NCCL's ENV log says what it read for NCCL_RUNTIME_CONNECT (once per process); its timestamped
  # INIT lines show each ncclCommAbort's START and COMPLETE, should the deadline be missed again. To
  # /tmp, as $OUT brings back 8 files at most.
  rm -f /tmp/nccl-hang-env.*.log
  NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=ENV,INIT NCCL_DEBUG_TIMESTAMP_LEVELS=ALL NCCL_DEBUG_FILE=/tmp/nccl-hang-env.%p.log \
    step "world 2: first allReduce skipped by rank 1 ends at its 3 s deadline + recovery" 120 abort.log \
    "${SYMMEM[@]}" launch -n 2 nccl-check hang --deadline-ms 3000
  { echo "=== NCCL's ENV, INIT and WARN lines of the hang check"; cat /tmp/nccl-hang-env.*.log 2>/dev/null; } >> "$OUT/abort.log"
  n=$(cat /tmp/nccl-hang-env.*.log 2>/dev/null | grep -c "NCCL_RUNTIME_CONNECT set by environment to 0")
  note "world 2: both ranks' NCCL read NCCL_RUNTIME_CONNECT=0 (set by symmem)" \
    "$([[ $n -ge 2 ]] && echo PASS || echo "FAIL ($n of 2 processes; abort.log)")"
  step "world 2: correctness, 5 collectives x 8 dtypes x ops x 4 sizes" 240 abort.log "${SYMMEM[@]}" launch -n 2 nccl-check correctness
else
  note "world 2 checks" "SKIPPED (1 GPU)"
fi
fi
unset SYMMEM_BACKEND

wait "$BUILD_PID"; rc=$?
note "native build (symmem_nccl_bench, test_nccl_fake, test_nccl_gpu)" "$([[ $rc == 0 ]] && echo PASS || echo "FAIL (rc $rc, native.log)")"

# 3 and 4, PASSES times alternately. 3: NCCL's C loop beside the C ABI (every pass appends to native-bench.txt).
# 4: the same from Java, out of place and in place, plain and window (the nccl backend's buffers are windows).
# SYMMEM[] starts the JVM itself, without bin/symmem's flags (and SYMMEM_JAVA_OPTS): the JIT is chosen here,
# and launch hands the JVM's options on to the ranks. Each pass's JSON goes to /tmp ($OUT keeps the first).
export MASTER_PORT=29671
rm -f /tmp/java-nccl.*.json /tmp/nccl-speed-clocks.txt /tmp/nccl-speed-phases.txt
CLOCKS_PID=
if [[ ${CLOCKS:-1} != 0 ]]; then
  ( while :; do
      echo "$(date +%s.%N) $(nvidia-smi --query-gpu=index,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active,utilization.gpu \
        --format=csv,noheader,nounits 2>/dev/null | tr -d ' ' | tr '\n' ';')"
      sleep 0.2
    done ) > /tmp/nccl-speed-clocks.txt 2>/dev/null &
  CLOCKS_PID=$!
fi
phase() { echo "$(date +%s.%N) $*" >> /tmp/nccl-speed-phases.txt; }
for pass in $(seq 1 "$PASSES"); do
  phase "C loop, pass $pass"
  [[ $rc == 0 ]] && SYMMEM_TEST_NCCL_LIB=$PIP_NCCL step "symmem_nccl_bench: NCCL C loop vs C ABI (world $W, pass $pass)" 420 native-bench.txt \
    "${BENCH_ENV[@]}" "$B/symmem_nccl_bench" --world "$W" --sizes "$(echo "$SIZES" | sed 's/iB//g')" --rounds "$ROUNDS"
  for jit in ${JITS:-1 4}; do
    json=/tmp/java-nccl.$jit.$pass.json
    phase "Java C$jit, pass $pass"
    SYMMEM_BACKEND=${JAVA_BACKEND:-nccl} step "Java ($JAVA_BACKEND backend): bench allreduce --nccl (world $W, -XX:TieredStopAtLevel=$jit, pass $pass)" 420 java-bench.log \
      "$JAVA" -XX:TieredStopAtLevel=$jit "${SYMMEM[@]:1}" launch -n "$W" bench allreduce --nccl --algos auto --dtype bf16 \
      --sizes "$SIZES" --warmup-ms "$JAVA_WARMUP_MS" --rounds "$ROUNDS" --min-time-ms "$ROUND_MS" --json "$json"
  done
done
phase "end"
[[ -n $CLOCKS_PID ]] && kill "$CLOCKS_PID" 2>/dev/null
[[ -f /tmp/java-nccl.1.1.json ]] && cp /tmp/java-nccl.1.1.json "$OUT/java-nccl.json"
[[ -f /tmp/java-nccl.4.1.json ]] && cp /tmp/java-nccl.4.1.json "$OUT/java-nccl-c2.json"

# 5. native tests on the real NCCL
[[ $rc == 0 && $CHECKS != 0 ]] && step "native test_nccl_fake (deadlines, lever, watchdog, aborts)" 120 native.log "$B/tests/test_nccl_fake"
[[ $rc == 0 && $CHECKS != 0 ]] && SYMMEM_TEST_NCCL_LIB=$PIP_NCCL step "native test_nccl_gpu (windows, cycles, abort with a window)" 240 native.log \
  "$B/tests/test_nccl_gpu"

# 6. last: the table
{
  echo "===== allReduce bf16 sum, world $W, us per op (max over ranks); host = us per call before the stream sync"
  python3 - "$OUT/native-bench.txt" "/tmp/java-nccl.1.*.json" "/tmp/java-nccl.4.*.json" <<'PY'
import glob, json, sys, os
native = {}  # each cell's best over the passes
for line in open(sys.argv[1]) if os.path.exists(sys.argv[1]) else []:
    p = line.split()
    if len(p) >= 7 and p[0] == "NCCLBENCH":  # an 8th field: the slowest rank
        key, cell = (p[1], p[2], int(p[3])), (float(p[4]), float(p[5]), p[7] if len(p) > 7 else "?")
        if key not in native or cell[0] < native[key][0]:
            native[key] = cell
keys = {"plain-oop": "nccl_oop", "plain-ip": "nccl", "window-oop": "nccl_window_oop", "window-ip": "nccl_window"}
def java_run(pattern):  # (variant, bytes) -> (us per op, host us per call), each cell's best over the passes;
    out = {}            # (variant + "@c", bytes): the same calls from NCCL's C loop inside the JVM's process
    for path in sorted(glob.glob(pattern)):
        doc = json.load(open(path))
        print("%s: %s; %s" % (os.path.basename(path), doc.get("java", "?"), doc.get("timing", "?")))
        for r in doc["allreduce"]:
            for v, k in keys.items():
                for vv, kk in ((v, k), (v + "@c", k + "_c")):
                    if r.get(kk + "_us") is not None:
                        rank = r.get(kk + "_slowest_rank")
                        cell = (r[kk + "_us"], r.get(kk + "_host_us"), "?" if rank is None else str(rank))
                        if (vv, r["bytes"]) not in out or cell[0] < out[(vv, r["bytes"])][0]:
                            out[(vv, r["bytes"])] = cell
    return out
c1, c2 = java_run(sys.argv[2]), java_run(sys.argv[3])
sizes = sorted({k[2] for k in native} | {k[1] for k in c1} | {k[1] for k in c2})
fmt = "%-10s %10s %9s %9s %9s %9s %9s %9s %8s %8s %9s %8s %9s %9s %9s %9s %9s %8s  %s"
print(fmt % ("variant", "bytes", "nccl C", "C ABI", "nccl oth", "ABI oth", "Java C1", "Java C2", "C1-nccl", "C2-nccl",
             "C in JVM", "C1-CJVM", "host nccl", "host ABI", "host oth", "host C1", "host C2", "slowest",
             "Java <= nccl+1us (C1 C2), C1 <= C in JVM + 1us"))
print("oth: the native call from a thread whose current device is another GPU (set before the warm-up), host oth:"
      " ABI oth's; C in JVM: NCCL's own C loop inside the Java bench's process on its buffers (C1 run);"
      " slowest: the rank whose time is reported, for nccl, ABI, nccl oth, ABI oth / Java C1, C2")
worst = {}
f = lambda x: "%.2f" % x if x is not None else "-"
d = lambda x, y: "%+.2f" % (x - y) if x is not None and y is not None else "-"
for v in ("plain-oop", "plain-ip", "window-oop", "window-ip"):
    for b in sizes:
        n = native.get((v, "nccl", b)); a = native.get((v, "abi", b)); j1 = c1.get((v, b)); j2 = c2.get((v, b))
        cj = c1.get((v + "@c", b))
        no = native.get((v, "nccl-otherdev", b)); ao = native.get((v, "abi-otherdev", b))
        slowest = "".join(m[2] if m else "-" for m in (n, a, no, ao)) + "/" + "".join(m[2] if m else "-" for m in (j1, j2))
        n0 = n and n[0]
        ok = lambda j: "-" if j is None or n is None else ("ok" if j[0] <= n0 + 1.0 else "OVER")
        for name, j in (("C1", j1), ("C2", j2)):
            if j is not None and n is not None:
                worst[(v, name)] = max(worst.get((v, name), -1e9), j[0] - n0)
        if j1 is not None and cj is not None:
            worst[(v, "C1 - C in JVM")] = max(worst.get((v, "C1 - C in JVM"), -1e9), j1[0] - cj[0])
        in_jvm = "-" if j1 is None or cj is None else ("ok" if j1[0] <= cj[0] + 1.0 else "OVER")
        print(fmt % (v, b, f(n0), f(a and a[0]), f(no and no[0]), f(ao and ao[0]), f(j1 and j1[0]), f(j2 and j2[0]),
                     d(j1 and j1[0], n0), d(j2 and j2[0], n0), f(cj and cj[0]), d(j1 and j1[0], cj and cj[0]),
                     f(n and n[1]), f(a and a[1]), f(ao and ao[1]),
                     f(j1 and j1[1]), f(j2 and j2[1]), slowest, ok(j1) + " " + ok(j2) + ", " + in_jvm))
for (v, name), w in worst.items():
    print("worst Java %s, %s: %+.2f us" % (name if " - " in name else name + " - nccl C", v, w))
PY
  if [[ -s /tmp/nccl-speed-clocks.txt ]]; then
    echo "===== GPU clocks per bench process (nvidia-smi every ~0.2 s: samples, mean SM / memory MHz, mean W, max C, clock-event reasons seen; then the samples with the GPU busy, utilization >= 90 %: their SM clock)"
    python3 - /tmp/nccl-speed-clocks.txt /tmp/nccl-speed-phases.txt <<'PY'
import sys
samples = []
for line in open(sys.argv[1]):
    t, _, rest = line.strip().partition(" ")
    gpus = [g.split(",") for g in rest.split(";") if g.count(",") >= 6]
    if gpus:
        samples.append((float(t), gpus))
marks = [(float(l.split(" ", 1)[0]), l.strip().split(" ", 1)[1]) for l in open(sys.argv[2])]
num = lambda x: float(x) if x.replace(".", "", 1).isdigit() else None
for (t0, name), (t1, _) in zip(marks, marks[1:]):
    inside = [g for t, g in samples if t0 <= t < t1]
    for i in range(max((len(g) for g in inside), default=0)):
        rows = [g[i] for g in inside if len(g) > i]
        mean = lambda k: sum(v for v in (num(r[k]) for r in rows) if v is not None) / max(1, sum(num(r[k]) is not None for r in rows))
        reasons = sorted({r[5] for r in rows})
        busy = [r for r in rows if (num(r[6]) or 0) >= 90]
        sm_busy = sorted(num(r[1]) for r in busy if num(r[1]) is not None)
        print("%-18s GPU %s: %3d samples, SM %6.0f MHz, mem %6.0f MHz, %6.1f W, max %.0f C, reasons %s; %d busy (>= 90%%):"
              " SM median %s, min %s MHz" % (
            name, rows[0][0], len(rows), mean(1), mean(2), mean(3), max((num(r[4]) or 0 for r in rows), default=0),
            " ".join(reasons), len(busy), "%.0f" % sm_busy[len(sm_busy) // 2] if sm_busy else "-",
            "%.0f" % sm_busy[0] if sm_busy else "-"))
PY
  fi
  echo "===== steps ($(elapsed) s in all)"; printf '%s\n' "${SUMMARY[@]}"
} 2>&1 | tee "$OUT/summary.txt"
