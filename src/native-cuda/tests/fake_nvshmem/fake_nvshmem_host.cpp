// A stand-in for NVSHMEM's host library, for the loader tests: it exports the entry points symmem
// resolves, checks the versions symmem puts into NVSHMEM's structs, and records what it was given
// (fake_nvshmem_last() lets the test read it). No GPU, no heap: nvshmem_malloc returns NULL.
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace {
struct Uid { int version; char internal[124]; };
struct UidArgs { int version; Uid* id; int myrank; int nranks; };
struct InitArgs { int version; UidArgs uid_args; int cuda_device_id; char content[92]; };
struct InitAttr { int version; void* mpi_comm; InitArgs args; };

struct Record {
  int init_calls = 0;
  unsigned flags = 0;
  int rank = -1, nranks = -1;
  char uid_first = 0;
  int bad_versions = 0;  // struct versions that NVSHMEM would refuse
  int finalize_calls = 0;
  int pe = -1, npes = 0;
} g;
}  // namespace

extern "C" {
__attribute__((visibility("default"))) const Record* fake_nvshmem_last() { return &g; }

__attribute__((visibility("default"))) int nvshmemx_get_uniqueid(Uid* id) {
  if (id->version != (1 << 16) + 128) ++g.bad_versions;
  std::memset(id->internal, 'u', sizeof id->internal);
  return 0;
}
__attribute__((visibility("default"))) int nvshmemx_set_attr_uniqueid_args(int r, int n, const Uid* id,
                                                                           InitAttr* a) {
  a->args.uid_args.id = const_cast<Uid*>(id);
  a->args.uid_args.myrank = r;
  a->args.uid_args.nranks = n;
  return 0;
}
__attribute__((visibility("default"))) int nvshmemx_hostlib_init_attr(unsigned flags, InitAttr* a) {
  ++g.init_calls;
  g.flags = flags;
  if (a->version != (2 << 16) + 144 || a->args.version != (2 << 16) + 128 ||
      a->args.uid_args.version != (1 << 16) + 24)
    ++g.bad_versions;
  g.rank = a->args.uid_args.myrank;
  g.nranks = a->args.uid_args.nranks;
  g.uid_first = a->args.uid_args.id->internal[0];
  g.pe = g.rank;
  g.npes = g.nranks;
  return 0;
}
__attribute__((visibility("default"))) void nvshmemx_hostlib_finalize() { ++g.finalize_calls; }
__attribute__((visibility("default"))) void* nvshmem_malloc(size_t) { return nullptr; }
__attribute__((visibility("default"))) void nvshmem_free(void*) {}
__attribute__((visibility("default"))) void* nvshmem_ptr(const void*, int) { return nullptr; }
__attribute__((visibility("default"))) int nvshmem_my_pe() { return g.pe; }
__attribute__((visibility("default"))) int nvshmem_n_pes() { return g.npes; }
__attribute__((visibility("default"))) void nvshmemx_vendor_get_version_info(int* a, int* b, int* c) {
  *a = 3;
  *b = 4;
  *c = 5;
}
__attribute__((visibility("default"))) int nvshmem_team_split_strided(int32_t, int start, int stride,
                                                                      int size, const void*, long,
                                                                      int32_t* team) {
  const bool member = g.pe >= start && (g.pe - start) % stride == 0 && (g.pe - start) / stride < size;
  *team = member ? 1 : -1;
  return 0;
}
__attribute__((visibility("default"))) void nvshmem_team_destroy(int32_t) {}
__attribute__((visibility("default"))) int nvshmem_team_translate_pe(int32_t, int pe, int32_t) { return pe; }
__attribute__((visibility("default"))) int nvshmem_team_n_pes(int32_t t) { return t == 1 ? 1 : -1; }
}
