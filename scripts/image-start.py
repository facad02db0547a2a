#!/usr/bin/env python3
# The image's entry point to /q/health/ready 200 (what the kubelet sees), and podman run to ready, median of
# RUNS (5) starts of a world of one on the host backend. The container stamps the time its entry point starts
# into a mounted file (the kernel clock is the host's) and then execs the image's own java command; readiness
# is polled from this one process every 5 ms (a curl per poll loads a 2-CPU machine). Needs podman, the image
# (deploy/build-image.sh) and, as deploy/containers.conf says, ulimits an unprivileged sandbox may grant.
#   python3 scripts/image-start.py [image]
import http.client, json, os, random, shlex, subprocess, sys, tempfile, time
img = sys.argv[1] if len(sys.argv) > 1 else "localhost/symmem:latest"
config = json.loads(subprocess.check_output(["podman", "image", "inspect", "--format", "{{json .Config}}", img]))
entry = "date +%s%N > /stamp/t; exec " + " ".join(shlex.quote(a) for a in config["Entrypoint"] + config["Cmd"])
res = []
for i in range(int(os.environ.get("RUNS", "5"))):
    port = 21000 + random.randrange(20000)
    d = tempfile.mkdtemp(); os.chmod(d, 0o777)
    t0 = time.time_ns()
    cid = subprocess.check_output(["podman", "run", "-d", "--rm", "-v", f"{d}:/stamp", "--ulimit", "nofile=20000:20000",
        "--ulimit", "nproc=20000:20000", "-p", f"127.0.0.1:{port}:9700", "-e", "WORLD_SIZE=1", "-e", "RANK=0",
        "-e", "MASTER_ADDR=127.0.0.1", "-e", "MASTER_PORT=0", "-e", "SYMMEM_BACKEND=host",
        "--entrypoint", "/bin/sh", img, "-c", entry], text=True).strip()
    while True:
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=1); c.request("GET", "/q/health/ready")
            if c.getresponse().status == 200: break
        except Exception: pass
        time.sleep(0.005)
    t2 = time.time_ns(); t1 = int(open(f"{d}/t").read())
    load = open("/proc/loadavg").read().split()[0]
    res.append(((t2 - t1) // 10**6, (t2 - t0) // 10**6))
    print(f"run {i+1}: entry point -> ready {(t2-t1)//10**6} ms; podman run -> ready {(t2-t0)//10**6} ms (load {load})", flush=True)
    subprocess.run(["podman", "stop", "-t", "5", cid], capture_output=True)
e = sorted(r[0] for r in res); p = sorted(r[1] for r in res)
print(f"entry point -> ready min/median/max {e[0]} / {e[len(e)//2]} / {e[-1]} ms; podman run -> ready {p[0]} / {p[len(p)//2]} / {p[-1]} ms")
