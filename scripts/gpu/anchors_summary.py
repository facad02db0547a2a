"""The ratio table of scripts/gpu/run-anchors.sh: every all-reduce anchor beside ours, per size, and
AUTO's crossovers re-measured.

    python3 anchors_summary.py --out DIR            # print the tables
    python3 anchors_summary.py --out DIR --bundle   # first fold DIR/json/*.json into DIR/results.json

Reads from DIR:
  bench-native.txt  symmem_bench's tables (one per run and backend: "symmem_bench: <backend> backend,
                    world N, ..."; several runs of a backend give the best per cell) and nccl_bench's
                    "NCCLBENCH <variant> <api> <bytes> <us> <host_us> <iters>" lines
  results.json      {name: document}: java-cuda, java-nvshmem, java-nccl (`symmem bench allreduce
                    --json`), torch-cuda, torch-nvshmem (torch_anchor.py --json); DIR/json/<name>.json
                    are read too, for a run not yet bundled
Missing figures print as '-'; a missing source is named at the end.
"""
import argparse, glob, json, math, os, re, shutil, sys

# The goals: ours / best anchor at most 0.8 from 4 KiB to 8 MiB, at most 0.95 at 64 and
# 256 MiB; bus bandwidth at 256 MiB at least 360 GB/s.
SMALL_GOAL, LARGE_GOAL, BUSBW_GOAL = 0.8, 0.95, 360.0
KIB, MIB = 1 << 10, 1 << 20
ALLREDUCE_VARIANTS = ("one-shot", "one-shot-ip", "two-shot", "two-shot-ip", "auto", "auto-ip", "two-shot-ce-ip")
JAVA_KEYS = ("one_shot_us", "two_shot_us", "auto_us")
JAVA_SOURCES = ("java-cuda", "java-nvshmem", "java-nccl")
TORCH_SOURCES = ("torch-cuda", "torch-nvshmem")


def goal(nbytes):
    if 4 * KIB <= nbytes <= 8 * MIB:
        return SMALL_GOAL
    if nbytes in (64 * MIB, 256 * MIB):
        return LARGE_GOAL
    return None


def number(text):
    try:
        v = float(text)
    except ValueError:
        return None
    return v if v > 0 and not math.isnan(v) else None


def lower(a, b):
    return b if a is None else a if b is None else min(a, b)


def parse_native(text):
    """(symmem, nccl, meta): symmem[backend][bytes][column] = best us over the runs (auto=/ip= keep
    'one'/'two'), nccl[(variant, api)][bytes] = us, meta = world, runs per backend, NCCL version line."""
    symmem, nccl = {}, {}
    meta = {"world": None, "runs": {}, "nccl": None}
    backend, names = None, None
    for line in text.splitlines():
        m = re.match(r"^symmem_bench: (\w+) backend, world (\d+)", line)
        if m:
            backend, names = m.group(1), None
            meta["world"] = int(m.group(2))
            meta["runs"][backend] = meta["runs"].get(backend, 0) + 1
            symmem.setdefault(backend, {})
            continue
        t = line.split()
        if not t:
            continue
        if t[0] == "NCCLBENCH" and len(t) >= 7 and t[3].isdigit():  # 8 with the slowest rank
            key, b = (t[1], t[2]), int(t[3])
            row = nccl.setdefault(key, {})
            row[b] = lower(row.get(b), number(t[4]))
        elif t[0].startswith("nccl_bench:"):
            meta["nccl"] = line.strip()
            m = re.search(r"world (\d+)", line)
            if m and meta["world"] is None:
                meta["world"] = int(m.group(1))
        elif backend and t[0] == "bytes":
            names = t[1:]
        elif backend and names and t[0].isdigit() and len(t) == len(names) + 1:
            row = symmem[backend].setdefault(int(t[0]), {})
            for name, v in zip(names, t[1:]):
                if name in ("auto=", "ip="):
                    row[name] = v
                elif name != "busbw(best)":
                    row[name] = lower(row.get(name), number(v))
    return symmem, nccl, meta


