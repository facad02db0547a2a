// NVSHMEM is loaded at run time from the caller's candidates: every failure is named per candidate,
// a library without NVSHMEM's entry points is refused, and (with a stand-in library) the version,
// the environment rules, the unique id and the bootstrap arguments reach NVSHMEM as they should.
// The real library is exercised on the GPU machine (scripts/gpu/run-nvshmem.sh).
#include <dlfcn.h>
#include <sys/stat.h>

#include <fstream>

#include "test_util.h"

extern "C" {
int symmem_built_with_cuda(void);
}

int main(int argc, char** argv) {
  if (argc < 2) TEST_FAIL("usage: test_nvshmem_load <dir of the fake libnvshmem_host.so.3>");
  const std::string fake_dir = argv[1];
  const std::string fake = fake_dir + "/libnvshmem_host.so.3";

  // Before loading: every call says what to do first.
  int a = 0, b = 0, c = 0;
  CHECK_STATUS(symmem_nvshmem_version(&a, &b, &c), SYMMEM_ERR_STATE);
  CHECK_ERROR_HAS("symmem_nvshmem_load");
  uint8_t uid[SYMMEM_NVSHMEM_UNIQUEID_BYTES];
  CHECK_STATUS(symmem_nvshmem_get_uniqueid(uid), SYMMEM_ERR_STATE);
  symmem_backend* be = nullptr;
  if (symmem_built_with_cuda()) {
    CHECK_STATUS(symmem_backend_open("nvshmem", 0, &be), SYMMEM_ERR_STATE);
    CHECK_ERROR_HAS("NVSHMEM is not loaded");
  } else {
    CHECK_STATUS(symmem_backend_open("nvshmem", 0, &be), SYMMEM_ERR_UNSUPPORTED);
  }
  CHECK(symmem_nvshmem_initialized() == 0);

  // Nothing found: every candidate and its reason.
  const char* missing[] = {"/nonexistent/dir/libnvshmem_host.so.3", "libnvshmem_host_nothere.so.3"};
  char path[512];
  CHECK_STATUS(symmem_nvshmem_load(missing, 2, path, sizeof path), SYMMEM_ERR_UNSUPPORTED);
  CHECK_ERROR_HAS("was not found; looked at:");
  CHECK_ERROR_HAS("/nonexistent/dir/libnvshmem_host.so.3: ");
  CHECK_ERROR_HAS("libnvshmem_host_nothere.so.3: ");
  // A library that opens but is not NVSHMEM.
  const char* wrong[] = {"libm.so.6"};
  CHECK_STATUS(symmem_nvshmem_load(wrong, 1, path, sizeof path), SYMMEM_ERR_UNSUPPORTED);
  CHECK_ERROR_HAS("libm.so.6: opened, but it lacks nvshmemx_get_uniqueid");
  CHECK_STATUS(symmem_nvshmem_load(nullptr, 0, path, sizeof path), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("count 0");

  // The stand-in, after a missing candidate: loaded from where it is; its UID plugin beside it is
  // named for NVSHMEM.
  std::ofstream(fake_dir + "/nvshmem_bootstrap_uid.so.3") << "plugin";
  unsetenv("NVSHMEM_BOOTSTRAP_UID_PLUGIN");
  const char* order[] = {"/nonexistent/dir/libnvshmem_host.so.3", fake.c_str()};
  CHECK_OK(symmem_nvshmem_load(order, 2, path, sizeof path));
  CHECK(std::string(path).find("libnvshmem_host.so.3") != std::string::npos);
  CHECK(std::strstr(path, "/nonexistent/") == nullptr);
  char value[512];
  int set = 0;
  CHECK_OK(symmem_nvshmem_getenv("NVSHMEM_BOOTSTRAP_UID_PLUGIN", value, sizeof value, &set));
  CHECK(set == 1);
  CHECK(std::string(value) == fake_dir + "/nvshmem_bootstrap_uid.so.3" ||
        std::string(value).find("/nvshmem_bootstrap_uid.so.3") != std::string::npos);
  // Loading again keeps the first.
  CHECK_OK(symmem_nvshmem_load(missing, 2, path, sizeof path));
  CHECK_OK(symmem_nvshmem_version(&a, &b, &c));
  CHECK(a == 3 && b == 4 && c == 5);

  // Environment: only NVSHMEM_ names, only before NVSHMEM reads it.
  CHECK_STATUS(symmem_nvshmem_setenv("NCCL_SOCKET_IFNAME", "lo"), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("not an NVSHMEM_ variable");
  CHECK_OK(symmem_nvshmem_setenv("NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME", "lo"));
  CHECK_OK(symmem_nvshmem_getenv("NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME", value, sizeof value, &set));
  CHECK(set == 1 && std::strcmp(value, "lo") == 0);
  CHECK_OK(symmem_nvshmem_get_uniqueid(uid));
  CHECK(uid[4] == 'u');  // after the 4-byte version
  CHECK_STATUS(symmem_nvshmem_setenv("NVSHMEM_DEBUG", "INFO"), SYMMEM_ERR_STATE);
  CHECK_ERROR_HAS("too late");

  // Teams and the heap need an initialised NVSHMEM.
  int team = 0;
  CHECK_STATUS(symmem_nvshmem_team_split_strided(0, 1, 1, &team), SYMMEM_ERR_STATE);
  CHECK_ERROR_HAS("not initialised");
  CHECK_STATUS(symmem_nvshmem_finalize(), SYMMEM_ERR_STATE);
  CHECK_STATUS(symmem_nvshmem_init(0, 2, 2, uid), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("rank 2 is out of range 0..1");

  int devices = 0;
  CHECK_OK(symmem_cuda_device_count(&devices));
  if (devices == 0) {
    // Without a GPU, init stops at the device, naming it, before NVSHMEM is called.
    const symmem_status st = symmem_nvshmem_init(0, 0, 1, uid);
    CHECK(st == SYMMEM_ERR_NO_DEVICE || st == SYMMEM_ERR_UNSUPPORTED);
    std::printf("nvshmem load: PASS (init with the stand-in skipped: no CUDA device)\n");
    return 0;
  }
  // With a GPU: the bootstrap arguments reach NVSHMEM's init as given.
  CHECK_OK(symmem_nvshmem_init(0, 0, 1, uid));
  struct Record { int init_calls; unsigned flags; int rank, nranks; char uid_first; int bad_versions; int finalize_calls; int pe, npes; };
  void* h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  CHECK(h != nullptr);
  auto last = reinterpret_cast<const Record* (*)()>(dlsym(h, "fake_nvshmem_last"));
  CHECK(last != nullptr);
  const Record* r = last();
  CHECK(r->init_calls == 1 && r->flags == 8u && r->rank == 0 && r->nranks == 1);
  CHECK(r->uid_first == 'u' && r->bad_versions == 0);
  int pe = -1, n = 0;
  CHECK_OK(symmem_nvshmem_pe(&pe, &n));
  CHECK(pe == 0 && n == 1);
  CHECK_STATUS(symmem_nvshmem_init(0, 0, 1, uid), SYMMEM_ERR_STATE);
  CHECK_ERROR_HAS("already initialised");
  CHECK_OK(symmem_nvshmem_team_split_strided(0, 1, 1, &team));
  CHECK(team == 1);
  CHECK_STATUS(symmem_nvshmem_team_split_strided(0, 1, 2, &team), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_OK(symmem_nvshmem_finalize());
  CHECK(r->finalize_calls == 1);
  CHECK_STATUS(symmem_nvshmem_init(0, 0, 1, uid), SYMMEM_ERR_STATE);
  CHECK_ERROR_HAS("finalized");
  std::printf("nvshmem load: PASS (with init on the stand-in)\n");
  return 0;
}
