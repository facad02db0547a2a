# A small elastic training job for torchrun (gloo, CPU): 20 checked all-reduces, a checkpoint after
# each, and a resume from the checkpoint when torchrun restarts the workers. Once in the job's life
# (a marker file beside the checkpoint says it happened), the worker of global rank KILL_RANK is killed
# (SIGKILL) just before step KILL_STEP, as an OOM kill would. Not TORCHELASTIC_RESTART_COUNT: each
# agent counts only its own failures, and the ranks may move between nodes when the job re-forms.
import json
import os
import signal
import sys
import time

import torch
import torch.distributed as dist

STEPS = 20
checkpoint = os.environ["CHECKPOINT"]
kill_rank = int(os.environ["KILL_RANK"])
kill_step = int(os.environ["KILL_STEP"])

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
attempt = int(os.environ["TORCHELASTIC_RESTART_COUNT"])

start, total = 0, 0.0
if os.path.exists(checkpoint):
    with open(checkpoint) as f:
        saved = json.load(f)
    start, total = saved["step"] + 1, saved["total"]
    print(f"rank {rank} resumes at step {start} (attempt {attempt} of its node)", flush=True)

for step in range(start, STEPS):
    if rank == kill_rank and step == kill_step and not os.path.exists(checkpoint + ".killed"):
        open(checkpoint + ".killed", "w").close()
        os.kill(os.getpid(), signal.SIGKILL)
    value = torch.tensor([float(rank + 1 + step)])
    dist.all_reduce(value)
    expected = sum(r + 1 + step for r in range(world))
    if value.item() != expected:
        print(f"WRONG rank {rank} step {step}: {value.item()} where {expected} is right", flush=True)
        sys.exit(3)
    total += value.item()
    if rank == 0:
        with open(checkpoint + ".tmp", "w") as f:
            json.dump({"step": step, "total": total}, f)
        os.replace(checkpoint + ".tmp", checkpoint)
    dist.barrier()
    time.sleep(0.02)

print(f"RESULT rank {rank} world {world} total {total:.0f}", flush=True)
dist.destroy_process_group()