def load_docs(out):
    docs = {}
    try:
        with open(os.path.join(out, "results.json")) as f:
            docs.update(json.load(f))
    except (OSError, ValueError):
        pass
    for path in sorted(glob.glob(os.path.join(out, "json", "*.json"))):
        try:
            with open(path) as f:
                docs[os.path.basename(path)[:-5]] = json.load(f)
        except (OSError, ValueError):
            pass
    return docs


def bundle(out):
    """DIR/json/*.json into DIR/results.json (a device run brings back few files), the folder removed."""
    docs = load_docs(out)
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(docs, f, indent=1)
    shutil.rmtree(os.path.join(out, "json"), ignore_errors=True)


def rows_of(docs, name):
    """The rows of `name` and of its further runs (name-2, name-3, ...): per size, each figure the lowest."""
    merged = {}
    for key, doc in docs.items():
        if not (key == name or re.fullmatch(re.escape(name) + r"-\d+", key)) or not isinstance(doc, dict):
            continue
        for r in doc.get("allreduce", []):
            m = merged.setdefault(r["bytes"], {})
            for k, v in r.items():
                if not k.endswith("_us"):
                    m.setdefault(k, v)
                elif isinstance(v, (int, float)) and v == v and v > 0:  # NaN or null: not measured
                    m[k] = v if m.get(k) is None else min(m[k], v)
    return merged


def runs_of(docs, name):
    return sum(1 for key in docs if key == name or re.fullmatch(re.escape(name) + r"-\d+", key))


def best_of(row, keys):
    """(us, key) of the fastest of `keys` in `row`, or (None, None)."""
    found = [(row[k], k) for k in keys if isinstance(row.get(k), (int, float)) and row[k] > 0 and not math.isnan(row[k])]
    return min(found) if found else (None, None)


def fmt(v, digits=2):
    return "-" if v is None or v != v else f"{v:.{digits}f}"


def size_text(b):
    for unit, k in (("MiB", MIB), ("KiB", KIB)):
        if b >= k and b % k == 0:
            return f"{b // k}{unit}"
    return f"{b}B"


def busbw(world, nbytes, us):
    return 2 * (world - 1) / world * nbytes / (us * 1e-6) / 1e9 if us and world and world > 1 else None


def anchors_at(b, nccl, torch):
    """Every anchor's us at b: NCCL's own C loop (plain, window; in place or out of place, the faster),
    PyTorch symm_mem one_shot / two_shot per backend, and NCCL through torch (information only)."""
    a = {}
    for kind in ("plain", "window"):
        a[f"NCCL {kind}"] = lower(nccl.get((f"{kind}-oop", "nccl"), {}).get(b), nccl.get((f"{kind}-ip", "nccl"), {}).get(b))
    for src in TORCH_SOURCES:
        r = torch[src].get(b, {})
        be = src.split("-")[1]
        a[f"torch {be} 1-shot"] = best_of(r, ("torch_one_shot_us",))[0]
        a[f"torch {be} 2-shot"] = best_of(r, ("torch_two_shot_us",))[0]
    return a


def ours_native_at(b, symmem):
    """(us, 'backend variant') of the fastest all-reduce of ours (native), and per backend its best."""
    per, best = {}, (None, None)
    for be, rows in symmem.items():
        us, v = best_of(rows.get(b, {}), ALLREDUCE_VARIANTS)
        per[be] = us
        if us is not None and (best[0] is None or us < best[0]):
            best = (us, f"{be} {v}")
    return best, per


