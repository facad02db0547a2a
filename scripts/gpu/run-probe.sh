#!/usr/bin/env bash
# The floors the collectives are held against (issue 31, items 2 and 4), under 5 minutes, nothing but the
# repository needed (the native code is built here):
#   1. symmem_link_probe launch: the host cost of one bare kernel launch (runtime <<<>>>, driver
#      cuLaunchKernelEx with and without the PDL attribute, 4-byte and 256-byte parameters)
#      and, beside it, symmem_bench --world 2 to 1 MiB: what one of our collectives costs the caller
#   2. symmem_link_probe link: NVLink between GPU 0 and 1, GB/s per direction: copy engines one way and
#      both ways, SMs pushing (remote stores) and pulling (remote loads) both ways, a local HBM copy
#   2b. symmem_link_probe ce: a 256 MiB two-shot whose data only the copy engines move, in chunks
#   3. symmem_bench --world 2 up to 256 MiB under Nsight Systems when the machine has it (nsys), with
#      the GPUs' metrics sampled (NVLink throughput, where this nsys and driver give them): the kernel
#      summary and the metrics' names and averages are kept as text; without nsys, says so
#   4. Nsight Compute (ncu) when present: one in-place AUTO at 256 MiB (the pull two-shot there) on rank 0
#      (symmem_bench --profile-one), its duration and NVLink and DRAM throughput, metrics of one pass,
#      clocks untouched (scripts/gpu/run-profile.sh profiles other sizes, both ranks, with stall reasons)
#   5. LAST: the probe's lines, the profiles' figures and the steps
#   bash scripts/gpu/run-probe.sh
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 SYMMEM_DISABLE_MULTICAST=1
export PATH=/usr/local/cuda/bin:$PATH
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
T0=$(date +%s)
BUDGET=${BUDGET:-280}
. scripts/gpu/lib.sh
B=${BUILD_DIR:-/tmp/symmem-probe-build}
NGPU=$(gpu_count)
{
  echo "date: $(date -u +%FT%TZ)  gpus: $NGPU  commit: $(git rev-parse --short HEAD 2>/dev/null)"
  nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.max.sm --format=csv 2>&1
  nvidia-smi topo -m 2>&1 | head -4
  nvidia-smi nvlink -s -i 0 2>&1 | head -6
  echo "nsys: $(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1 || echo none)"
  echo "ncu: $(command -v ncu || echo none)"
  nvcc --version 2>&1 | tail -1; nproc
} > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"

qstep "native build (symmem_link_probe, symmem_bench)" 200 native.log bash -c \
  "cmake -S src/native-cuda -B '$B' -DCMAKE_BUILD_TYPE=Release -DSYMMEM_CUDA=ON && cmake --build '$B' -j16 --target symmem_link_probe symmem_bench"
