#include "thread_pool.hpp"

#include "error.hpp"

#include <cerrno>
#include <cstdlib>

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

namespace {

// The count `name` holds, or 0 when it is unset or not a positive integer.
int threads_from_environment(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr) return 0;
  char* end = nullptr;
  errno = 0;
  const long count = std::strtol(text, &end, 10);
  if (end == text || errno != 0 || count <= 0 || (*end != '\0' && *end != ',')) return 0;
  return count > max_threads ? max_threads : static_cast<int>(count);
}

}  // namespace

int default_threads() {
  for (const char* name : {"BSRMM_NUM_THREADS", "OMP_NUM_THREADS"}) {
    if (const int count = threads_from_environment(name)) return count;
  }
  return hardware_threads();
}

ThreadPool::ThreadPool(int threads) {
  const int spawned = threads > 1 ? threads - 1 : 0;
  try {
    workers_.reserve(static_cast<size_t>(spawned));
    for (int i = 0; i < spawned; ++i) workers_.emplace_back([this] { worker_loop(); });
  } catch (const std::exception& refused) {  // std::system_error (EAGAIN) or std::bad_alloc
    // A constructor that throws runs no destructor: the started workers must be joined here,
    // or destroying them (joinable) would terminate the process, and destroying the condition
    // variables they wait on would hang it.
    const size_t started = workers_.size();
    stop_workers();
    detail::fail(BSRMM_STATUS_OUT_OF_MEMORY, "could not start CPU worker thread ", started + 1,
                 " of ", spawned, " (", refused.what(),
                 "); free memory or ask for fewer threads (bsrmm_context_set_num_threads)");
  }
}

ThreadPool::~ThreadPool() { stop_workers(); }

void ThreadPool::stop_workers() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& worker : workers_) worker.join();
  workers_.clear();
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