def table(out, file=sys.stdout):
    p = lambda *a: print(*a, file=file)
    try:
        with open(os.path.join(out, "bench-native.txt"), errors="replace") as f:
            text = f.read()
    except OSError:
        text = ""
    symmem, nccl, meta = parse_native(text)
    docs = load_docs(out)
    java = {s: rows_of(docs, s) for s in JAVA_SOURCES}
    torch = {s: rows_of(docs, s) for s in TORCH_SOURCES}
    world = meta["world"] or next((d.get("world") for d in docs.values() if isinstance(d, dict) and d.get("world")), None)
    anchor_sizes = set()
    for rows in list(torch.values()) + list(nccl.values()):
        anchor_sizes |= set(rows)
    sizes = sorted(anchor_sizes) or sorted({b for rows in symmem.values() for b in rows})

    runs = ", ".join(f"{be} {n}" for be, n in sorted(meta["runs"].items())) or "none"
    torch_runs = ", ".join(f"{s.split('-')[1]} {runs_of(docs, s)}" for s in TORCH_SOURCES)
    p(f"===== all-reduce anchors: bf16 sum, world {world or '?'}, us per op (max over ranks)")
    p(f"ours native: symmem_bench, CUDA events, the fastest of one-shot/two-shot/auto in place or out of place, best over"
      f" runs ({runs}); ours Java: symmem bench allreduce (System.nanoTime, best of 2 rounds), fastest of one-shot/two-shot/"
      f"auto, out of place. NCCL: nccl_bench (NCCL's own C loop, best of 2 rounds, in place or out of place, the faster);"
      f" torch: torch_anchor.py (CUDA events, best over runs ({torch_runs}); one_shot out of place, two_shot in place); NCCL(torch) is"
      f" information only. {meta['nccl'] or ''}")
    cols = ["size", "nat cuda", "nat nvshmem", "J cuda", "J nvshmem", "J nccl", "NCCL plain", "NCCL window",
            "t-cuda 1sh", "t-cuda 2sh", "t-nvsh 1sh", "t-nvsh 2sh", "NCCL(torch)"]
    w = 12
    p("".join(f"{c:>{w}}" for c in cols))
    for b in sizes:
        _, per = ours_native_at(b, symmem)
        a = anchors_at(b, nccl, torch)
        nt = lower(torch["torch-cuda"].get(b, {}).get("nccl_us"), torch["torch-nvshmem"].get(b, {}).get("nccl_us"))
        vals = [size_text(b), fmt(per.get("cuda")), fmt(per.get("nvshmem"))]
        vals += [fmt(best_of(java[s].get(b, {}), JAVA_KEYS)[0]) for s in JAVA_SOURCES]
        vals += [fmt(a[k]) for k in ("NCCL plain", "NCCL window", "torch cuda 1-shot", "torch cuda 2-shot",
                                     "torch nvshmem 1-shot", "torch nvshmem 2-shot")]
        vals.append(fmt(nt if nt and nt == nt else None))
        p("".join(f"{v:>{w}}" for v in vals))

    p("")
    p("===== ours / best anchor (best anchor = the fastest of NCCL plain/window and torch cuda/nvshmem one_shot/two_shot)")
    cols = ["size", "best anchor", "anchor is", "ours native", "ours is", "ratio", "goal", "met", "J best", "J/anchor"]
    widths = [8, 12, 21, 12, 22, 8, 7, 7, 9, 9]
    p("".join(f"{c:>{n}}" for c, n in zip(cols, widths)))
    met = total = 0
    for b in sizes:
        (ours, ours_is), _ = ours_native_at(b, symmem)
        a = {k: v for k, v in anchors_at(b, nccl, torch).items() if v is not None}
        anchor_is = min(a, key=a.get) if a else None
        anchor = a.get(anchor_is)
        ratio = ours / anchor if ours and anchor else None
        g = goal(b)
        verdict = "-" if g is None or ratio is None else ("yes" if ratio <= g else "NO")
        if verdict != "-":
            total += 1
            met += verdict == "yes"
        jbest = min([v for v in (best_of(java[s].get(b, {}), JAVA_KEYS)[0] for s in JAVA_SOURCES) if v], default=None)
        vals = [size_text(b), fmt(anchor), anchor_is or "-", fmt(ours), ours_is or "-", fmt(ratio, 3),
                "-" if g is None else f"<={g}", verdict, fmt(jbest), fmt(jbest / anchor if jbest and anchor else None, 3)]
        p("".join(f"{v:>{n}}" for v, n in zip(vals, widths)))
    p(f"ratio goals met: {met} of {total} sizes (<= {SMALL_GOAL} from 4 KiB to 8 MiB, <= {LARGE_GOAL} at 64 and 256 MiB)")
    big = 256 * MIB
    (ours, ours_is), _ = ours_native_at(big, symmem)
    a = {k: v for k, v in anchors_at(big, nccl, torch).items() if v is not None}
    bw = busbw(world, big, ours)
    anchor_is = min(a, key=a.get) if a else None
    p(f"bus bandwidth at 256 MiB (2(n-1)/n bytes/t): ours native {fmt(bw, 1)} GB/s ({ours_is or '-'}), goal >= {BUSBW_GOAL:.0f}:"
      f" {'-' if bw is None else 'met' if bw >= BUSBW_GOAL else 'NOT met'}; best anchor "
      f"{fmt(busbw(world, big, a.get(anchor_is)), 1)} GB/s ({anchor_is or '-'})")

    for be in sorted(symmem):
        crossovers(be, symmem[be], world, p)

    missing = [n for n in JAVA_SOURCES + TORCH_SOURCES if not (java.get(n) or torch.get(n))]
    if not nccl:
        missing.append("nccl_bench")
    for be in ("cuda", "nvshmem"):
        if be not in symmem:
            missing.append(f"symmem_bench {be}")
    if missing:
        p("no figures from: " + ", ".join(missing) + " (see the logs and the steps above)")


