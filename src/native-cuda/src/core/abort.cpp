#include "core/abort.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <vector>

#include "core/status.h"

namespace symmem {
namespace {

std::atomic<bool> g_aborted{false};
std::atomic<uint64_t> g_epoch{0};  // aborts so far (each one from not aborted to aborted)
// Guards the reason and the registered words; never taken on a wait's hot path.
std::mutex g_mutex;
std::string g_reason;
std::vector<volatile uint32_t*> g_words;
std::vector<AbortHook> g_hooks;

}  // namespace

bool aborted() { return g_aborted.load(std::memory_order_relaxed); }

uint64_t abort_epoch() { return g_epoch.load(std::memory_order_relaxed); }

bool aborted_since(uint64_t epoch) { return aborted() || abort_epoch() != epoch; }

std::string abort_reason() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_reason;
}

symmem_status fail_aborted(const std::string& what) {
  return fail(SYMMEM_ERR_ABORTED, "%s: aborted: %s", what.c_str(), abort_reason().c_str());
}

symmem_status refuse_if_aborted(const char* call) {
  if (!aborted()) return SYMMEM_OK;
  return fail_aborted(std::string(call) + ", not started");
}

void register_abort_word(volatile uint32_t* word) {
  std::lock_guard<std::mutex> lock(g_mutex);
  *word = g_aborted.load() ? 1u : 0u;
  g_words.push_back(word);
}

void unregister_abort_word(volatile uint32_t* word) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_words.erase(std::remove(g_words.begin(), g_words.end(), word), g_words.end());
}

void register_abort_hook(AbortHook hook) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (std::find(g_hooks.begin(), g_hooks.end(), hook) == g_hooks.end()) g_hooks.push_back(hook);
}

}  // namespace symmem

extern "C" {

symmem_status symmem_abort(const char* reason) {
  if (reason == nullptr || reason[0] == '\0')
    return symmem::fail(SYMMEM_ERR_INVALID_ARGUMENT, "symmem_abort: reason must be a non-empty string");
  std::lock_guard<std::mutex> lock(symmem::g_mutex);
  if (!symmem::g_aborted.load()) {
    symmem::g_reason = reason;  // the first reason is the one that counts
    symmem::g_epoch.fetch_add(1);
  }
  symmem::g_aborted.store(true);
  for (volatile uint32_t* w : symmem::g_words) *w = 1u;
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  for (symmem::AbortHook hook : symmem::g_hooks) hook(symmem::g_reason.c_str());
  return SYMMEM_OK;
}

void symmem_abort_reset(void) {
  std::lock_guard<std::mutex> lock(symmem::g_mutex);
  symmem::g_aborted.store(false);
  for (volatile uint32_t* w : symmem::g_words) *w = 0u;
}

int symmem_aborted(void) { return symmem::aborted() ? 1 : 0; }

}  // extern "C"
