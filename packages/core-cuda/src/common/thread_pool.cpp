#include "thread_pool.hpp"

#if defined(__linux__)
#include <sched.h>
#endif

namespace bsrmm::detail {

int hardware_threads() {
#if defined(__linux__)
  // The CPUs this process may run on (a container's cpuset, taskset), not every CPU of the host
  // that hardware_concurrency() may report: more workers than CPUs only adds switching.
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0) {
    const int n = CPU_COUNT(&allowed);
    if (n > 0) return n;
  }
#endif
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

ThreadPool::ThreadPool(int threads) {
  const int spawned = threads > 1 ? threads - 1 : 0;
  workers_.reserve(static_cast<size_t>(spawned));
  for (int i = 0; i < spawned; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

void ThreadPool::drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (next_ < count_) {
    const int64_t index = next_++;
    lock.unlock();
    try {
      (*task_)(index);
    } catch (...) {
      lock.lock();
      if (!error_) error_ = std::current_exception();
      next_ = count_;  // skip what is left of a failed job
      continue;
    }
    lock.lock();
  }
}

void ThreadPool::worker_loop() {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
      ++busy_workers_;
    }
    drain();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      --busy_workers_;
    }
    done_.notify_all();
  }
}

void ThreadPool::run(int64_t count, const std::function<void(int64_t)>& task) {
  if (count <= 0) return;
  std::lock_guard<std::mutex> job(run_mutex_);
  if (workers_.empty() || count == 1) {
    for (int64_t i = 0; i < count; ++i) task(i);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    task_ = &task;
    count_ = count;
    next_ = 0;
    error_ = nullptr;
    ++generation_;
  }
  wake_.notify_all();
  drain();
  std::exception_ptr error;
  {
    // Workers that woke for this generation finish before the job (and `task`) goes away;
    // a worker that wakes late finds no index left and does nothing.
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return busy_workers_ == 0; });
    error = error_;
    task_ = nullptr;
    count_ = 0;
    next_ = 0;
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace bsrmm::detail
