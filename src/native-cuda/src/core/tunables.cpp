#include "core/tunables.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/validate.h"

namespace symmem {

bool parse_whole(const char* v, uint64_t lo, uint64_t hi, uint64_t* out) {
  if (v[0] < '0' || v[0] > '9') return false;
  errno = 0;
  char* end = nullptr;
  const unsigned long long x = std::strtoull(v, &end, 10);
  if (errno != 0 || *end != '\0' || x < lo || x > hi) return false;
  *out = x;
  return true;
}

const char* tunable_allowed(Tunable t) {
  static const std::vector<std::string> texts = [] {
    std::vector<std::string> v;
    for (const TunableSpec& s : kTunableSpecs) {
      std::string x = s.hi == kUnbounded ? "a whole number, " + std::to_string(s.lo) + " or more"
                                         : "a whole number in " + std::to_string(s.lo) + ".." +
                                               std::to_string(s.hi);
      if (s.fallback != kComputed) x += " (unset: " + std::to_string(s.fallback) + ")";
      v.push_back(x + "; " + s.meaning);
    }
    return v;
  }();
  return texts[static_cast<int>(t)].c_str();
}

symmem_status read_tunable(Tunable t, uint64_t* out, bool* is_set) {
  const TunableSpec& s = tunable_spec(t);
  *is_set = false;
  const char* v = std::getenv(s.name);
  if (v == nullptr || *v == '\0') return SYMMEM_OK;
  if (!parse_whole(v, s.lo, s.hi, out))
    return fail(SYMMEM_ERR_INVALID_ARGUMENT, "%s='%s' is not valid: %s", s.name, v, tunable_allowed(t));
  *is_set = true;
  return SYMMEM_OK;
}

uint64_t tunable_or(Tunable t, uint64_t fallback) {
  uint64_t v = fallback;
  bool set = false;
  if (read_tunable(t, &v, &set) != SYMMEM_OK || !set) return fallback;
  return v;
}

bool tunable_is_set(Tunable t) {
  uint64_t v;
  bool set = false;
  return read_tunable(t, &v, &set) == SYMMEM_OK && set;
}

symmem_status check_tunables(const char* backend) {
  for (int i = 0; i < kTunableCount; ++i) {
    if (std::strcmp(kTunableSpecs[i].backend, backend) != 0) continue;
    uint64_t v;
    bool set;
    SYMMEM_TRY(read_tunable(static_cast<Tunable>(i), &v, &set));
  }
  return SYMMEM_OK;
}

}  // namespace symmem

extern "C" {

int symmem_tunable_count(void) { return symmem::kTunableCount; }

const char* symmem_tunable_name(int index) {
  return index >= 0 && index < symmem::kTunableCount ? symmem::kTunableSpecs[index].name : nullptr;
}

const char* symmem_tunable_backend(int index) {
  return index >= 0 && index < symmem::kTunableCount ? symmem::kTunableSpecs[index].backend : nullptr;
}

const char* symmem_tunable_allowed(int index) {
  return index >= 0 && index < symmem::kTunableCount
             ? symmem::tunable_allowed(static_cast<symmem::Tunable>(index))
             : nullptr;
}

symmem_status symmem_tunable_check(int index) {
  return symmem::guarded("symmem_tunable_check", [&]() -> symmem_status {
    SYMMEM_REQUIRE(index >= 0 && index < symmem::kTunableCount, "tunable index %d is out of range 0..%d",
                   index, symmem::kTunableCount - 1);
    uint64_t v;
    bool set;
    return symmem::read_tunable(static_cast<symmem::Tunable>(index), &v, &set);
  });
}

symmem_status symmem_tunable_value(int index, uint64_t* value, int* is_set) {
  return symmem::guarded("symmem_tunable_value", [&]() -> symmem_status {
    SYMMEM_REQUIRE(index >= 0 && index < symmem::kTunableCount, "tunable index %d is out of range 0..%d",
                   index, symmem::kTunableCount - 1);
    SYMMEM_REQUIRE(value != nullptr && is_set != nullptr, "value and is_set must not be NULL");
    uint64_t v = symmem::kTunableSpecs[index].fallback;
    bool set = false;
    SYMMEM_TRY(symmem::read_tunable(static_cast<symmem::Tunable>(index), &v, &set));
    *value = v;
    *is_set = set ? 1 : 0;
    return SYMMEM_OK;
  });
}

}  // extern "C"