built=$?
if (( built == 0 )); then
  qstep "probe: launch floor" 60 probe.txt "$B/symmem_link_probe" launch
  # Ours in the same call: symmem_bench's host columns (µs a collective costs the caller) up to 1 MiB.
  (( NGPU >= 2 )) && qstep "symmem_bench --world 2 to 1 MiB (host enqueue)" 60 bench.txt "$B/symmem_bench" --world 2 --max-bytes 1048576
  (( NGPU >= 2 )) && qstep "probe: NVLink GPU 0 <-> 1" 120 probe.txt "$B/symmem_link_probe" link
  (( NGPU >= 2 )) && qstep "probe: a two-shot moved by the copy engines" 120 probe.txt "$B/symmem_link_probe" ce
  NSYS=$(command -v nsys || ls /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
  if [[ -n $NSYS && $NGPU -ge 2 ]]; then
    qstep "nsys: symmem_bench --world 2 to 256 MiB, GPU metrics" 150 nsys.log "$NSYS" profile -o /tmp/probe-bench \
      --force-overwrite true --trace cuda --gpu-metrics-devices all "$B/symmem_bench" --world 2 --max-bytes 268435456
    qstep "nsys stats: kernels" 60 nsys.log "$NSYS" stats --report cuda_gpu_kern_sum --format csv /tmp/probe-bench.nsys-rep
    qstep "nsys export: sqlite" 60 nsys.log "$NSYS" export --type sqlite --force-overwrite true -o /tmp/probe-bench.sqlite /tmp/probe-bench.nsys-rep
    if [[ -f /tmp/probe-bench.sqlite ]]; then
      python3 - /tmp/probe-bench.sqlite > "$OUT/nsys-metrics.txt" 2>&1 <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
tables = [r[0] for r in db.execute("select name from sqlite_master where type='table'")]
print("tables:", ", ".join(t for t in tables if "METRIC" in t.upper() or "GPU" in t.upper()))
if "TARGET_INFO_GPU_METRICS" in tables and "GPU_METRICS" in tables:
    names = dict(db.execute("select metricId, metricName from TARGET_INFO_GPU_METRICS"))
    for mid, name in sorted(names.items()):
        if any(k in name.lower() for k in ("nvlink", "nvl", "dram", "sm active", "pcie")):
            row = db.execute("select typeId, avg(value), max(value), count(*) from GPU_METRICS where metricId=? group by typeId", (mid,)).fetchall()
            for t, avg, mx, n in row:
                print(f"{name} [gpu type {t}]: avg {avg:.1f} max {mx:.1f} ({n} samples)")
PY
      note "nsys: GPU metrics summarised" "$(wc -l < "$OUT/nsys-metrics.txt") lines (nsys-metrics.txt)"
    fi
  else
    note "nsys" "NOT RUN (no nsys on this machine, or one GPU)"
  fi
  # Nsight Compute on the one in-place AUTO (two-shot) at 256 MiB that rank 0 brackets with cudaProfilerStart/Stop
  # (symmem_bench --profile-one), rank 1 running its half unprofiled. The metrics take several passes, and
  # a kernel replayed alone waits for a peer that ran once (it ends at its 30 s deadline), so each pass
  # runs the whole bench again (--replay-mode application). Clocks and caches left as they are.
  NCU=$(command -v ncu)
  if [[ -n $NCU && $NGPU -ge 2 ]]; then
    "$NCU" --query-metrics > "$OUT/ncu-metrics.txt" 2>&1
    metrics=gpu__time_duration.sum,dram__bytes.sum.per_second
    for m in nvlrx__bytes nvltx__bytes; do
      grep -q "^$m " "$OUT/ncu-metrics.txt" && metrics+=",$m.sum,$m.sum.per_second"
    done
    qstep "ncu: rank 0's in-place AUTO (two-shot) at 256 MiB ($metrics)" 150 ncu.log "$NCU" --target-processes all \
      --profile-from-start off --replay-mode application --clock-control none --cache-control none --metrics "$metrics" \
      "$B/symmem_bench" --world 2 --min-bytes 268435456 --max-bytes 268435456 --profile-one
  else
    note "ncu" "NOT RUN (no ncu on this machine, or one GPU)"
  fi
fi
echo "=== symmem_bench host columns"; grep -iE "host|bytes" "$OUT/bench.txt" 2>/dev/null | head -30
echo "=== probe"; cat "$OUT/probe.txt" 2>/dev/null | grep -E '^(LAUNCH|LINK|CE )'
echo "=== nsys metrics"; head -40 "$OUT/nsys-metrics.txt" 2>/dev/null
echo "=== ncu"; grep -E "two_shot|gpu__time|nvl|dram__|==PROF==|==ERROR==|==WARNING==" "$OUT/ncu.log" 2>/dev/null | head -30
echo "=== symmem_bench under ncu"; grep -E "^ *268435456|busbw|FAIL" "$OUT/ncu.log" 2>/dev/null | head -10
echo "=== steps ($(elapsed) s)"; printf '%s\n' "${SUMMARY[@]}"
