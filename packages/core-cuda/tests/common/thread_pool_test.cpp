// The persistent pool: every index runs exactly once, jobs can be reused back to back, and a
// task's exception reaches the caller.
#include "../../src/common/thread_pool.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <vector>

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

}  // namespace
}  // namespace bsrmm::test
