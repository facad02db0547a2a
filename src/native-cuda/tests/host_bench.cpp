// Not a test: all-reduce time per op on the host backend, straight through the C ABI (no JVM), for
// comparing two builds of libsymmem on a busy machine: every (size, algorithm) is timed in TRIALS
// separate trials and both the best and the median trial are printed, so one trial that the
// scheduler spoiled does not decide the comparison.
//   symmem_host_bench [world=4] [trials=5] [sizes in bytes, comma-separated] [algos: one,two,auto]
//                     [fresh]
// fresh: every rank rewrites its input before each call (as a program that reduces new data each
// time does; the time includes that write). Without it the inputs stay the same from call to call,
// as in `symmem bench allreduce` and the Gloo bench, and may stay in the caches of every core.
// Time per op = rank 0's elapsed time over N back-to-back calls / N (every call ends with a
// barrier, so rank 0 cannot finish before the others); N = 256 MiB / size, within 5..1000.
#include <algorithm>
#include <chrono>
#include <sstream>

#include "test_util.h"

static std::vector<uint64_t> parse_list(const char* s) {
  std::vector<uint64_t> v;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) v.push_back(std::stoull(item));
  return v;
}

int main(int argc, char** argv) {
  const int world = argc > 1 ? std::atoi(argv[1]) : 4;
  const int trials = argc > 2 ? std::atoi(argv[2]) : 5;
  const std::vector<uint64_t> sizes =
      parse_list(argc > 3 ? argv[3] : "4096,65536,262144,1048576,4194304,16777216,67108864");
  const std::string algos = argc > 4 ? argv[4] : "one,two,auto";
  const bool fresh = argc > 5 && std::string(argv[5]) == "fresh";
  std::vector<int> algo_ids;
  if (algos.find("one") != std::string::npos) algo_ids.push_back(SYMMEM_ALGO_ONE_SHOT);
  if (algos.find("two") != std::string::npos) algo_ids.push_back(SYMMEM_ALGO_TWO_SHOT);
  if (algos.find("auto") != std::string::npos) algo_ids.push_back(SYMMEM_ALGO_AUTO);
  const uint64_t max_bytes = *std::max_element(sizes.begin(), sizes.end());
  std::printf("symmem_host_bench: %d ranks, fp32 sum, out of place, %d trials%s; us per op (best / median)\n",
              world, trials, fresh ? ", inputs rewritten before each call" : "");
  std::printf("%12s", "bytes");
  for (int a : algo_ids) std::printf(" %22s", a == 1 ? "one-shot" : a == 2 ? "two-shot" : "auto");
  std::printf("\n");
  std::fflush(stdout);
  bool ok = run_ranks(world, 3600, [&](int rank) {
    Names names("hostbench", world);
    symmem_backend* be = nullptr;
    symmem_buffer* b = make_imported_buffer("host", 0, names, rank, world, max_bytes, &be);
    void* out = nullptr;
    CHECK_OK(symmem_local_alloc(be, max_bytes, &out));
    std::memset(symmem_buffer_ptr(b, rank), 0, max_bytes);
    for (uint64_t bytes : sizes) {
      const uint64_t count = bytes / 4;
      const int iters = static_cast<int>(std::clamp<uint64_t>((uint64_t{256} << 20) / bytes, 5, 1000));
      if (rank == 0) std::printf("%12llu", static_cast<unsigned long long>(bytes));
      for (int a : algo_ids) {
        std::vector<double> us;
        for (int i = 0; i < 5; ++i)
          CHECK_OK(symmem_all_reduce(b, symmem_algo(a), SYMMEM_FLOAT32, SYMMEM_SUM, count, out, nullptr, 60000));
        for (int t = 0; t < trials; ++t) {
          CHECK_OK(symmem_barrier(b, 0, 60000));
          const auto t0 = std::chrono::steady_clock::now();
          for (int i = 0; i < iters; ++i) {
            if (fresh) std::fill_n(static_cast<float*>(symmem_buffer_ptr(b, rank)), count, float(i));
            CHECK_OK(symmem_all_reduce(b, symmem_algo(a), SYMMEM_FLOAT32, SYMMEM_SUM, count, out, nullptr, 60000));
          }
          const std::chrono::duration<double, std::micro> dt = std::chrono::steady_clock::now() - t0;
          us.push_back(dt.count() / iters);
        }
        std::sort(us.begin(), us.end());
        if (rank == 0) std::printf(" %10.1f / %9.1f", us.front(), us[us.size() / 2]);
      }
      if (rank == 0) {
        std::printf("\n");
        std::fflush(stdout);
      }
    }
    CHECK_OK(symmem_local_free(be, out));
    CHECK_OK(symmem_buffer_free(b));
    CHECK_OK(symmem_backend_close(be));
    return 0;
  });
  return ok ? 0 : 1;
}
