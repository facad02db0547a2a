#!/usr/bin/env python3
"""TCPStore client benchmark (the Python side of `symmem bench store`): N client processes, each its
own TCPStore connection, set / get / add of 64-byte values, mean latency per op and ops/s.

    python3 tcpstore_bench.py --host 127.0.0.1 --port 29700 --clients 1,4,64 [--ops 20000]

Each client process times its own sequence of blocking calls (like torch_anchor.py: time of N ops / N);
the figure per level is the mean over clients, the p50/p99 over all single calls. Every key is read
back and compared; wrong or missing values are counted as errors.
"""
import argparse
import datetime
import json
import multiprocessing as mp
import time


def client(host, port, prefix, n_ops, value_bytes, start, out):
    try:
        run_client(host, port, prefix, n_ops, value_bytes, start, out)
    except Exception as e:  # noqa: BLE001 - reported by the parent
        out.put({"error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"})


def run_client(host, port, prefix, n_ops, value_bytes, start, out):
    import torch.distributed as dist
    s = dist.TCPStore(host, port, is_master=False, timeout=datetime.timedelta(seconds=30))
    val = lambda i: (f"{prefix}/{i}:".encode() * value_bytes)[:value_bytes]  # noqa: E731
    lat = {"set": [], "get": [], "add": []}
    errors = 0
    start.wait()
    t0 = time.perf_counter()
    for i in range(n_ops):
        a = time.perf_counter()
        s.set(f"{prefix}/{i}", val(i))
        lat["set"].append(time.perf_counter() - a)
    t1 = time.perf_counter()
    for i in range(n_ops):
        a = time.perf_counter()
        v = s.get(f"{prefix}/{i}")
        lat["get"].append(time.perf_counter() - a)
        errors += v != val(i)
    t2 = time.perf_counter()
    for i in range(n_ops):
        a = time.perf_counter()
        s.add(f"{prefix}/ctr", 1)
        lat["add"].append(time.perf_counter() - a)
    t3 = time.perf_counter()
    out.put({"lat": lat, "spans": [t1 - t0, t2 - t1, t3 - t2], "errors": errors})


def pct(xs, q):
    xs = sorted(xs)
    return xs[max(0, min(len(xs) - 1, int(-(-q * len(xs) // 1)) - 1))] * 1e6 if xs else float("nan")


def level(host, port, n, total_ops, value_bytes, tag):
    ctx = mp.get_context("fork")
    out, start = ctx.Queue(), ctx.Event()
    per = max(1, -(-total_ops // n))
    procs = [ctx.Process(target=client, args=(host, port, f"pybench/{tag}/c{n}/{c}", per, value_bytes, start, out))
             for c in range(n)]
    for p in procs:
        p.start()
    time.sleep(1.0 + n * 0.02)  # let every client connect
    start.set()
    res = [out.get(timeout=300) for _ in procs]
    for p in procs:
        p.join(30)
    failed = [r["error"] for r in res if "error" in r]
    if failed:
        print(f"{n} clients: {len(failed)} failed, first: {failed[0]}", flush=True)
        return [{"clients": n, "op": op, "ops": 0, "errors": len(failed), "error": failed[0]} for op in ("set", "get", "add")]
    rows = []
    for k, name in enumerate(["set", "get", "add"]):
        all_lat = [x for r in res for x in r["lat"][name]]
        mean = sum(r["spans"][k] / per for r in res) / n * 1e6
        wall = max(r["spans"][k] for r in res)
        rows.append({"clients": n, "op": name, "ops": len(all_lat), "mean_us": round(mean, 1),
                     "p50_us": round(pct(all_lat, .5), 1), "p99_us": round(pct(all_lat, .99), 1),
                     "ops_per_s": round(len(all_lat) / wall), "errors": sum(r["errors"] for r in res) if name == "get" else 0})
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--clients", default="1,4,64")
    ap.add_argument("--ops", type=int, default=20000, help="ops of each kind per level, over all clients")
    ap.add_argument("--value-bytes", type=int, default=64)
    ap.add_argument("--label", default="")
    ap.add_argument("--json")
    a = ap.parse_args()
    tag = f"{time.time_ns():x}"
    rows = []
    print(f"TCPStore clients (Python, one process each) against {a.label or ''} {a.host}:{a.port}")
    print(f"{'clients':>8} {'op':<4} {'ops':>8} {'mean us':>10} {'p50 us':>10} {'p99 us':>10} {'ops/s':>11} {'errors':>7}")
    for n in [int(x) for x in a.clients.split(",")]:
        for r in level(a.host, a.port, n, a.ops, a.value_bytes, tag):
            rows.append(r)
            if "error" in r:
                continue
            print(f"{r['clients']:>8} {r['op']:<4} {r['ops']:>8} {r['mean_us']:>10.1f} {r['p50_us']:>10.1f} "
                  f"{r['p99_us']:>10.1f} {r['ops_per_s']:>11} {r['errors']:>7}", flush=True)
    if a.json:
        json.dump({"label": a.label, "rows": rows}, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
