// A persistent pool of worker threads for the CPU backend. Threads are started once per
// context and sleep between jobs, so a multiply pays a wake-up (microseconds), not a thread
// start. One job runs at a time; concurrent callers queue on run().
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace bsrmm::detail {

class ThreadPool {
 public:
  // `threads` workers in total, the calling thread included (threads - 1 are spawned). Where
  // the system refuses a thread (no address space for its stack, a thread limit), the workers
  // already started are stopped and joined and Error(OUT_OF_MEMORY) is thrown: nothing is left
  // waiting, and a later pool may try again.
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const noexcept { return static_cast<int>(workers_.size()) + 1; }

  // Calls task(i) once for every i in [0, count), spread over the pool and the calling thread,
  // and returns when all calls are done. The first exception a task throws is rethrown here
  // (the remaining tasks of that job are skipped).
  void run(int64_t count, const std::function<void(int64_t)>& task);

 private:
  void worker_loop();
  void drain();         // runs tasks of the current job until none are left
  void stop_workers();  // wakes every worker to exit and joins it

  std::vector<std::thread> workers_;
  std::mutex run_mutex_;  // one job at a time

  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  uint64_t generation_ = 0;
  bool stopping_ = false;
  int busy_workers_ = 0;

  // The current job; written under mutex_ before a generation starts.
  const std::function<void(int64_t)>* task_ = nullptr;
  int64_t count_ = 0;
  int64_t next_ = 0;  // next task index, taken under mutex_
  std::exception_ptr error_;
};

// More workers than this is a mistake (a negative number cast, a byte count), not a machine.
constexpr int max_threads = 1024;

// Hardware threads this process may use (its CPU affinity on Linux), at least 1.
int hardware_threads();

// The worker count of a context that sets none: BSRMM_NUM_THREADS, else OMP_NUM_THREADS (the
// first count of a nested list such as "4,2"), each only when a positive integer (at most
// max_threads), else hardware_threads(). So a limit set for the process's BLAS or OpenMP
// (threadpoolctl-style, or a launcher's) keeps bsrmm from oversubscribing the CPUs beside it.
int default_threads();

}  // namespace bsrmm::detail
