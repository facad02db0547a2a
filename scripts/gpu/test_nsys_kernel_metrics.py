"""nsys_kernel_metrics.py on a small export made here with the tables and columns nsys writes."""
import contextlib
import io
import os
import sqlite3
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nsys_kernel_metrics as nkm  # noqa: E402

PUSH = "void symmem::cuda::(anonymous namespace)::two_shot_push_kernel<__nv_bfloat16, 8, 0, true>" \
       "(symmem::cuda::CollArgs, unsigned long, __nv_bfloat16*)"
PULL = "void symmem::cuda::(anonymous namespace)::two_shot_kernel<__nv_bfloat16, 8, 0, true, 2>" \
       "(symmem::cuda::CollArgs, unsigned long, __nv_bfloat16*, int)"


def make_export(path):
    db = sqlite3.connect(path)
    db.execute("create table StringIds(id integer primary key, value text)")
    db.execute("create table CUPTI_ACTIVITY_KIND_KERNEL(start integer, end integer, deviceId integer, "
               "shortName integer, demangledName integer)")
    db.execute("create table TARGET_INFO_GPU_METRICS(typeId integer, sourceId integer, typeName text, "
               "metricId integer, metricName text)")
    db.execute("create table GPU_METRICS(timestamp integer, typeId integer, metricId integer, value integer)")
    db.executemany("insert into StringIds values (?, ?)", [(1, PUSH), (2, PULL), (3, "memset32_kernel")])
    # Two push kernels of 30 us and one pull kernel of 100 us, samples every 5 us.
    kernels = [(100_000, 130_000, 1), (200_000, 230_000, 1), (300_000, 400_000, 2), (500_000, 502_000, 3)]
    db.executemany("insert into CUPTI_ACTIVITY_KIND_KERNEL values (?, ?, 0, ?, ?)",
                   [(s, e, n, n) for s, e, n in kernels])
    db.executemany("insert into TARGET_INFO_GPU_METRICS values (?, 0, 'GH100', ?, ?)",
                   [(0x10000, 7, "NVLink TX Responses User Data [Throughput %]"), (0x10000, 8, "GR Active [Throughput %]")])
    rows = []
    for t in range(0, 600_000, 5_000):
        busy = any(s < t <= e for s, e, n in kernels if n == 1)
        pull = any(s < t <= e for s, e, n in kernels if n == 2)
        rows.append((t, 0x10000, 7, 80 if busy else 60 if pull else 0))
        rows.append((t, 0x10000, 8, 99))
    db.executemany("insert into GPU_METRICS values (?, ?, ?, ?)", rows)
    db.commit()
    db.close()


class NsysKernelMetricsTest(unittest.TestCase):
    def run_on_export(self, *extra):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "p.sqlite")
            make_export(path)
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                rc = nkm.main([path, *extra])
            return rc, out.getvalue()

    def test_averages_only_the_samples_inside_each_kind_of_kernel(self):
        rc, out = self.run_on_export()
        self.assertEqual(rc, 0, out)
        self.assertIn("samples every 5.0 us", out)
        self.assertIn("two_shot_push_kernel<..., true>: 2 runs, mean 30.00 us", out)
        self.assertIn("two_shot_kernel<..., 2>: 1 runs, mean 100.00 us", out)
        push = out.split("two_shot_push_kernel")[1].split("two_shot_kernel")[0]
        self.assertRegex(push, r"NVLink TX .*: mean 80\.0 ")
        pull = out.split("two_shot_kernel<..., 2>")[1]
        self.assertRegex(pull, r"NVLink TX .*: mean 60\.0 ")
        self.assertNotIn("GR Active", out)  # not a metric asked for
        self.assertNotIn("memset32", out)  # not a collective

    def test_metric_and_kernel_filters(self):
        rc, out = self.run_on_export("--kernels", "push", "--metrics", "gr active")
        self.assertEqual(rc, 0, out)
        self.assertNotIn("two_shot_kernel<", out)
        self.assertRegex(out, r"GR Active .*: mean 99\.0 ")

    def test_kernel_kind_keeps_the_last_template_argument(self):
        self.assertEqual(nkm.kernel_kind(PUSH), "two_shot_push_kernel<..., true>")
        self.assertEqual(nkm.kernel_kind("void symmem::cuda::barrier_kernel(symmem::cuda::SigArgs)"),
                         "symmem::cuda::barrier_kernel")


if __name__ == "__main__":
    unittest.main()
