"""Tables of scripts/gpu/run-nvshmem.sh.

    python3 nvshmem_summary.py --out DIR
        all-reduce side by side (bench-nvshmem.json, bench-cuda.json, torch-nvshmem.json, torch.json):
        ours on the NVSHMEM heap against ours on the cuda backend (target: within 5%), PyTorch's
        NVSHMEM and CUDA symm_mem, NCCL
    python3 nvshmem_summary.py --compare-env CONFIG_ROWS NVSHMEM_INFO_LOG
        every NVSHMEM variable `symmem config` reports must appear with the same value in NVSHMEM's
        own NVSHMEM_INFO=1 printout (exit 1 otherwise)
"""
import argparse, json, os, re, sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def fmt(v):
    return "-" if v is None or v != v else f"{v:.2f}"


def size_text(b):
    for unit, k in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= k and b % k == 0:
            return f"{b // k} {unit}"
    return f"{b} B"


def best(r):
    vals = [r.get(k) for k in ("one_shot_us", "two_shot_us", "auto_us") if r.get(k)]
    return min(vals) if vals else None


def best_rounds(out, backend):
    """Per size and algorithm, the lowest time over the rounds bench-<backend>-<n>.json."""
    merged, rounds = {}, 0
    for n in range(1, 10):
        d = load(os.path.join(out, f"bench-{backend}-{n}.json"))
        if not d:
            continue
        rounds += 1
        for r in d.get("allreduce", []):
            m = merged.setdefault(r["bytes"], {})
            for k in ("one_shot_us", "two_shot_us", "auto_us"):
                v = r.get(k)
                if v and (m.get(k) is None or v < m[k]):
                    m[k] = v
    return merged, rounds


def table(out):
    nv, rounds_nv = best_rounds(out, "nvshmem")
    cu, rounds_cu = best_rounds(out, "cuda")
    tn = {r["bytes"]: r for r in load(os.path.join(out, "torch-nvshmem.json")).get("allreduce", [])}
    tc = {r["bytes"]: r for r in load(os.path.join(out, "torch.json")).get("allreduce", [])}
    world = load(os.path.join(out, "bench-nvshmem-1.json")).get("world", "?")
    print(f"===== all-reduce, bf16 sum, world {world}, us per op, out of place; ours: auto, best of {rounds_nv} (nvshmem) "
          f"and {rounds_cu} (cuda) interleaved rounds, [best algorithm]; torch/NCCL: CUDA events, one run")
    cols = ["size", "ours nvshmem", "ours cuda", "auto ratio", "best ratio", "torch NVSHMEM", "torch CUDA", "NCCL"]
    print("".join(f"{c:>15}" for c in cols))
    worst, worst_best = 0.0, 0.0
    for b in sorted(set(nv) | set(cu) | set(tc)):
        n, c = nv.get(b, {}), cu.get(b, {})
        a, bc = n.get("auto_us"), c.get("auto_us")
        ratio = a / bc if a and bc else None
        best_ratio = best(n) / best(c) if best(n) and best(c) else None
        if ratio:
            worst = max(worst, ratio)
        if best_ratio:
            worst_best = max(worst_best, best_ratio)
        tnb = tn.get(b, {})
        tnv = min([v for v in (tnb.get("torch_one_shot_us"), tnb.get("torch_two_shot_us")) if v and v == v], default=None)
        tcb = tc.get(b, {})
        tcv = min([v for v in (tcb.get("torch_one_shot_us"), tcb.get("torch_two_shot_us")) if v and v == v], default=None)
        vals = [size_text(b), f"{fmt(a)} [{fmt(best(n))}]", f"{fmt(bc)} [{fmt(best(c))}]",
                "-" if ratio is None else f"{ratio:.3f}", "-" if best_ratio is None else f"{best_ratio:.3f}",
                fmt(tnv), fmt(tcv), fmt(tcb.get("nccl_us"))]
        print("".join(f"{v:>15}" for v in vals))
    if worst:
        print(f"worst nvshmem/cuda ratio: auto {worst:.3f}, best algorithm (the same kernel on both) {worst_best:.3f}"
              " (target <= 1.05)")
    if not tn:
        print("torch TORCH_SYMMMEM=NVSHMEM: no figures (see torch-nvshmem.log)")


def compare_env(config_rows, info_log):
    """Rows of `symmem config` (VARIABLE VALUE SOURCE ...) against NVSHMEM's printout, whose lines read
    '  NAME  value (type: ..., default: ...)'. A variable NVSHMEM does not print is reported, not failed;
    a printed one must agree (booleans as true/false against 1/0; unset against the default)."""
    want = {}
    for line in open(config_rows, errors="replace"):
        t = line.split()
        if len(t) >= 2:
            want[t[0]] = t[1]
    printed = {}
    for line in open(info_log, errors="replace"):
        m = re.match(r"^(?:\[\d+\]\s*)?\s+(NVSHMEM_[A-Z0-9_]+)\s+(.*?)\s+\(type: (\w+), default: (.*)\)\s*$", line)
        if m:
            printed[m.group(1)] = (m.group(2).strip('"'), m.group(3), m.group(4).strip('"'))
    norm = {"true": "1", "false": "0"}
    bad, compared = 0, 0
    for name, value in want.items():
        if name not in printed:
            print(f"  {name}: symmem config {value!r}; NVSHMEM_INFO does not print it")
            continue
        got, kind, default = printed[name]
        expected = default if value == "(unset)" else value
        ok = norm.get(got.lower(), got) == norm.get(expected.lower(), expected)
        compared += 1
        print(f"  {name}: symmem config {value!r}, NVSHMEM_INFO {got!r} ({kind}) {'OK' if ok else 'DIFFERENT'}")
        bad += 0 if ok else 1
    return 1 if bad or compared == 0 else 0


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--out")
    p.add_argument("--compare-env", nargs=2)
    a = p.parse_args()
    if a.compare_env:
        sys.exit(compare_env(*a.compare_env))
    table(a.out or os.environ.get("OUT", "gpu-out"))
