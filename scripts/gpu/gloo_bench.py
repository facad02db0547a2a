"""PyTorch Gloo all-reduce on the CPU, for the host backend's comparison (scripts/gpu/run-host.sh).

WORLD processes (torch.multiprocessing, one Gloo process group over a FileStore), float32 sum of
each size; per size: WARMUP untimed calls, which also size the timed loop (MIN_TIME_S worth of
calls, MIN_ITERS..MAX_ITERS, the same count on every rank); time per op = elapsed / calls, the
maximum over ranks (as symmem bench allreduce reports it). Default threads, as PyTorch users have. RUNS repetitions in the same processes; one JSON line per (run, size) on stdout:
  {"run": 1, "bytes": 4096, "us": 812.3}
  python gloo_bench.py --world 4 --sizes 4096,65536 --runs 3
"""
import argparse
import json
import os
import signal
import sys
import tempfile
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def agreed(value, op):
    t = torch.tensor([value], dtype=torch.float64)
    dist.all_reduce(t, op=op)
    return float(t.item())


def rank_main(rank, args, store_path, queue):
    dist.init_process_group("gloo", init_method="file://" + store_path, rank=rank,
                            world_size=args.world)
    for run in range(1, args.runs + 1):
        for nbytes in args.sizes:
            x = torch.ones(nbytes // 4, dtype=torch.float32)
            # The warm-up also sizes the timed loop: every rank makes the same number of calls.
            t0 = time.perf_counter()
            for _ in range(args.warmup):
                dist.all_reduce(x)
            per_call = agreed((time.perf_counter() - t0) / args.warmup, dist.ReduceOp.MAX)
            calls = int(min(args.max_iters, max(args.min_iters, args.min_time_s / max(per_call, 1e-9))))
            dist.barrier()
            t0 = time.perf_counter()
            for _ in range(calls):
                dist.all_reduce(x)
            elapsed = time.perf_counter() - t0
            us = agreed(elapsed / calls * 1e6, dist.ReduceOp.MAX)
            if rank == 0:
                queue.put({"run": run, "bytes": nbytes, "us": round(us, 2)})
    dist.barrier()
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--world", type=int, default=4)
    p.add_argument("--sizes", default="4096,65536,1048576,16777216,67108864")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--min-iters", type=int, default=10)
    p.add_argument("--max-iters", type=int, default=2000)
    p.add_argument("--min-time-s", type=float, default=0.2)
    args = p.parse_args()
    args.sizes = [int(s) for s in args.sizes.split(",")]
    store = tempfile.NamedTemporaryFile(prefix="gloo-store-", delete=False)
    store.close()
    os.unlink(store.name)
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=rank_main, args=(r, args, store.name, queue)) for r in range(args.world)]
    for proc in procs:
        proc.start()

    def stop(*_):  # a `timeout` around this script must not leave the ranks behind
        for proc in procs:
            proc.kill()
        sys.exit(1)

    signal.signal(signal.SIGTERM, stop)
    expected = args.runs * len(args.sizes)
    got = 0
    while got < expected:
        if not any(proc.is_alive() for proc in procs) and queue.empty():
            break
        try:
            print(json.dumps(queue.get(timeout=1.0)), flush=True)
            got += 1
        except Exception:  # queue.Empty: keep waiting while a rank is alive
            pass
    for proc in procs:
        proc.join(timeout=30)
    bad = [proc.exitcode for proc in procs if proc.exitcode != 0]
    if got < expected or bad:
        raise SystemExit(f"gloo_bench: {got} of {expected} results; rank exit codes {[p.exitcode for p in procs]}")


if __name__ == "__main__":
    main()
