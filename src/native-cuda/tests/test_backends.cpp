// Backend selection: host always works; cuda reports honestly what this machine and build can do.
#include "test_util.h"

int main() {
  symmem_backend* be = nullptr;
  symmem_backend_info info;

  CHECK_OK(symmem_backend_open("host", 123, &be));  // device is ignored for host
  CHECK_OK(symmem_backend_get_info(be, &info));
  CHECK(std::strcmp(info.name, "host") == 0);
  CHECK(std::strcmp(info.device_name, "cpu") == 0);
  CHECK(info.device == -1);
  CHECK_OK(symmem_backend_close(be));

  CHECK_STATUS(symmem_backend_open("nope", 0, &be), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("'nope'");
  CHECK_ERROR_HAS("\"host\", \"cuda\", \"nvshmem\" and \"nccl\"");
  CHECK_STATUS(symmem_backend_open("nccl", 0, &be), SYMMEM_ERR_STATE);
  CHECK_ERROR_HAS("NCCL is not loaded");
  CHECK(be == nullptr);

  int count = -1;
  CHECK_OK(symmem_cuda_device_count(&count));
  CHECK(count >= 0);
  if (!symmem_built_with_cuda()) {
    CHECK(count == 0);
    CHECK_STATUS(symmem_backend_open("cuda", 0, &be), SYMMEM_ERR_UNSUPPORTED);
    CHECK_ERROR_HAS("built without CUDA");
    std::printf("test_backends: built without CUDA: cuda -> UNSUPPORTED: OK\n");
  } else if (count == 0) {
    CHECK_STATUS(symmem_backend_open("cuda", 0, &be), SYMMEM_ERR_NO_DEVICE);
    CHECK_ERROR_HAS("no CUDA device: ");
    std::printf("test_backends: built with CUDA, no device here (\"%s\"): OK\n", symmem_last_error());
  } else {
    CHECK_OK(symmem_backend_open("cuda", 0, &be));
    CHECK_OK(symmem_backend_get_info(be, &info));
    CHECK(std::strcmp(info.name, "cuda") == 0);
    CHECK(info.device_name[0] != '\0');
    CHECK(info.device == 0 && info.device_count == count);
    symmem_buffer* b = nullptr;
    CHECK_OK(symmem_buffer_alloc(be, 4096, &b));  // VMM allocation (test_cuda_buffer tests more)
    CHECK(symmem_buffer_ptr(b, SYMMEM_RANK_SELF) != nullptr);
    CHECK_OK(symmem_buffer_free(b));
    CHECK_OK(symmem_backend_close(be));
    CHECK_STATUS(symmem_backend_open("cuda", count, &be), SYMMEM_ERR_INVALID_ARGUMENT);
    CHECK_ERROR_HAS("device");
    std::printf("test_backends: %d CUDA device(s), device 0 is \"%s\": OK\n", count, info.device_name);
  }
  return 0;
}
