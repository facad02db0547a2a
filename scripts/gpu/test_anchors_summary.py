"""anchors_summary.py against sample logs in the benches' own formats (testdata/anchors: symmem_bench's
tables as its printf writes them, two cuda runs and a failed nvshmem one; nccl_bench's NCCLBENCH lines;
torch_anchor.py's and `bench allreduce`'s JSON, one source missing).

    python3 -m unittest discover -s scripts/gpu -p 'test_*.py'
"""
import io, json, os, shutil, sys, tempfile, unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import anchors_summary as s  # noqa: E402

SAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "testdata", "anchors")
KIB, MIB = 1 << 10, 1 << 20


def native():
    with open(os.path.join(SAMPLE, "bench-native.txt")) as f:
        return s.parse_native(f.read())


def printed(out):
    buf = io.StringIO()
    s.table(out, file=buf)
    return buf.getvalue()


class ParseNativeTest(unittest.TestCase):
    def test_each_cell_is_the_best_over_the_runs_of_its_backend(self):
        symmem, _, meta = native()
        self.assertEqual(meta["runs"], {"cuda": 2, "nvshmem": 1}, "a run that failed before its table is not a run")
        self.assertEqual(symmem["cuda"][4 * KIB]["one-shot"], 4.92, "run 1 printed 5.02, run 2 4.92")
        self.assertEqual(meta["world"], 2)

    def test_a_dash_is_no_figure_and_the_auto_columns_keep_their_choice(self):
        symmem, _, _ = native()
        row = symmem["cuda"][8 * MIB]
        self.assertIsNone(row["one-shot-ip"], "one-shot in place is not run above its limit")
        self.assertEqual((row["auto="], row["ip="]), ("one", "two"))
        self.assertNotIn("busbw(best)", row)

    def test_the_host_table_and_the_barrier_line_add_no_rows(self):
        symmem, _, _ = native()
        self.assertEqual(sorted(symmem["cuda"]), [4096 << i for i in range(17)])

    def test_nccl_lines_are_kept_per_variant_and_api(self):
        _, nccl, meta = native()
        self.assertEqual(nccl[("window-ip", "nccl")][4 * KIB], 7.21)
        self.assertEqual(nccl[("window-ip", "abi")][4 * KIB], 7.51)
        self.assertEqual(len(nccl), 8)
        self.assertIn("NCCL 2.28.9", meta["nccl"])

    def test_nccl_lines_with_the_slowest_rank_count_and_other_device_lines_are_no_anchor(self):
        _, nccl, _ = s.parse_native("NCCLBENCH plain-oop nccl 4096 8.52 2.500 12000 1\n"
                                    "NCCLBENCH plain-oop nccl-otherdev 4096 8.90 2.700 12000 0\n")
        self.assertEqual(nccl[("plain-oop", "nccl")][4 * KIB], 8.52)
        self.assertEqual(("plain-oop", "nccl-otherdev") in nccl, True)
        anchors = s.anchors_at(4 * KIB, nccl, {src: {} for src in s.TORCH_SOURCES})
        self.assertEqual(anchors["NCCL plain"], 8.52)


