#!/usr/bin/env bash
# Where the time of the all-reduce goes at the sizes that miss their goal (issue 31, item 4), with
# Nsight Systems and Nsight Compute, world 2 (WORLD=N: N ranks, one GPU each), bf16 sum, in place AUTO (the kernel the anchors compare),
# under 8 minutes on 2 GPUs:
#   1. native build (symmem_bench)
#   2. symmem_bench --world $WORLD at each of SIZES alone, unprofiled: the times the profiles are read against
#   2b. the kernels' own phase times (PHASES=1, the default; PHASE_SIZES, default SIZES): a build with
#      -DSYMMEM_KERNEL_PHASES=ON, whose kernels time their phases block by block (cuda/kernel_phases.cuh)
#      while both ranks run unprofiled; its bench's times show what the marks cost
#   3. Nsight Systems (when the machine has nsys), once per size: every kernel with the GPUs' metrics
#      sampled every 5 us (NVLink, DRAM, SM activity); nsys_kernel_metrics.py averages the samples
#      taken while each kind of kernel ran (how busy the link was during the push one-shot, the push
#      two-shot, the pull two-shot) beside the kernels' durations without a profiler in their way
#   4. Nsight Compute (when present) on the in-place AUTO of every size (symmem_bench --profile-one
#      brackets it with cudaProfilerStart/Stop): duration, NVLink bytes and throughput
#      each way, DRAM throughput and the warp stall reasons (warps stalled per issued instruction:
#      membar = a release waiting for the stores before it, long_scoreboard = loads, including the
#      polls of a flag, lg_throttle = the memory queue full of stores).
#      Rank 0 alone by default: a kernel that waits for a peer measures the peer's lateness too, and
#      this ncu (2025.3.1) cannot start the ranks' profiled kernels together. NCU_DELAY_MS=N starts
#      rank 0's profiled call N ms after the others' (--profile-delay-ms), so that theirs are already
#      waiting; on 2 x H100 the profiled kernel took 165-180 us longer than unprofiled with 300 ms as
#      without, at full clock, so that time is the profiler's, and ncu's durations here are not the
#      kernels' (its byte counts are: docs/benchmarks-history.md). NCU_ITERS=N profiles N back-to-back calls
#      as one range instead (below). NCU_BOTH=1 profiles both ranks unsynchronised
#      (their replays fell out of step with this ncu), rank 0 alone if that fails. Each metric pass runs the
#      whole bench again (--replay-mode application: a kernel replayed alone would wait for a peer
#      that ran once). Clocks and caches are left as they are.
#   5. LAST: the unprofiled times, nsys's kernel lines and link figures, ncu's table, the steps
# Never multicast. Logs go to $OUT.
#   SIZES=4194304,8388608,67108864 bash scripts/gpu/run-profile.sh
# PREBUILT=DIR: libsymmem.so and symmem_bench built elsewhere and carried, instead of the first build here.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 SYMMEM_DISABLE_MULTICAST=1
export PATH=/usr/local/cuda/bin:$PATH
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
T0=$(date +%s)
BUDGET=${BUDGET:-470}
STEP_WIDTH=64
. scripts/gpu/lib.sh
B=${BUILD_DIR:-/tmp/symmem-profile-build}
SIZES=${SIZES:-4194304,8388608,67108864}
WORLD=${WORLD:-2}
[[ $WORLD =~ ^[2-8]$ ]] || { echo "run-profile.sh: WORLD=$WORLD: 2 to 8 ranks"; exit 2; }
[[ ${NCU_ITERS:-1} =~ ^[1-9][0-9]*$ ]] || { echo "run-profile.sh: NCU_ITERS=${NCU_ITERS}: a whole number of calls, 1 or more"; exit 2; }
[[ ${NCU_DELAY_MS:-0} =~ ^[0-9]+$ ]] || { echo "run-profile.sh: NCU_DELAY_MS=${NCU_DELAY_MS}: a whole number of milliseconds, 0 or more"; exit 2; }
NGPU=$(gpu_count)
NSYS=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
# The GPU image has no Nsight Systems: Debian's nsight-systems-target package (bookworm non-free, the
# collector alone, 34 MB), carried as .gpu/nsys/*.deb, stands in. Its collector writes a .qdstrm
# that only the host package's QdstrmImporter turns into a report, so the captures come back in $OUT
# (xz, in parts) for the build machine: there, with Debian's nsight-systems and
# nsight-systems-target installed, `cat P.qdstrm.xz.part* | xz -d > P.qdstrm`,
# `/usr/lib/nsight-systems/host-linux-x64/QdstrmImporter -i P.qdstrm`, `nsys export --type sqlite
# -o P.sqlite P.nsys-rep`. On 2 x H100 (2026-11-27) that collector (2022.4) sampled the metrics only
# for the capture's first 4.5 ms, before the kernels, and its CUDA trace made them 8 times slower
# (docs/benchmarks-history.md): a newer nsys on the path is used first.
NSYS_RAW=0
if [[ -z $NSYS ]] && ls .gpu/nsys/nsight-systems-target_*.deb >/dev/null 2>&1; then
  mkdir -p /tmp/nsys-target
  ( cd /tmp/nsys-target && ar x "$OLDPWD"/.gpu/nsys/nsight-systems-target_*.deb data.tar.xz && tar -xJf data.tar.xz ) \
    && NSYS=$(ls /tmp/nsys-target/usr/lib/x86_64-linux-gnu/nsight-systems/target-linux-x64/nsys 2>/dev/null) && NSYS_RAW=1
