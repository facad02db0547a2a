"""The table that scripts/gpu/run-host.sh prints last: symmem's host backend next to PyTorch Gloo.

Reads, from the directory given: host-run*.json (symmem bench allreduce --json, one per run),
gloo.jsonl (gloo_bench.py's lines), stream.log (stream_bw's lines) and the extras host-threads1.json,
host-crossover.json and host-bf16.json; any of them may be missing. Per size: the range over runs
of symmem AUTO (and which algorithm AUTO picked), of one-shot and two-shot, of Gloo, the ratio of
the medians, AUTO's bus bandwidth, and the issue's targets. With RESULTS_JSON, every input is also
written there as one JSON document.
  python host_summary.py WORK_DIR [RESULTS_JSON]
"""
import glob
import json
import os
import statistics
import sys

TARGET_US = {16 << 20: 2500.0, 64 << 20: 10000.0}  # the host backend's targets, 4 ranks on 16 cores (docs/host-backend.md)
SMALL = (4096, 65536)  # "small sizes still <= 0.02x Gloo"


def fmt_range(values):
    if not values:
        return "-"
    lo, hi = min(values), max(values)
    f = (lambda v: f"{v:,.1f}") if hi < 1000 else (lambda v: f"{v:,.0f}")
    return f(lo) if lo == hi else f"{f(lo)}–{f(hi)}"


def load_symmem(out):
    rows = {}  # bytes -> {"auto": [...], "one_shot": [...], "two_shot": [...], "picks": set()}
    for path in sorted(glob.glob(os.path.join(out, "host-run*.json"))):
        try:
            with open(path) as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            print(f"(skipping {path}: {e})")
            continue
        for r in doc.get("allreduce", []):
            row = rows.setdefault(r["bytes"], {"auto": [], "one_shot": [], "two_shot": [], "picks": set()})
            for key in ("auto", "one_shot", "two_shot"):
                v = r.get(key + "_us")
                if v is not None:
                    row[key].append(v)
            if r.get("auto_algo"):
                row["picks"].add(str(r["auto_algo"]))
    return rows


def load_gloo(out):
    rows = {}
    path = os.path.join(out, "gloo.jsonl")
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line.startswith("{"):
                    r = json.loads(line)
                    rows.setdefault(r["bytes"], []).append(r["us"])
    return rows


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def print_extra(title, doc, keys):
    if doc is None:
        return
    print()
    print(f"{title} ({doc.get('dtype')} {doc.get('op')}, µs per op, one run)")
    print(f"{'bytes':>10} " + " ".join(f"{k:>12}" for k in keys) + f" {'auto=':>9}")
    for r in doc.get("allreduce", []):
        cells = []
        for k in keys:
            v = r.get(k + "_us")
            cells.append(f"{v:>12,.1f}" if v is not None else f"{'-':>12}")
        print(f"{r['bytes']:>10} " + " ".join(cells) + f" {r.get('auto_algo') or '-':>9}")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "gpu-out"
    ours, gloo = load_symmem(out), load_gloo(out)
    if len(sys.argv) > 2:
        everything = {"symmem_runs": [load_json(p) for p in sorted(glob.glob(os.path.join(out, "host-run*.json")))],
                      "gloo": {str(k): v for k, v in gloo.items()}}
        for extra in ("host-threads1", "host-crossover", "host-bf16"):
            everything[extra] = load_json(os.path.join(out, extra + ".json"))
        stream_path = os.path.join(out, "stream.log")
        everything["stream"] = open(stream_path).read().splitlines() if os.path.exists(stream_path) else []
        with open(sys.argv[2], "w") as f:
            json.dump(everything, f, indent=1)
    stream = os.path.join(out, "stream.log")
    if os.path.exists(stream):
        print("memory bandwidth (stream_bw):")
        with open(stream) as f:
            for line in f:
                if line.startswith("stream "):
                    print("  " + line.rstrip())
    print()
    print("all-reduce, 4 ranks, fp32 sum, out of place, time per op in µs, range over runs "
          "(symmem: max over ranks; Gloo: max over ranks)")
    head = f"{'bytes':>10} {'symmem auto':>17} {'picks':>9} {'one-shot':>17} {'two-shot':>17} {'Gloo':>17} {'auto/Gloo':>9} {'busbw GB/s':>10}  target"
    print(head)
    for nbytes in sorted(set(ours) | set(gloo)):
        o = ours.get(nbytes, {"auto": [], "one_shot": [], "two_shot": [], "picks": set()})
        g = gloo.get(nbytes, [])
        ratio = "-"
        if o["auto"] and g:
            ratio = f"{statistics.median(o['auto']) / statistics.median(g):.3f}"
        busbw = "-"
        if o["auto"]:
            busbw = f"{2 * 3 / 4 * nbytes / (statistics.median(o['auto']) * 1e-6) / 1e9:.1f}"
        target = ""
        if nbytes in TARGET_US and o["auto"]:
            med, worst = statistics.median(o["auto"]), max(o["auto"])
            target = (f"<= {TARGET_US[nbytes]:,.0f} µs: {'MET' if med <= TARGET_US[nbytes] else 'MISSED'} "
                      f"(median {med:,.0f}, worst run {worst:,.0f})")
        elif nbytes in SMALL and o["auto"] and g:
            med = statistics.median(o["auto"]) / statistics.median(g)
            worst = max(o["auto"]) / min(g)
            target = f"<= 0.02x Gloo: {'MET' if med <= 0.02 else 'MISSED'} (medians; worst run vs best Gloo {worst:.3f})"
        print(f"{nbytes:>10} {fmt_range(o['auto']):>17} {','.join(sorted(o['picks'])) or '-':>9} "
              f"{fmt_range(o['one_shot']):>17} {fmt_range(o['two_shot']):>17} {fmt_range(g):>17} "
              f"{ratio:>9} {busbw:>10}  {target}")
    print_extra("one thread per rank, SYMMEM_HOST_THREADS=1", load_json(os.path.join(out, "host-threads1.json")), ["auto"])
    print_extra("crossover sweep", load_json(os.path.join(out, "host-crossover.json")), ["one_shot", "two_shot", "auto"])
    print_extra("bench defaults", load_json(os.path.join(out, "host-bf16.json")), ["one_shot", "two_shot", "auto"])


if __name__ == "__main__":
    main()