class SummaryTest(unittest.TestCase):
    def test_goals_follow_the_sizes(self):
        self.assertEqual([s.goal(b) for b in (4 * KIB, 8 * MIB, 16 * MIB, 64 * MIB, 256 * MIB)], [0.8, 0.8, None, 0.95, 0.95])

    def test_further_torch_runs_give_the_best_per_cell_and_nan_is_no_figure(self):
        rows = s.rows_of(s.load_docs(SAMPLE), "torch-cuda")
        self.assertAlmostEqual(rows[4 * KIB]["torch_one_shot_us"], 0.97 * (8.0 + 4096 / 200e3))
        self.assertNotIn("torch_one_shot_us", rows[256 * MIB], "one_shot is not run above 64 MiB (NaN)")
        self.assertEqual(s.runs_of(s.load_docs(SAMPLE), "torch-cuda"), 2)

    def test_the_best_anchor_and_ours_are_named(self):
        symmem, nccl, _ = native()
        docs = s.load_docs(SAMPLE)
        torch = {n: s.rows_of(docs, n) for n in s.TORCH_SOURCES}
        anchors = s.anchors_at(4 * KIB, nccl, torch)
        self.assertEqual(min(anchors, key=lambda k: anchors[k] or 1e9), "NCCL window")
        self.assertEqual(anchors["NCCL window"], 7.21, "the faster of window in place and out of place, NCCL's own loop")
        (us, which), _ = s.ours_native_at(4 * KIB, symmem)
        self.assertEqual((us, which), (4.67, "cuda one-shot-ip"))

    def test_the_crossover_ignores_a_blip_below_it_and_sees_where_only_two_shot_runs(self):
        symmem, _, _ = native()
        self.assertEqual(s.crossover(symmem["cuda"], "one-shot", "two-shot"), (MIB, 64 * KIB, None))
        self.assertEqual(s.crossover(symmem["cuda"], "one-shot-ip", "two-shot-ip"), (MIB, MIB, 8 * MIB))
        self.assertIsNone(s.auto_switch(symmem["cuda"], "auto="), "world 2 out of place: one-shot at every size")
        self.assertEqual(s.auto_switch(symmem["cuda"], "ip="), MIB)

    def test_the_copy_engine_column_counts_as_ours_and_its_auto_pick(self):
        text = ("symmem_bench: cuda backend, world 2, bf16 sum, time per op (us, max over ranks), busbw GB/s\n"
                "     bytes  one-shot  two-shot  two-shot-ip  two-shot-ce-ip  auto=  ip=  busbw(best)\n"
                "  33554432    139.22    107.68        96.91           99.10    one  two      346.2\n"
                " 268435456   1078.74    819.44       811.50          722.40    one   ce      371.6\n")
        symmem, _, _ = s.parse_native(text)
        (us, which), _ = s.ours_native_at(256 * MIB, symmem)
        self.assertEqual((us, which), (722.40, "cuda two-shot-ce-ip"))
        self.assertEqual(symmem["cuda"][256 * MIB]["ip="], "ce")
        self.assertEqual(s.auto_switch(symmem["cuda"], "ip="), 32 * MIB, "two or ce: AUTO's in-place switch to a two-shot")
        self.assertEqual(s.crossover(symmem["cuda"], "two-shot-ip", "two-shot-ce-ip")[0], 256 * MIB)

    def test_auto_is_judged_per_size_so_a_window_of_two_shot_agrees(self):
        rows = {MIB: {"one-shot": 8.0, "two-shot": 9.0, "auto=": "one"},
                8 * MIB: {"one-shot": 32.7, "two-shot": 30.9, "auto=": "two"},
                16 * MIB: {"one-shot": 58.5, "two-shot": 60.1, "auto=": "one"},
                64 * MIB: {"one-shot": 211.0, "two-shot": 215.5, "auto=": "two"}}
        self.assertEqual(s.auto_misses(rows, "one-shot", "two-shot", "auto="), ([MIB, 8 * MIB, 16 * MIB, 64 * MIB], []),
                         "64 MiB: two-shot 2 % slower is within the tolerance")
        rows[8 * MIB]["auto="] = "one"
        judged, misses = s.auto_misses(rows, "one-shot", "two-shot", "auto=")
        self.assertEqual([b for b, _ in misses], [8 * MIB])
        self.assertAlmostEqual(misses[0][1], 32.7 / 30.9)

    def test_the_printed_tables(self):
        text = printed(SAMPLE)
        self.assertIn("ratio goals met: 5 of 11 sizes", text)
        self.assertIn("ours native 371.4 GB/s (cuda two-shot-ip), goal >= 360: met", text)
        self.assertIn("out of place: two-shot faster from 1MiB on (first faster at 64KiB); AUTO first picks two-shot at never;"
                      " its pick within 3% of the faster at 9 of 17 sizes: DIFFERS at 2MiB (1.083x), 4MiB", text)
        self.assertIn("its pick within 3% of the faster at 11 of 11 sizes: agrees", text)
        self.assertIn("in place: two-shot faster from 1MiB on", text)
        self.assertIn("no figures from: java-nccl", text)
        self.assertTrue(text.rstrip().endswith("(see the logs and the steps above)"), text[-300:])

    def test_bundling_keeps_every_figure_in_one_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out")
            shutil.copytree(SAMPLE, out)
            before = printed(out)
            s.bundle(out)
            self.assertFalse(os.path.exists(os.path.join(out, "json")))
            with open(os.path.join(out, "results.json")) as f:
                self.assertEqual(sorted(json.load(f)), ["java-cuda", "java-nvshmem", "torch-cuda", "torch-cuda-2", "torch-nvshmem"])
            self.assertEqual(printed(out), before)

    def test_an_empty_run_still_prints_what_is_missing(self):
        with tempfile.TemporaryDirectory() as tmp:
            text = printed(tmp)
        self.assertIn("no figures from: java-cuda, java-nvshmem, java-nccl, torch-cuda, torch-nvshmem, nccl_bench,"
                      " symmem_bench cuda, symmem_bench nvshmem", text)


if __name__ == "__main__":
    unittest.main()