fi
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
[[ ${NCU_RUN:-1} == 0 ]] && NCU=""  # NCU_RUN=0: leave Nsight Compute out
{
  echo "date: $(date -u +%FT%TZ)  gpus: $NGPU  commit: $(git rev-parse --short HEAD 2>/dev/null)"
  nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.max.sm --format=csv 2>&1
  echo "nsys: ${NSYS:-none} $([[ -n $NSYS ]] && "$NSYS" --version 2>&1 | head -1)"
  echo "ncu: ${NCU:-none} $([[ -n $NCU ]] && "$NCU" --version 2>&1 | tail -1)"
} > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"
if (( NGPU < WORLD )); then echo "run-profile.sh: WORLD=$WORLD needs $WORLD GPUs, this machine has $NGPU"; exit 2; fi

# BENCH_ENV: what the bench runs under, also inside nsys and ncu (with PREBUILT, the carried folder as
# its library path; the phases build below is built here and loads its own library).
BENCH_ENV=()
if [[ -n ${PREBUILT:-} ]]; then
  use_prebuilt "$PREBUILT" libsymmem.so symmem_bench || exit 2
else
  qstep "native build (symmem_bench)" 240 native.log bash -c "$(native_build_cmd "$B" symmem_bench)" || {
    tail -20 "$OUT/native.log"; printf '%s\n' "${SUMMARY[@]}"; exit 1; }
fi
IFS=, read -r -a sizes <<< "$SIZES"
for s in "${sizes[@]}"; do
  qstep "symmem_bench --world $WORLD at $s bytes" 60 bench.txt "${BENCH_ENV[@]}" "$B/symmem_bench" --world "$WORLD" --min-bytes "$s" --max-bytes "$s" --streams own
done

# The kernels' own phase times (a build with -DSYMMEM_KERNEL_PHASES=ON, cuda/kernel_phases.cuh): both
# ranks unprofiled, every block's marks averaged over the bench's calls; printed at backend close.
if [[ ${PHASES:-1} == 1 ]]; then
  PB=${B}-phases
  qstep "native build with SYMMEM_KERNEL_PHASES=ON" 240 native.log bash -c \
    "cmake -S src/native-cuda -B '$PB' -DCMAKE_BUILD_TYPE=Release -DSYMMEM_CUDA=ON -DSYMMEM_KERNEL_PHASES=ON && cmake --build '$PB' -j16 --target symmem_bench" &&
  IFS=, read -r -a psizes <<< "${PHASE_SIZES:-$SIZES}" &&
  for s in "${psizes[@]}"; do
    qstep "kernel phases at $s bytes" 60 phases.txt "$PB/symmem_bench" --world "$WORLD" --min-bytes "$s" --max-bytes "$s" --streams own
  done
fi

