#!/usr/bin/env python3
"""PyTorch TCPStore clients against a store server: checks every op of the Python TCPStore API.

Starts nothing itself: point it at a running server (symmem's, or PyTorch's own for a reference):
    python3 store_compat.py --host 127.0.0.1 --port 29600 [--modes libuv,legacy]

Each op is checked with exact expected results (c10d TCPStore semantics); one line per check, then
"N passed, M failed". --modes runs the whole list once per client mode (use_libuv=True / False;
in PyTorch that flag picks the server backend, the client is the same, so both should agree).
A check the client itself refuses in a mode (NotImplementedError, e.g. queues with
use_libuv=False) prints CLIENT-NI and is not counted as failed. Exit status: 0 if none failed.
"""
import argparse
import datetime
import threading
import time

import torch.distributed as dist

SHORT = datetime.timedelta(milliseconds=300)
LONG = datetime.timedelta(seconds=10)


class Mismatch(Exception):
    pass


def expect(ok, what):
    if not ok:
        raise Mismatch(what)


def expect_eq(expected, actual):
    expect(expected == actual, f"expected {expected!r}, got {actual!r}")


def expect_raises(fn, short=True):
    """fn must raise (a store timeout); returns the seconds it took."""
    t0 = time.perf_counter()
    try:
        fn()
    except Exception as e:  # DistStoreError / RuntimeError / QueueEmptyError, depending on the op
        dt = time.perf_counter() - t0
        if short:
            expect(dt >= SHORT.total_seconds() - 0.01, f"raised after {dt:.3f} s, before the 0.3 s timeout: {e}")
            expect(dt < 5, f"raised only after {dt:.3f} s")
        return dt, e
    raise Mismatch("expected an exception, the call returned")


