"""Side-by-side all-reduce table of scripts/gpu/run-cuda.sh: ours (Java bench: one-shot, two-shot,
auto out of place; two-shot/auto in place), ours (native symmem_bench: auto), PyTorch symm_mem
one_shot / two_shot and NCCL (torch_anchor.py), and the barrier. Missing figures print as '-'.

    python3 cuda_summary.py --out DIR   # reads java-bench.json, java-bench-ip.json, bench-native.txt, torch.json
"""
import argparse, json, os, re


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def native_bench(path):
    """symmem_bench's table: bytes, then one column per variant; and the barrier line."""
    rows, barrier, names = {}, None, []
    try:
        lines = open(path).read().splitlines()
    except OSError:
        return rows, barrier
    for line in lines:
        t = line.split()
        if t and t[0] == "bytes":
            names = t[1:]
        elif t and t[0].isdigit() and names:
            rows[int(t[0])] = {n: (float(v) if re.match(r"^[0-9.]+$", v) else None) for n, v in zip(names, t[1:])}
        m = re.search(r"barrier_on_stream: ([0-9.]+) us", line)
        if m:
            barrier = float(m.group(1))
    return rows, barrier


def fmt(v):
    return "-" if v is None or v != v else f"{v:.2f}"


def size_text(b):
    for unit, k in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= k and b % k == 0:
            return f"{b // k} {unit}"
    return f"{b} B"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", default=os.environ.get("OUT", "gpu-out"))
    a = p.parse_args()
    java = load_json(os.path.join(a.out, "java-bench.json")) or {}
    java_ip = load_json(os.path.join(a.out, "java-bench-ip.json")) or {}
    torch = load_json(os.path.join(a.out, "torch.json")) or {}
    native, native_barrier = native_bench(os.path.join(a.out, "bench-native.txt"))
    j = {r["bytes"]: r for r in java.get("allreduce", [])}
    jip = {r["bytes"]: r for r in java_ip.get("allreduce", [])}
    t = {r["bytes"]: r for r in torch.get("allreduce", [])}
    sizes = sorted(set(j) | set(t) | set(native))
    world = java.get("world") or torch.get("world") or "?"
    print(f"===== all-reduce, {java.get('dtype', torch.get('dtype', 'bf16'))} sum, {world} ranks, us per op (max over ranks)")
    print("ours (Java): System.nanoTime around N launches + synchronize; ours (native) and torch/NCCL: CUDA events")
    cols = ["size", "1-shot J", "2-shot J", "auto J", "auto=", "2-shot ip J", "auto ip J", "auto nat", "torch 1-shot",
            "torch 2-shot", "NCCL", "busbw J"]
    print("".join(f"{c:>13}" for c in cols))
    for b in sizes:
        jr, ir, nr, tr = j.get(b, {}), jip.get(b, {}), native.get(b, {}), t.get(b, {})
        best = [v for v in (jr.get("one_shot_us"), jr.get("two_shot_us"), jr.get("auto_us")) if v]
        busbw = 2 * (world - 1) / world * b / (min(best) * 1e-6) / 1e9 if best and isinstance(world, int) else None
        vals = [size_text(b), fmt(jr.get("one_shot_us")), fmt(jr.get("two_shot_us")), fmt(jr.get("auto_us")),
                jr.get("auto_algo", "-"), fmt(ir.get("two_shot_us")), fmt(ir.get("auto_us")), fmt(nr.get("auto")),
                fmt(tr.get("torch_one_shot_us")), fmt(tr.get("torch_two_shot_us")), fmt(tr.get("nccl_us")),
                "-" if busbw is None else f"{busbw:.1f}"]
        print("".join(f"{v:>13}" for v in vals))
    print(f"barrier (us): ours Java {fmt(java.get('barrier_us'))}, ours native {fmt(native_barrier)}, "
          f"torch symm_mem {fmt(torch.get('barrier_us'))}")
    print("(J = Java bench, out of place into device memory unless 'ip'; torch two_shot is in place "
          "(two_shot_all_reduce_), torch one_shot out of place)")


if __name__ == "__main__":
    main()
