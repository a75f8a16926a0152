// A context's CPU execution state: its worker pools and its workspace. The CPU multiplies run
// through one context take `mutex` and use them one at a time (src/api/handles.hpp).
#pragma once

#include "../common/thread_pool.hpp"
#include "../device/buffer.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

// In bsrmm::detail, not bsrmm::cpu: the context handle (src/api/handles.hpp) holds one, and code
// that sees the handle may also see bsrmm.hpp, whose bsrmm::cpu() names the CPU device.
namespace bsrmm::detail {

struct CpuWorkers {
  // The worker count that threads = 0 stands for (thread_pool.hpp: default_threads()), read
  // once, as OpenMP reads OMP_NUM_THREADS once: a multiply reads no environment.
  const int32_t default_threads = bsrmm::detail::default_threads();
  std::mutex mutex;
  // Host memory the variants grow as needed and keep for the next call.
  Buffer workspace;
  // An fp8 B widened to f32 for the fast variants (fp8_widen.hpp), kept likewise.
  Buffer fp8_b;

  // The pool of `threads` workers (0: default_threads); the caller holds `mutex`. Pools of every
  // size a tuned choice asked for are kept: problems tuned to different thread counts alternate
  // without restarting threads. A pool whose threads the system refuses throws OUT_OF_MEMORY
  // and stays unbuilt, so a later call tries again.
  ThreadPool& pool(int32_t threads) {
    const int size = threads > 0 ? threads : default_threads;
    std::unique_ptr<ThreadPool>& pool = pools_[size];
    if (!pool) pool = std::make_unique<ThreadPool>(size);
    return *pool;
  }

 private:
  std::map<int, std::unique_ptr<ThreadPool>> pools_;
};

}  // namespace bsrmm::detail
