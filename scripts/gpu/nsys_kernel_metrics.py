#!/usr/bin/env python3
"""What the GPU's sampled metrics were while each kind of kernel ran, from an Nsight Systems export.

    nsys profile --trace cuda --gpu-metrics-devices all --gpu-metrics-frequency 200000 -o P ...
    nsys export --type sqlite -o P.sqlite P.nsys-rep
    python3 scripts/gpu/nsys_kernel_metrics.py P.sqlite [--kernels REGEX] [--metrics REGEX]

For every kernel kind (its name without the template arguments but with the last one, which is the
in-place flag of symmem's collectives) whose demangled name matches --kernels: how many ran, their mean
and median duration, and, for every sampled metric whose name matches --metrics (default: NVLink,
DRAM, SM activity), the mean of the samples taken while a kernel of that kind was running (on any
GPU: the ranks run the same kernels at once), one line per GPU the samples came from. A sample
covers the interval before its timestamp, so samples are counted from one interval after a kernel's
start to its end; kernels shorter than two intervals are left out of the averages (say so).
"""
import argparse
import re
import sqlite3
import statistics
import sys


def columns(db, table):
    return [r[1] for r in db.execute(f"pragma table_info({table})")]


def kernel_kind(name):
    """'void ns::(anonymous namespace)::two_shot_push_kernel<float, 4, 0, true>(...)' ->
    'two_shot_push_kernel<..., true>'; a name without template arguments stays as it is."""
    m = re.search(r"(\w+)<(.*)>\s*\(", name)
    if not m:
        return name.split("(")[0].split()[-1] if name.split("(")[0].split() else name
    return f"{m.group(1)}<..., {m.group(2).split(',')[-1].strip()}>"


def sample_interval(db):
    ts = [r[0] for r in db.execute("select distinct timestamp from GPU_METRICS order by timestamp limit 200")]
    gaps = [b - a for a, b in zip(ts, ts[1:]) if b > a]
    return statistics.median(gaps) if gaps else 0


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("sqlite")
    ap.add_argument("--kernels", default=r"one_shot|two_shot|all_gather|reduce_scatter")
    ap.add_argument("--metrics", default=r"nvlink|nvl |dram|sm active|sms active")
    args = ap.parse_args(argv)
    db = sqlite3.connect(args.sqlite)
    tables = {r[0] for r in db.execute("select name from sqlite_master where type='table'")}
    if "CUPTI_ACTIVITY_KIND_KERNEL" not in tables:
        print("no kernels in this export (CUPTI_ACTIVITY_KIND_KERNEL missing)")
        return 1
    kcols = columns(db, "CUPTI_ACTIVITY_KIND_KERNEL")
    name_col = "demangledName" if "demangledName" in kcols else "shortName"
    kernels = {}
    for start, end, name in db.execute(
            f"select k.start, k.end, s.value from CUPTI_ACTIVITY_KIND_KERNEL k join StringIds s on s.id = k.{name_col}"):
        if re.search(args.kernels, name):
            kernels.setdefault(kernel_kind(name), []).append((start, end))
    have_metrics = {"GPU_METRICS", "TARGET_INFO_GPU_METRICS"} <= tables
    names = {}
    if have_metrics:
        names = {mid: mname for mid, mname in db.execute("select metricId, metricName from TARGET_INFO_GPU_METRICS")
                 if re.search(args.metrics, mname, re.I)}
        db.execute("create index if not exists gm_ts on GPU_METRICS(timestamp)")
    dt = sample_interval(db) if have_metrics else 0
    print(f"kernels: {sum(len(v) for v in kernels.values())} of {len(kernels)} kinds; "
          f"metric samples every {dt / 1000:.1f} us" if dt else "kernels only: no GPU metrics in this export")
    for kind, spans in sorted(kernels.items()):
        durs = [(e - s) / 1000 for s, e in spans]
        print(f"{kind}: {len(spans)} runs, mean {statistics.mean(durs):.2f} us, median {statistics.median(durs):.2f} us")
        if not names:
            continue
        usable = [(s + dt, e) for s, e in spans if e - s >= 2 * dt]
        if not usable:
            print(f"  (every run shorter than two sample intervals: no averages)")
            continue
        db.execute("drop table if exists spans")
        db.execute("create temp table spans(s integer, e integer)")
        db.executemany("insert into spans values (?, ?)", usable)
        rows = db.execute(
            "select m.metricId, m.typeId, avg(m.value), count(*) from spans k join GPU_METRICS m "
            "on m.timestamp between k.s and k.e where m.metricId in (%s) group by m.metricId, m.typeId "
            "order by m.metricId, m.typeId" % ",".join(str(i) for i in names)).fetchall()
        for mid, gpu, avg, n in rows:
            print(f"  {names[mid]} [gpu {gpu}]: mean {avg:.1f} ({n} samples in {len(usable)} runs)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