if [[ -n $NSYS ]]; then
  for s in "${sizes[@]}"; do
    rep=/tmp/profile-$s
    # The capture covers the bench's bracketed loop of in-place AUTOs alone (--profile-iters, every
    # rank): a capture of the whole run is 50 MB a size with the metrics at 200 kHz.
    qstep "nsys at $s bytes (GPU metrics every 5 us)" 90 nsys.log "${BENCH_ENV[@]}" "$NSYS" profile -o "$rep" --force-overwrite true \
      --trace cuda --capture-range=cudaProfilerApi --wait primary --gpu-metrics-device "${NSYS_GPU:-all}" \
      --gpu-metrics-frequency 200000 "$B/symmem_bench" --world "$WORLD" --min-bytes "$s" --max-bytes "$s" \
      --streams own --profile-all --profile-iters "${NSYS_ITERS:-300}"
    # (nsys answers non-zero when the ranks it did not start outlive the bench: the capture counts.)
    [[ -s $rep.qdstrm || -s $rep.nsys-rep ]] || continue
    if (( NSYS_RAW )); then
      # No importer here: the raw capture goes back for the build machine to import.
      # In parts of at most 15 MB (a file over 16 MiB does not come back from the device machine):
      # cat profile-S.qdstrm.xz.part* | xz -d > profile-S.qdstrm, then import it as said above.
      qstep "nsys capture at $s bytes into \$OUT (xz, 15 MB parts)" 60 nsys.log bash -c "ls -la $rep.* &&
        xz -T0 -c $rep.qdstrm | split -b 15000000 -d - '$OUT/profile-$s.qdstrm.xz.part' && ls -la '$OUT'/profile-$s.*"
      continue
    fi
    qstep "nsys export at $s bytes" 90 nsys.log "$NSYS" export --type sqlite --force-overwrite true -o "$rep.sqlite" "$rep.nsys-rep" || continue
    echo "=== $s bytes" >> "$OUT/nsys-kernels.txt"
    qstep "nsys: metrics while each kind of kernel ran, $s bytes" 90 nsys-kernels.txt \
      python3 scripts/gpu/nsys_kernel_metrics.py "$rep.sqlite"
  done
else
  note "nsys" "NOT RUN (no nsys on this machine)"
fi

if [[ -n $NCU ]]; then
  "$NCU" --query-metrics > "$OUT/ncu-metrics.txt" 2>&1
  metrics=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
  for m in nvlrx__bytes nvltx__bytes nvlrx__bytes_data_user nvltx__bytes_data_user; do
    grep -q "^$m " "$OUT/ncu-metrics.txt" && metrics+=",$m.sum,$m.sum.per_second"
  done
  # The SMs' clock while the kernel ran (cycles elapsed per second): whether a GPU left idle while
  # ncu set up the launch ran it below its full clock (on 2 x H200 it did not: 1980 MHz).
  metrics+=,sm__cycles_elapsed.avg.per_second
  # The stall reasons, each as warps stalled per issued instruction (their sum is the cycles between issues).
  metrics+=',regex:^smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio$'
  # NCU_ITERS=N (N > 1): one result for N back-to-back calls (--replay-mode app-range around the
  # bench's --profile-iters N bracket): the bytes every call moves over NVLink, user data and
  # protocol apart. Its time is not the calls': ncu adds 47-65 us to every launch in the range.
  iters=${NCU_ITERS:-1}
  # (A range is what cudaProfilerStart/Stop bracket, so --profile-from-start off is implied there
  # and refused.)
  replay=(--profile-from-start off --replay-mode application)
  (( iters > 1 )) && replay=(--replay-mode app-range)
  common=(--target-processes all "${replay[@]}" --clock-control none
          --cache-control none --metrics "$metrics" --print-units base --csv)
  lo=${sizes[0]} hi=${sizes[0]}
  for s in "${sizes[@]}"; do (( s < lo )) && lo=$s; (( s > hi )) && hi=$s; done
  # symmem_bench runs the powers of two from lo to hi: the ncu table has a row per size in that range.
  # No lockstep here: ncu 2025.3.1 cannot start the ranks' profiled kernels together.
  if [[ ${NCU_BOTH:-0} == 1 ]]; then
    # Both ranks under ncu, unsynchronised (with ncu 2025.3.1 the ranks' replays fell out of step and
    # both ranks ended at their deadlines in different collectives: docs/benchmarks-history.md).
    note "ncu" "both ranks profiled, not in lockstep (NCU_BOTH=1)"
    qstep "ncu, both ranks (no lockstep): in-place AUTO $lo..$hi bytes" 240 ncu.csv "${BENCH_ENV[@]}" "$NCU" "${common[@]}" \
      "$B/symmem_bench" --world "$WORLD" --min-bytes "$lo" --max-bytes "$hi" --streams own --profile-all --profile-iters "$iters"
    both=$?
  else
    note "ncu" "rank 0 alone (its waits include the peer's lateness)"
    both=1
  fi
  if (( both != 0 )); then
    qstep "ncu, rank 0 only: in-place AUTO $lo..$hi bytes" 240 ncu.csv "${BENCH_ENV[@]}" "$NCU" "${common[@]}" \
      "$B/symmem_bench" --world "$WORLD" --min-bytes "$lo" --max-bytes "$hi" --streams own --profile-one \
      --profile-iters "$iters" --profile-delay-ms "${NCU_DELAY_MS:-0}"
  fi
