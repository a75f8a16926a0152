// The persistent pool: every index runs exactly once, jobs can be reused back to back, a
// task's exception reaches the caller, threads the system refuses are OUT_OF_MEMORY with nothing
// left waiting; and the default worker count follows the environment and the CPU affinity.
#include "../../src/common/error.hpp"
#include "../../src/common/thread_pool.hpp"
#include "../support/scoped_env.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <sched.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define BSRMM_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define BSRMM_TEST_SANITIZED 1
#endif
#endif

namespace bsrmm::test {
namespace {

TEST(ThreadPool, RunsEveryIndexExactlyOnce) {
  for (int threads : {1, 2, 5}) {
    detail::ThreadPool pool(threads);
    EXPECT_EQ(pool.size(), threads);
    for (int64_t count : {0, 1, 3, 100, 1000}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(count));
      pool.run(count, [&](int64_t i) { hits[static_cast<size_t>(i)]++; });
      for (int64_t i = 0; i < count; ++i) ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << i;
    }
  }
}

TEST(ThreadPool, ManyJobsBackToBack) {
  detail::ThreadPool pool(3);
  std::atomic<int64_t> total{0};
  for (int job = 0; job < 2000; ++job) pool.run(7, [&](int64_t i) { total += i; });
  EXPECT_EQ(total.load(), 2000 * 21);
}

TEST(ThreadPool, RethrowsATaskException) {
  detail::ThreadPool pool(3);
  EXPECT_THROW(pool.run(50, [](int64_t i) {
    if (i == 17) throw std::runtime_error("task 17");
  }),
               std::runtime_error);
  std::atomic<int> after{0};
  pool.run(10, [&](int64_t) { after++; });
  EXPECT_EQ(after.load(), 10) << "the pool keeps working after a failed job";
}

// Worker threads need address space for their stacks (8 MiB each by default): under a limit a
// pool of 64 gets a few and then is refused. In a child process (the limit is its own), which
// an alarm ends if anything hangs; its exit code says which check failed.
TEST(ThreadPool, RefusedThreadsAreOutOfMemoryAndLeaveNothingWaiting) {
#ifdef BSRMM_TEST_SANITIZED
  GTEST_SKIP() << "an address-space limit cannot be combined with a sanitizer's shadow memory; "
                  "the unsanitized build runs this";
#endif
  std::fflush(nullptr);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    alarm(60);
    auto check = [](bool ok, const char* what, int code) {
      if (!ok) {
        std::fprintf(stderr, "child: %s failed\n", what);
        std::_Exit(code);
      }
    };
    std::ifstream statm("/proc/self/statm");
    long long pages = 0;
    statm >> pages;
    rlimit limit{};
    getrlimit(RLIMIT_AS, &limit);
    const rlim_t unlimited = limit.rlim_cur;
    limit.rlim_cur = static_cast<rlim_t>(pages * sysconf(_SC_PAGESIZE) + (32ll << 20));
    check(setrlimit(RLIMIT_AS, &limit) == 0, "setrlimit", 10);
    std::string message;
    try {
      detail::ThreadPool refused(64);
    } catch (const detail::Error& error) {
      check(error.status() == BSRMM_STATUS_OUT_OF_MEMORY, "the status is OUT_OF_MEMORY", 11);
      message = error.what();
    }
    check(message.find("could not start CPU worker thread") != std::string::npos,
          "the pool throws, naming the thread it could not start", 12);
    std::atomic<int> ran{0};
    detail::ThreadPool serial(1);
    serial.run(10, [&](int64_t) { ran++; });
    check(ran.load() == 10, "a pool of the calling thread alone still runs", 13);
    limit.rlim_cur = unlimited;
    check(setrlimit(RLIMIT_AS, &limit) == 0, "setrlimit", 14);
    detail::ThreadPool wide(64);
    wide.run(1000, [&](int64_t) { ran++; });
    check(ran.load() == 1010, "with memory back, 64 threads run", 15);
    std::printf("[ refused  ] %s\n", message.c_str());
    std::fflush(nullptr);
    std::_Exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died from signal " << WTERMSIG(status)
                                 << " (SIGABRT: std::terminate; SIGALRM: it hung)";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "see the child's message above";
}

TEST(DefaultThreads, BsrmmNumThreadsThenOmpNumThreadsThenTheCpus) {
  ScopedEnv no_bsrmm("BSRMM_NUM_THREADS", std::nullopt);
  ScopedEnv no_omp("OMP_NUM_THREADS", std::nullopt);
  EXPECT_EQ(detail::default_threads(), detail::hardware_threads());
  {
    ScopedEnv omp("OMP_NUM_THREADS", "3");
    EXPECT_EQ(detail::default_threads(), 3);
    ScopedEnv bsrmm("BSRMM_NUM_THREADS", "5");
    EXPECT_EQ(detail::default_threads(), 5) << "bsrmm's own variable first";
  }
  {
    ScopedEnv nested("OMP_NUM_THREADS", "4,2");
    EXPECT_EQ(detail::default_threads(), 4) << "the outer level of a nested list";
  }
  {
    ScopedEnv huge("OMP_NUM_THREADS", "100000");
    EXPECT_EQ(detail::default_threads(), detail::max_threads);
  }
  for (const char* ignored : {"", "0", "-2", "four", "3x", "99999999999999999999"}) {
    ScopedEnv bad("BSRMM_NUM_THREADS", std::string(ignored));
    ScopedEnv omp("OMP_NUM_THREADS", "2");
    EXPECT_EQ(detail::default_threads(), 2) << "BSRMM_NUM_THREADS='" << ignored << "' is ignored";
  }
}

// sched_getaffinity(0) reads the calling thread's mask, so narrowing this thread's mask is
// what a taskset or a container's cpuset looks like to the library.
TEST(DefaultThreads, FollowTheCpuAffinity) {
  ScopedEnv no_bsrmm("BSRMM_NUM_THREADS", std::nullopt);
  ScopedEnv no_omp("OMP_NUM_THREADS", std::nullopt);
  cpu_set_t original;
  ASSERT_EQ(sched_getaffinity(0, sizeof(original), &original), 0);
  int first = 0;
  while (!CPU_ISSET(first, &original)) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
  const int narrowed = detail::default_threads();
  ASSERT_EQ(sched_setaffinity(0, sizeof(original), &original), 0);
  EXPECT_EQ(narrowed, 1);
  EXPECT_EQ(detail::default_threads(), CPU_COUNT(&original));
}

}  // namespace
}  // namespace bsrmm::test
