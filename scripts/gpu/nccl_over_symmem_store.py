#!/usr/bin/env python3
"""NCCL and PyTorch symmetric memory bootstrapped through symmem's store (PyTorch TCPStore protocol).

Starts 4 processes (multiprocessing, one per GPU); each makes a TCPStore client of the store at
--host/--port (symmem's Java server), calls init_process_group("nccl", store=...), checks an
all_reduce, and does a torch.distributed._symmetric_memory empty + rendezvous through that group,
checking a peer's buffer. NVLink multicast stays off in every process.
    python3 nccl_over_symmem_store.py --host 127.0.0.1 --port 29600 [--world 4]
Prints one PASS/FAIL line per rank and step; exit status 0 only if every rank passed.
"""
import argparse
import datetime
import os
import sys
import traceback

NO_MULTICAST = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}
os.environ.update(NO_MULTICAST)  # inherited by the workers; set again in each for good measure


def worker(rank, world, host, port, prefix, results):
    os.environ.update(NO_MULTICAST)
    steps = []
    try:
        import torch
        import torch.distributed as dist
        import torch.distributed._symmetric_memory as symm_mem

        torch.cuda.set_device(rank)
        dev = torch.device("cuda", rank)
        store = dist.TCPStore(host, port, is_master=False, timeout=datetime.timedelta(seconds=60))
        store = dist.PrefixStore(prefix, store)  # a fresh namespace per run
        dist.init_process_group("nccl", store=store, rank=rank, world_size=world, device_id=dev,
                                timeout=datetime.timedelta(seconds=60))
        steps.append("init_process_group(nccl) through the store")

        x = torch.full((1 << 20,), float(rank + 1), device=dev)
        dist.all_reduce(x)
        torch.cuda.synchronize()
        expected = world * (world + 1) / 2
        assert torch.all(x == expected).item(), f"all_reduce gave {x[0].item()}, expected {expected}"
        steps.append(f"all_reduce of 1M floats = {expected:g}")

        group = dist.group.WORLD.group_name
        buf = symm_mem.empty(4096, dtype=torch.float32, device=dev)
        hdl = symm_mem.rendezvous(buf, group)
        buf.fill_(float(rank))
        hdl.barrier(channel=0)
        peer = (rank + 1) % world
        peer_buf = hdl.get_buffer(peer, (4096,), torch.float32)
        got = peer_buf[0].item()
        assert got == float(peer), f"peer {peer}'s symmetric buffer holds {got}, expected {peer}"
        hdl.barrier(channel=0)
        steps.append(f"symm_mem empty+rendezvous (world {hdl.world_size}), read peer {peer}'s buffer")
        dist.barrier()
        dist.destroy_process_group()
        results.put((rank, True, steps, None))
    except Exception:  # noqa: BLE001 - reported to the parent
        results.put((rank, False, steps, traceback.format_exc(limit=6)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--world", type=int, default=4)
    ap.add_argument("--timeout", type=float, default=180, help="seconds for the whole run")
    a = ap.parse_args()
    import multiprocessing as mp
    import time
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    prefix = f"nccl-check/{time.time_ns():x}"
    procs = [ctx.Process(target=worker, args=(r, a.world, a.host, a.port, prefix, results)) for r in range(a.world)]
    for p in procs:
        p.start()
    seen = {}
    deadline = time.time() + a.timeout
    while len(seen) < a.world and time.time() < deadline:
        try:
            rank, ok, steps, err = results.get(timeout=max(0.1, deadline - time.time()))
        except Exception:  # noqa: BLE001 - queue.Empty at the deadline
            break
        seen[rank] = ok
        for s in steps:
            print(f"rank {rank}: PASS {s}", flush=True)
        if not ok:
            print(f"rank {rank}: FAIL\n{err}", flush=True)
    for p in procs:
        p.join(timeout=max(0.1, deadline - time.time()))
        if p.is_alive():
            p.kill()
    missing = [r for r in range(a.world) if r not in seen]
    if missing:
        print(f"FAIL ranks {missing} did not report within {a.timeout:.0f} s", flush=True)
    ok = len(seen) == a.world and all(seen.values())
    print(("PASS" if ok else "FAIL") + f": NCCL + symm_mem over symmem's store, {a.world} ranks", flush=True)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