def crossover(rows, one, two):
    """(from, first, only_two): `from` is the smallest size from which `two` beats `one` at every larger
    size where both were measured, `first` the first size where it beats it at all (None: never);
    `only_two` the first size above those where `two` alone ran (one-shot in place stops at its limit),
    from which two-shot is the only choice."""
    both = [b for b in sorted(rows) if rows[b].get(one) and rows[b].get(two)]
    faster = [b for b in both if rows[b][two] < rows[b][one]]
    start = None
    for b in reversed(both):
        if rows[b][two] < rows[b][one]:
            start = b
        else:
            break
    alone = [b for b in sorted(rows) if rows[b].get(two) and not rows[b].get(one) and (not both or b > both[-1])]
    return start, (faster[0] if faster else None), (alone[0] if alone else None)


def auto_switch(rows, column):
    picks = [b for b in sorted(rows) if rows[b].get(column) in ("two", "ce")]
    return picks[0] if picks else None


# AUTO's pick counts as the faster one within this much (rounds of one build differ by about 1 %).
AUTO_TOLERANCE = 1.03


def auto_misses(rows, one, two, column):
    """(sizes judged, [(size, ratio)]): the sizes where one-shot and two-shot both ran and AUTO's pick
    (column: "one" or "two") is known, and those where the pick was slower than the other by more than
    AUTO_TOLERANCE. Per size, since AUTO need not switch once: at world 2 out of place it runs the
    push two-shot only between the push one-shot's bound and twice it."""
    judged, misses = [], []
    for b in sorted(rows):
        r = rows[b]
        pick = r.get(column)
        if not (r.get(one) and r.get(two)) or pick not in ("one", "two"):
            continue
        judged.append(b)
        ratio = (r[one] if pick == "one" else r[two]) / min(r[one], r[two])
        if ratio > AUTO_TOLERANCE:
            misses.append((b, ratio))
    return judged, misses


