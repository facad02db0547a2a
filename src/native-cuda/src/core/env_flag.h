// The one boolean grammar of symmem's variables, the same as the Java side's
// (io.symmem.config.BooleanKind): "true", "1" or "yes" in any case is true, written exactly (no
// spaces around). The Java side refuses any other value of its variables before the library runs;
// the library reads unset and every other value (including "on") as false.
#pragma once
#include <cstdlib>
#include <strings.h>

namespace symmem {

inline bool flag_is_true(const char* v) {
  return v != nullptr &&
         (strcasecmp(v, "1") == 0 || strcasecmp(v, "true") == 0 || strcasecmp(v, "yes") == 0);
}

inline bool env_flag_is_true(const char* name) { return flag_is_true(std::getenv(name)); }

}  // namespace symmem
