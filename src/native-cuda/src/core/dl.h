// Run-time loading shared by the NCCL and NVSHMEM loaders: libsymmem links neither library, and both
// report every candidate they tried with the loader's reason and every entry point a candidate lacked.
#pragma once
#include <dlfcn.h>

#include <string>

namespace symmem {

// Why dlopen(path) just failed. dlerror()'s text starts with the path, which the caller's message
// prints once already ("/x/libnccl.so.2: cannot open shared object file" -> "cannot open ...").
inline std::string dl_reason(const char* path) {
  const char* e = dlerror();
  std::string s = e != nullptr ? e : "unknown dlopen error";
  const std::string prefix = std::string(path) + ": ";
  if (s.compare(0, prefix.size(), prefix) == 0) s.erase(0, prefix.size());
  return s;
}

// Resolves `name` in `handle` into *fn; when absent, appends the name to *missing ("a, b").
template <class F>
bool dl_symbol(void* handle, const char* name, F* fn, std::string* missing) {
  void* p = dlsym(handle, name);
  if (p == nullptr) {
    *missing += missing->empty() ? name : std::string(", ") + name;
    return false;
  }
  *reinterpret_cast<void**>(fn) = p;
  return true;
}

}  // namespace symmem
