// Our own minimal declarations of the NCCL C API, written from the facts of NCCL 2.28's nccl.h
// (docs/nccl.md): libsymmem is built without nccl.h and never links libnccl; the entry points are
// resolved with dlsym from whichever libnccl.so.2 symmem_nccl_load opened. Only what symmem calls is
// declared. Names carry an nccl_ prefix of our own so they can never clash with a real nccl.h that
// some other translation unit (the lead's symmetric backend) might include.
#pragma once
#include <climits>
#include <cstddef>
#include <cstdint>

namespace symmem::nccl {

// ncclComm_t: an opaque pointer.
using nccl_comm_t = struct nccl_comm_opaque*;

// ncclResult_t (values fixed since NCCL 2.x; ncclInProgress = 7 since 2.14).
enum nccl_result : int {
  kSuccess = 0,
  kUnhandledCudaError = 1,
  kSystemError = 2,
  kInternalError = 3,
  kInvalidArgument = 4,
  kInvalidUsage = 5,
  kRemoteError = 6,
  kInProgress = 7,
};

// ncclWindow_t: an opaque pointer (NCCL 2.27+). NULL after a successful registration means the
// communicator has no symmetric-memory support (NCCL's documented behaviour, not an error).
using nccl_window_t = struct nccl_window_opaque*;
constexpr int kWinCollSymmetric = 0x01;       // NCCL_WIN_COLL_SYMMETRIC
constexpr uint64_t kWinRequiredAlignment = 4096;  // NCCL_WIN_REQUIRED_ALIGNMENT

// ncclUniqueId: 128 opaque bytes, passed BY VALUE to ncclCommInitRankConfig.
constexpr int kUniqueIdBytes = 128;
struct nccl_unique_id {
  char internal[kUniqueIdBytes];
};

// ncclDataType_t and ncclRedOp_t are int-sized enums; symmem passes NCCL's own values through.
enum nccl_dtype : int {
  kInt8 = 0, kUint8 = 1, kInt32 = 2, kUint32 = 3, kInt64 = 4, kUint64 = 5,
  kFloat16 = 6, kFloat32 = 7, kFloat64 = 8, kBfloat16 = 9,
};
enum nccl_op : int { kSum = 0, kProd = 1, kMax = 2, kMin = 3, kAvg = 4 };

// ncclConfig_t as laid out in NCCL 2.28 (struct ncclConfig_v22800). NCCL reads `size` first and
// copies min(size, its own sizeof) bytes, then resets to defaults every field that `version` says the
// caller did not know about. So this exact layout with version 22800 is understood by 2.28 and by any
// later NCCL (fields added after 2.28 keep their defaults), and by earlier ones down to 2.14 (they copy
// only the prefix they know). Every field we do not set must be NCCL_CONFIG_UNDEF_INT (INT_MIN) or
// NULL, as NCCL_CONFIG_INITIALIZER would leave it.
constexpr unsigned kConfigMagic = 0xcafebeefu;
constexpr unsigned kConfigLayoutVersion = 22800;  // NCCL_VERSION(2, 28, 0)
constexpr int kConfigUndefInt = INT_MIN;
struct nccl_config {
  size_t size;
  unsigned int magic;
  unsigned int version;
  int blocking;
  int cgaClusterSize;
  int minCTAs;
  int maxCTAs;
  const char* netName;
  int splitShare;
  int trafficClass;
  const char* commName;
  int collnetEnable;
  int CTAPolicy;
  int shrinkShare;
  int nvlsCTAs;
  int nChannelsPerNetPeer;
  int nvlinkCentricSched;
};
static_assert(sizeof(nccl_config) == 80, "ncclConfig_v22800 is 80 bytes on LP64");
static_assert(offsetof(nccl_config, blocking) == 16, "blocking follows the 16-byte header");
static_assert(offsetof(nccl_config, commName) == 48, "commName offset of ncclConfig_v22800");

inline nccl_config default_config() {
  nccl_config c;
  c.size = sizeof(nccl_config);
  c.magic = kConfigMagic;
  c.version = kConfigLayoutVersion;
  c.blocking = kConfigUndefInt;
  c.cgaClusterSize = kConfigUndefInt;
  c.minCTAs = kConfigUndefInt;
  c.maxCTAs = kConfigUndefInt;
  c.netName = nullptr;
  c.splitShare = kConfigUndefInt;
  c.trafficClass = kConfigUndefInt;
  c.commName = nullptr;
  c.collnetEnable = kConfigUndefInt;
  c.CTAPolicy = kConfigUndefInt;
  c.shrinkShare = kConfigUndefInt;
  c.nvlsCTAs = kConfigUndefInt;
  c.nChannelsPerNetPeer = kConfigUndefInt;
  c.nvlinkCentricSched = kConfigUndefInt;
  return c;
}

// The entry points, resolved by symmem_nccl_load. Streams are cudaStream_t, passed as void*.
struct Api {
  int (*GetVersion)(int* version) = nullptr;
  int (*GetUniqueId)(nccl_unique_id* id) = nullptr;
  int (*CommInitRankConfig)(nccl_comm_t* comm, int nranks, nccl_unique_id id, int rank,
                            nccl_config* config) = nullptr;
  int (*CommFinalize)(nccl_comm_t comm) = nullptr;
  int (*CommDestroy)(nccl_comm_t comm) = nullptr;
  int (*CommAbort)(nccl_comm_t comm) = nullptr;
  int (*CommGetAsyncError)(nccl_comm_t comm, int* async_error) = nullptr;
  const char* (*GetErrorString)(int result) = nullptr;
  const char* (*GetLastError)(nccl_comm_t comm) = nullptr;
  int (*AllReduce)(const void* send, void* recv, size_t count, int dtype, int op,
                   nccl_comm_t comm, void* stream) = nullptr;
  int (*Reduce)(const void* send, void* recv, size_t count, int dtype, int op, int root,
                nccl_comm_t comm, void* stream) = nullptr;
  int (*Broadcast)(const void* send, void* recv, size_t count, int dtype, int root,
                   nccl_comm_t comm, void* stream) = nullptr;
  int (*AllGather)(const void* send, void* recv, size_t send_count, int dtype, nccl_comm_t comm,
                   void* stream) = nullptr;
  int (*ReduceScatter)(const void* send, void* recv, size_t recv_count, int dtype, int op,
                       nccl_comm_t comm, void* stream) = nullptr;
  // Optional (NCCL 2.18+): without it communicators stay non-blocking end to end (nccl_comm.cpp).
  int (*CommSplit)(nccl_comm_t comm, int color, int key, nccl_comm_t* newcomm,
                   nccl_config* config) = nullptr;
  int (*GroupStart)() = nullptr;
  int (*GroupEnd)() = nullptr;
  // Optional: resolved when the library has them, else left null (the symmetric backend then says
  // which NCCL it needs). ncclMemAlloc/Free since 2.19, the window calls since 2.27.
  int (*MemAlloc)(void** ptr, size_t size) = nullptr;
  int (*MemFree)(void* ptr) = nullptr;
  int (*CommWindowRegister)(nccl_comm_t comm, void* buff, size_t size, nccl_window_t* win,
                            int flags) = nullptr;
  int (*CommWindowDeregister)(nccl_comm_t comm, nccl_window_t win) = nullptr;
};

// The loaded library's table, or nullptr before a successful symmem_nccl_load.
const Api* api();
// "ncclInvalidUsage (invalid usage)": the enum name and NCCL's own text when the library is loaded.
const char* result_name(int r);

}  // namespace symmem::nccl
