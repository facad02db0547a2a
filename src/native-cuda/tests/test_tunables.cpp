// The native tunables table: every variable listed once with a text, values checked by the table's
// ranges, and a bad value failing the open of its backend (cuda too: the check runs before any GPU
// is touched, so it is tested here without one) with one line naming the variable and the value.
#include <set>
#include <string>

#include "test_util.h"

static void expect_open_refused(const char* backend, const char* var, const char* value) {
  setenv(var, value, 1);
  symmem_backend* be = nullptr;
  CHECK_STATUS(symmem_backend_open(backend, 0, &be), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS(var);
  CHECK_ERROR_HAS((std::string("'") + value + "'").c_str());
  CHECK(std::strchr(symmem_last_error(), '\n') == nullptr);
  CHECK(be == nullptr);
  unsetenv(var);
}

static int index_of(const char* name) {
  for (int i = 0; i < symmem_tunable_count(); ++i)
    if (std::strcmp(symmem_tunable_name(i), name) == 0) return i;
  TEST_FAIL("%s is not in the tunables table", name);
}

int main() {
  const int n = symmem_tunable_count();
  CHECK(n >= 12);
  std::set<std::string> names;
  for (int i = 0; i < n; ++i) {
    const char* name = symmem_tunable_name(i);
    CHECK(name != nullptr && std::strncmp(name, "SYMMEM_", 7) == 0);
    CHECK(names.insert(name).second);
    const std::string backend = symmem_tunable_backend(i);
    CHECK(backend == "host" || backend == "cuda");
    CHECK(std::strlen(symmem_tunable_allowed(i)) > 20);
    CHECK_OK(symmem_tunable_check(i));  // nothing set in this process yet
  }
  CHECK(symmem_tunable_name(n) == nullptr && symmem_tunable_name(-1) == nullptr);
  CHECK_STATUS(symmem_tunable_check(n), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("out of range");

  const int pdl = index_of("SYMMEM_CUDA_PDL");
  CHECK(std::strstr(symmem_tunable_allowed(pdl), "0..1") != nullptr);
  setenv("SYMMEM_CUDA_PDL", "2", 1);
  CHECK_STATUS(symmem_tunable_check(pdl), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("SYMMEM_CUDA_PDL='2' is not valid: a whole number in 0..1");
  setenv("SYMMEM_CUDA_PDL", "", 1);  // empty = unset
  CHECK_OK(symmem_tunable_check(pdl));
  unsetenv("SYMMEM_CUDA_PDL");

  // The value in use: the default when unset or empty, the variable's when set, an error when bad.
  const int scratch = index_of("SYMMEM_CUDA_PUSH_SCRATCH_BYTES");
  uint64_t v = 0;
  int set = -1;
  CHECK_OK(symmem_tunable_value(scratch, &v, &set));
  CHECK(v == (4u << 20) && set == 0);
  setenv("SYMMEM_CUDA_PUSH_SCRATCH_BYTES", "0", 1);
  CHECK_OK(symmem_tunable_value(scratch, &v, &set));
  CHECK(v == 0 && set == 1);
  setenv("SYMMEM_CUDA_PUSH_SCRATCH_BYTES", "", 1);
  CHECK_OK(symmem_tunable_value(scratch, &v, &set));
  CHECK(v == (4u << 20) && set == 0);
  setenv("SYMMEM_CUDA_PUSH_SCRATCH_BYTES", "4MiB", 1);
  CHECK_STATUS(symmem_tunable_value(scratch, &v, &set), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("SYMMEM_CUDA_PUSH_SCRATCH_BYTES='4MiB' is not valid");
  unsetenv("SYMMEM_CUDA_PUSH_SCRATCH_BYTES");
  CHECK_OK(symmem_tunable_value(index_of("SYMMEM_CUDA_PUSH_MAX_BYTES"), &v, &set));
  CHECK(v == UINT64_MAX && set == 0);  // computed by the backend
  CHECK_STATUS(symmem_tunable_value(n, &v, &set), SYMMEM_ERR_INVALID_ARGUMENT);

  // A value out of range is an error at open (not clamped), for cuda and nccl alike.
  expect_open_refused("cuda", "SYMMEM_CUDA_ONE_SHOT_BLOCKS", "100000");
  expect_open_refused("cuda", "SYMMEM_CUDA_TWO_SHOT_MIN_BYTES", "1MiB");
  expect_open_refused("nccl", "SYMMEM_CUDA_THREADS", "abc");
  expect_open_refused("host", "SYMMEM_HOST_PARALLEL_MIN_BYTES", "-1");
  // A backend checks only its own: a bad cuda value does not stop the host backend.
  setenv("SYMMEM_CUDA_UNROLL", "9", 1);
  symmem_backend* be = nullptr;
  CHECK_OK(symmem_backend_open("host", 0, &be));
  CHECK_OK(symmem_backend_close(be));
  unsetenv("SYMMEM_CUDA_UNROLL");
  return 0;
}