def in_thread(fn):
    """Runs fn in a thread; returns a function that joins it and returns fn's result or raises."""
    box = {}

    def run():
        try:
            box["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - reported to the caller
            box["error"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()

    def join(timeout=10):
        t.join(timeout)
        if t.is_alive():
            raise Mismatch("the waiting call did not return")
        if "error" in box:
            raise box["error"]
        return box.get("value")

    join.alive = t.is_alive
    return join


def checks(a, b, p):
    """(name, function) pairs; a and b are two clients (two connections)."""
    def with_timeout(store, td, fn):
        store.set_timeout(td)
        try:
            return fn()
        finally:
            store.set_timeout(LONG)

    def set_get_bytes():
        v = bytes(range(256))
        a.set(p + "bytes", v)
        expect_eq(v, b.get(p + "bytes"))

    def set_str_overwrite():
        a.set(p + "over", "one")
        a.set(p + "over", "two")
        expect_eq(b"two", a.get(p + "over"))

    def set_get_empty():
        a.set(p + "empty", b"")
        expect_eq(b"", a.get(p + "empty"))

    def set_get_1mib():
        v = bytes(i % 251 for i in range(1 << 20))
        a.set(p + "big", v)
        expect_eq(v, b.get(p + "big"))

    def get_missing_times_out():
        with_timeout(a, SHORT, lambda: expect_raises(lambda: a.get(p + "never")))
        a.set(p + "after", "ok")  # the connection is still usable after the timeout
        expect_eq(b"ok", a.get(p + "after"))

    def get_waits_for_set():
        join = in_thread(lambda: b.get(p + "late"))
        time.sleep(0.1)
        expect(join.alive(), "get returned before the key was set")
        a.set(p + "late", "now")
        expect_eq(b"now", join())

    def add():
        expect_eq(5, a.add(p + "ctr", 5))
        expect_eq(3, b.add(p + "ctr", -2))
        expect_eq(b"3", a.get(p + "ctr"))

    def cs_missing_empty():
        expect_eq(b"new", a.compare_set(p + "cs1", "", "new"))
        expect_eq(b"new", b.get(p + "cs1"))

    def cs_missing_nonempty():
        expect_eq(b"exp", a.compare_set(p + "cs2", "exp", "new"))
        expect_eq(False, a.check([p + "cs2"]))

    def cs_match():
        a.set(p + "cs3", "old")
        expect_eq(b"new", a.compare_set(p + "cs3", "old", "new"))
        expect_eq(b"new", b.get(p + "cs3"))

    def cs_mismatch():
        a.set(p + "cs4", "cur")
        expect_eq(b"cur", a.compare_set(p + "cs4", "other", "new"))
        expect_eq(b"cur", a.get(p + "cs4"))

    def check():
        a.set(p + "c1", "x")
        expect_eq(True, a.check([p + "c1"]))
        expect_eq(False, a.check([p + "c1", p + "nope"]))
        expect_eq(False, b.check([p + "nope"]))

    def wait_existing():
        a.set(p + "w1", "1")
        a.set(p + "w2", "2")
        b.wait([p + "w1", p + "w2"])
        b.wait([p + "w1", p + "w2"], LONG)

    def wait_timeout_arg():
        expect_raises(lambda: a.wait([p + "w1", p + "wmissing"], SHORT))
        expect_eq(True, a.check([p + "w1"]))  # still usable

    def wait_store_timeout():
        with_timeout(a, SHORT, lambda: expect_raises(lambda: a.wait([p + "wmissing2"])))

    def wait_released():
        join = in_thread(lambda: b.wait([p + "w3", p + "w4"], LONG))
        a.set(p + "w3", "3")
        time.sleep(0.05)
        expect(join.alive(), "wait returned with one of two keys set")
        a.add(p + "w4", 1)
        join()

    def delete_key():
        a.set(p + "del", "x")
        expect_eq(True, a.delete_key(p + "del"))
        expect_eq(False, a.check([p + "del"]))
        expect_eq(False, b.delete_key(p + "del"))

    def num_keys():
        before = a.num_keys()
        a.set(p + "n1", "1")
        a.set(p + "n2", "2")
        expect_eq(before + 2, a.num_keys())
        a.delete_key(p + "n1")
        expect_eq(before + 1, a.num_keys())

    def append():
        a.append(p + "app", "ab")
        b.append(p + "app", "cd")
        b.check([p + "app"])  # b's append is applied before this answer
        expect_eq(b"abcd", a.get(p + "app"))

    def multi():
        a.multi_set([p + "m1", p + "m2", p + "m3"], ["v1", "", "v3"])
        expect_eq([b"v3", b"v1", b""], b.multi_get([p + "m3", p + "m1", p + "m2"]))

    def multi_get_waits():
        join = in_thread(lambda: b.multi_get([p + "m1", p + "mlate"]))
        time.sleep(0.05)
        expect(join.alive(), "multi_get returned with a key missing")
        a.set(p + "mlate", "L")
        expect_eq([b"v1", b"L"], join())

    def multi_get_timeout():
        with_timeout(a, SHORT, lambda: expect_raises(lambda: a.multi_get([p + "m1", p + "mmissing"])))

    def queue_fifo():
        expect_eq(0, a.queue_len(p + "q"))
        a.queue_push(p + "q", "first")
        a.queue_push(p + "q", b"second")
        expect_eq(2, b.queue_len(p + "q"))
        expect_eq(b"first", b.queue_pop(p + "q"))
        expect_eq(1, a.queue_len(p + "q"))
        expect_eq(b"second", b.queue_pop(p + "q", block=False))
        expect_eq(0, a.queue_len(p + "q"))

    def queue_pop_nonblocking_empty():
        a.queue_len(p + "qe")  # raises NotImplementedError where the client has no queues
        _, e = expect_raises(lambda: a.queue_pop(p + "qe", block=False), short=False)
        if hasattr(dist, "QueueEmptyError"):
            expect(isinstance(e, dist.QueueEmptyError), f"expected QueueEmptyError, got {type(e).__name__}: {e}")
        expect_eq(0, a.queue_len(p + "qe"))  # still usable

    def queue_pop_timeout():
        a.queue_len(p + "qe2")
        with_timeout(a, SHORT, lambda: expect_raises(lambda: a.queue_pop(p + "qe2")))

    def queue_pop_released():
        a.queue_len(p + "q2")
        join = in_thread(lambda: b.queue_pop(p + "q2"))
        time.sleep(0.05)
        expect(join.alive(), "queue_pop returned from an empty queue")
        a.queue_push(p + "q2", "item")
        expect_eq(b"item", join())

    def queue_wait_check():
        expect_eq(False, a.check([p + "q3"]))
        a.queue_push(p + "q3", "x")
        expect_eq(True, b.check([p + "q3"]))
        b.wait([p + "q3"], LONG)

    def list_keys():
        a.set(p + "l/x", "1")
        a.set(p + "l/y", "2")
        mine = sorted(k for k in a.list_keys() if k.startswith(p + "l/"))
        expect_eq([p + "l/x", p + "l/y"], mine)

    def cross_connection_order():
        # TCPStore's set has no answer; a later request on ANOTHER connection sees it on PyTorch's
        # server (one event loop, requests applied in arrival order). 2000 tries, misses counted.
        misses = 0
        for i in range(2000):
            a.set(f"{p}x/{i}", "1")
            if not b.check([f"{p}x/{i}"]):
                misses += 1
        expect(misses == 0, f"{misses} of 2000 sets were not yet visible to the other connection's next check")

    def barrier():
        join = in_thread(lambda: b.barrier(p + "bar", 2, LONG))
        time.sleep(0.05)
        expect(join.alive(), "barrier returned with one of two workers")
        a.barrier(p + "bar", 2, LONG)
        join()

    out = [
        ("set+get (all 256 byte values)", set_get_bytes),
        ("set str overwrites", set_str_overwrite),
        ("set+get empty value", set_get_empty),
        ("set+get 1 MiB value", set_get_1mib),
        ("get missing key times out (store timeout)", get_missing_times_out),
        ("get waits for a later set (other client)", get_waits_for_set),
        ("add (absent key, negative delta, get as text)", add),
        ("compare_set missing key, empty expected: sets", cs_missing_empty),
        ("compare_set missing key, non-empty expected: returns expected", cs_missing_nonempty),
        ("compare_set match: swaps", cs_match),
        ("compare_set mismatch: returns current", cs_mismatch),
        ("check", check),
        ("wait on existing keys (with and without timeout)", wait_existing),
        ("wait with timeout argument raises", wait_timeout_arg),
        ("wait with the store's timeout raises", wait_store_timeout),
        ("wait released by another client's set/add", wait_released),
        ("delete_key", delete_key),
        ("num_keys", num_keys),
        ("append", append),
        ("multi_set + multi_get in order", multi),
        ("multi_get waits for a missing key", multi_get_waits),
        ("multi_get times out", multi_get_timeout),
        ("set on one connection seen by the next check on another (2000x)", cross_connection_order),
    ]
    optional = [
        ("queue_push/queue_len/queue_pop FIFO", "queue_push", queue_fifo),
        ("queue_pop(block=False) on empty raises", "queue_pop", queue_pop_nonblocking_empty),
        ("queue_pop on empty times out", "queue_pop", queue_pop_timeout),
        ("queue_pop released by another client's push", "queue_pop", queue_pop_released),
        ("check/wait on a queue key", "queue_push", queue_wait_check),
        ("list_keys", "list_keys", list_keys),
        ("barrier (2 clients)", "barrier", barrier),
    ]
    for name, attr, fn in optional:
        out.append((name, fn if hasattr(a, attr) else None))
    return out


def run_mode(host, port, use_libuv, tag):
    kw = {"use_libuv": use_libuv}
    a = dist.TCPStore(host, port, is_master=False, timeout=LONG, **kw)
    b = dist.TCPStore(host, port, is_master=False, timeout=LONG, **kw)
    p = f"compat/{tag}/{time.time_ns():x}/"
    passed = failed = absent = 0
    print(f"-- client mode {tag} (use_libuv={use_libuv}) against {host}:{port}", flush=True)
    print("NOTE        ping: not in the Python API; each client's connect sends VALIDATE and PING (2 connected)")
    for name, fn in checks(a, b, p):
        if fn is None:
            absent += 1
            print(f"ABSENT      {name}: this PyTorch has no such method", flush=True)
            continue
        t0 = time.perf_counter()
        try:
            fn()
            passed += 1
            print(f"PASS        {name} ({(time.perf_counter() - t0) * 1e3:.1f} ms)", flush=True)
        except NotImplementedError as e:
            # The client itself refuses (e.g. queues with use_libuv=False): nothing reached the server.
            absent += 1
            print(f"CLIENT-NI   {name}: the client refuses it in this mode: {e}", flush=True)
        except Exception as e:  # noqa: BLE001 - every failure is reported
            failed += 1
            print(f"FAIL        {name}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}", flush=True)
            try:  # a failed op may leave a client unusable: reconnect both
                a = dist.TCPStore(host, port, is_master=False, timeout=LONG, **kw)
                b = dist.TCPStore(host, port, is_master=False, timeout=LONG, **kw)
            except Exception as e2:  # noqa: BLE001
                print(f"FAIL        reconnect: {e2}")
                return passed, failed + 1, absent
    return passed, failed, absent


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--modes", default="libuv,legacy", help="client modes: libuv, legacy or both (default)")
    a = ap.parse_args()
    total_p = total_f = total_a = 0
    for mode in a.modes.split(","):
        p, f, ab = run_mode(a.host, a.port, mode == "libuv", mode)
        total_p, total_f, total_a = total_p + p, total_f + f, total_a + ab
    extra = f" ({total_a} not offered by this PyTorch client/mode)" if total_a else ""
    print(f"{total_p} passed, {total_f} failed{extra}", flush=True)
    raise SystemExit(0 if total_f == 0 else 1)


if __name__ == "__main__":
    main()