else
  note "ncu" "NOT RUN (no ncu on this machine)"
fi

echo "=== symmem_bench, unprofiled (us per op)"; grep -E "^ *(bytes|[0-9]+ )" "$OUT/bench.txt" 2>/dev/null | sort -u | head -12
echo "=== kernel phases (us per call, block mean / slowest block)"
grep -E "^ *[0-9]+ |symmem kernel phases" "$OUT/phases.txt" 2>/dev/null | sed 's/symmem kernel phases (device \([0-9]\)): /dev \1 /' | head -60
echo "=== nsys: kernels and the link while they ran"; grep -E "^(===|kernels|[a-z_]+<|  .*(NVL|NVLink|DRAM|SM))" "$OUT/nsys-kernels.txt" 2>/dev/null | head -60
echo "=== ncu"
[[ -f $OUT/ncu.csv ]] && python3 - "$OUT/ncu.csv" "${NCU_ITERS:-1}" <<'PY' 2>&1 | head -80
# One line per profiled kernel: process, size order, duration, NVLink each way, DRAM, the five largest stalls.
import csv, re, sys
rows = list(csv.reader(l for l in open(sys.argv[1], errors="replace") if l.startswith('"')))
if not rows:
    print("no ncu rows (see ncu.csv)"); sys.exit(0)
head = rows[0]; col = {h: i for i, h in enumerate(head)}
kernels = {}
for r in rows[1:]:
    if len(r) != len(head) or r[col["Metric Name"]] == "Metric Name": continue
    k = re.search(r"(\w+<.*>)\s*\(", r[col["Kernel Name"]])
    key = (r[col["Process ID"]], int(r[col["ID"]]), k.group(1) if k else r[col["Kernel Name"]][:60])
    try: kernels.setdefault(key, {})[r[col["Metric Name"]]] = float(r[col["Metric Value"]].replace(",", ""))
    except ValueError: pass
calls = int(sys.argv[2]) if len(sys.argv) > 2 else 1
for (pid, kid, name), m in sorted(kernels.items(), key=lambda kv: (kv[0][1], kv[0][0])):
    t = m.get("gpu__time_duration.sum", 0) / 1000
    line = f"pid {pid} #{kid} {name}: {t:.2f} us" + (f" for {calls} calls, {t / calls:.2f} us a call" if calls > 1 else "")
    if "sm__cycles_elapsed.avg.per_second" in m:
        line += f", SM clock {m['sm__cycles_elapsed.avg.per_second'] / 1e6:.0f} MHz"
    for d in ("nvltx", "nvlrx"):
        if f"{d}__bytes.sum" in m:
            line += f", {d} {m[f'{d}__bytes.sum'] / 1e6:.2f} MB at {m.get(f'{d}__bytes.sum.per_second', 0) / 1e9:.1f} GB/s"
        if f"{d}__bytes_data_user.sum" in m:
            line += f" (data {m[f'{d}__bytes_data_user.sum'] / 1e6:.2f} MB at {m.get(f'{d}__bytes_data_user.sum.per_second', 0) / 1e9:.1f})"
    line += f", DRAM {m.get('dram__throughput.avg.pct_of_peak_sustained_elapsed', 0):.1f} % of peak"
    stalls = sorted(((v, k.replace("smsp__average_warps_issue_stalled_", "").replace("_per_issue_active.ratio", ""))
                     for k, v in m.items() if "issue_stalled" in k), reverse=True)[:5]
    line += "; stalls per issue: " + ", ".join(f"{n} {v:.1f}" for v, n in stalls)
    print(line)
PY
echo "=== steps ($(elapsed) s)"; printf '%s\n' "${SUMMARY[@]}"
