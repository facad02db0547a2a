// The library's boolean variables (SYMMEM_DISABLE_MULTICAST, SYMMEM_ALLOW_OVERLAPPING_DEVICES,
// TORCH_SYMM_MEM_DISABLE_MULTICAST; core/env_flag.h) take the Java side's words
// (io.symmem.config.BooleanKind): true, 1, yes in any case are true, and nothing else is.
#include "core/env_flag.h"
#include "test_util.h"

int main() {
  for (const char* v : {"1", "true", "TRUE", "True", "yes", "YES", "Yes"}) {
    if (!symmem::flag_is_true(v)) TEST_FAIL("'%s' should be true", v);
  }
  for (const char* v : {"0", "false", "FALSE", "no", "NO", "", "on", "ON", "off", " 1", "1 ", "true ",
                        "2", "-1", "maybe", "y", "t"}) {
    if (symmem::flag_is_true(v)) TEST_FAIL("'%s' should not be true", v);
  }
  CHECK(!symmem::flag_is_true(nullptr));
  unsetenv("SYMMEM_TEST_FLAG");
  CHECK(!symmem::env_flag_is_true("SYMMEM_TEST_FLAG"));
  setenv("SYMMEM_TEST_FLAG", "Yes", 1);
  CHECK(symmem::env_flag_is_true("SYMMEM_TEST_FLAG"));
  setenv("SYMMEM_TEST_FLAG", "on", 1);
  CHECK(!symmem::env_flag_is_true("SYMMEM_TEST_FLAG"));
  return 0;
}