def crossovers(backend, rows, world, p):
    p("")
    p(f"===== auto crossovers: symmem_bench, {backend} backend, world {world or '?'}, us per op")
    cols = ["size", "one-shot", "two-shot", "faster", "auto", "auto=", "1-shot ip", "2-shot ip", "ce ip", "faster", "ip="]
    p("".join(f"{c:>11}" for c in cols))
    worst = (1.0, None)
    for b in sorted(rows):
        r = rows[b]
        def faster(one, two, ce=None):
            timed = [(r[c], n) for c, n in ((one, "one"), (two, "two"), (ce, "ce")) if c and r.get(c)]
            return "-" if len(timed) < 2 else min(timed)[1]
        best = lower(r.get("one-shot"), r.get("two-shot"))
        if best and r.get("auto") and r["auto"] / best > worst[0]:
            worst = (r["auto"] / best, b)
        vals = [size_text(b), fmt(r.get("one-shot")), fmt(r.get("two-shot")), faster("one-shot", "two-shot"),
                fmt(r.get("auto")), r.get("auto=", "-"), fmt(r.get("one-shot-ip")), fmt(r.get("two-shot-ip")),
                fmt(r.get("two-shot-ce-ip")), faster("one-shot-ip", "two-shot-ip", "two-shot-ce-ip"), r.get("ip=", "-")]
        p("".join(f"{v:>11}" for v in vals))
    text = lambda b: "never" if b is None else size_text(b)
    for label, one, two, col, knob, rule in (
            ("out of place", "one-shot", "two-shot", "auto=", "SYMMEM_CUDA_TWO_SHOT_MIN_BYTES",
             "unset: world 1 runs one-shot at every size, world 2 too except where only the push two-shot fits"
             " the scratch, worlds 3 and 4 two-shot from 1 MiB at sizes the 128-byte-line two-shot takes,"
             " else from 8 MiB / world"),
            ("in place", "one-shot-ip", "two-shot-ip", "ip=", "SYMMEM_CUDA_TWO_SHOT_IP_MIN_BYTES",
             "unset: just above the push scratch's capacity or the 128-byte lines' bound, at worlds 3 to 8 from"
             " 1 MiB (with the 128-byte-line two-shot) or 4 MiB / world at most; one-shot in place stops at its"
             " register limit")):
        start, first, only_two = crossover(rows, one, two)
        measured = start if start is not None else only_two
        switch = auto_switch(rows, col)
        judged, misses = auto_misses(rows, one, two, col)
        agree = "agrees" if not misses else "DIFFERS at " + ", ".join(f"{size_text(b)} ({x:.3f}x)" for b, x in misses)
        alone = f"; above, only two-shot ran (from {size_text(only_two)})" if only_two is not None else ""
        p(f"{label}: two-shot faster from {text(start)} on (first faster at {text(first)}){alone}; AUTO first picks"
          f" two-shot at {text(switch)}; its pick within {AUTO_TOLERANCE - 1:.0%} of the faster at"
          f" {len(judged) - len(misses)} of {len(judged)} sizes: {agree}. Set by {knob} ({rule});"
          f" DeviceBuffer::auto_algo, src/native-cuda/src/cuda/device_buffer.cu")
        if misses and switch != measured and measured is not None:
            p(f"  to switch where this run did: {knob}={measured}")
    if any(r.get("two-shot-ce-ip") for r in rows.values()):
        ce_start, ce_first, _ = crossover(rows, "two-shot-ip", "two-shot-ce-ip")
        ce_switch = next((b for b in sorted(rows) if rows[b].get("ip=") == "ce"), None)
        p(f"in place, copy-engine two-shot against two-shot: faster from {text(ce_start)} on (first faster at"
          f" {text(ce_first)}); AUTO picks it from {text(ce_switch)}. Set by SYMMEM_CUDA_CE_MIN_BYTES (default 64 MiB)")
    if worst[1] is not None:
        p(f"AUTO against the faster of one-shot and two-shot (out of place): worst {worst[0]:.3f}x at {size_text(worst[1])}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.environ.get("OUT", "gpu-out"))
    ap.add_argument("--bundle", action="store_true")
    args = ap.parse_args()
    if args.bundle:
        bundle(args.out)
    table(args.out)
