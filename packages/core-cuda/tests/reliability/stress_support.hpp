// What the stress tests share (CPU and CUDA alike): workers on their own threads, a start line
// that releases every thread at once (so lazily built state is raced for, not built by the first
// thread alone), a time budget that bounds each test, and one checked CPU multiply against the
// float64 reference of tests/support.
#pragma once

#include "support/dense_reference.hpp"
#include "support/random.hpp"

#include <bsrmm/bsrmm.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace bsrmm::test {

// Releases `parties` threads together; reusable round after round.
class StartLine {
 public:
  explicit StartLine(int parties) : parties_(parties) {}
  void arrive_and_wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    const uint64_t round = round_;
    if (++waiting_ == parties_) {
      waiting_ = 0;
      ++round_;
      released_.notify_all();
      return;
    }
    released_.wait(lock, [&] { return round_ != round; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable released_;
  const int parties_;
  int waiting_ = 0;
  uint64_t round_ = 0;
};

// Each stress test runs rounds until its budget is spent (at least `min_rounds`), so a slow
// sanitized build does fewer rounds instead of timing out.
class Budget {
 public:
  Budget(std::chrono::milliseconds limit, int min_rounds)
      : end_(std::chrono::steady_clock::now() + limit), min_rounds_(min_rounds) {}
  bool another(int rounds_done) const {
    return rounds_done < min_rounds_ || std::chrono::steady_clock::now() < end_;
  }
  // Runs round(0), round(1), ... while the budget lasts; returns how many ran.
  template <typename Round>
  int rounds(Round&& round) const {
    int done = 0;
    for (; another(done); ++done) round(done);
    return done;
  }

 private:
  std::chrono::steady_clock::time_point end_;
  int min_rounds_;
};

// A matrix on `ctx` from `host`'s arrays. bsrmm copies them; desc() writes narrow index copies
// into its object, so it runs on a copy and `host` may be shared by threads.
inline Matrix matrix_of(Context& ctx, const HostBsr& host, bsrmm_index_type index_type = BSRMM_INDEX_I32) {
  HostBsr arrays = host;
  const bsrmm_bsr_desc desc = arrays.desc(index_type);
  return Matrix(ctx, desc);
}

// Runs worker(0) ... worker(threads - 1), each on a thread of its own, and waits for all. A
// worker's locals (its context, its stream) live on its thread for as long as it runs.
template <typename Worker>
void on_threads(int threads, Worker&& worker) {
  std::vector<std::thread> running;
  for (int w = 0; w < threads; ++w) running.emplace_back([&worker, w] { worker(w); });
  for (std::thread& t : running) t.join();
}

// Multiplies `a` (whose caller-side arrays are `host`) by a fresh random B on `ctx` with a
// NaN-poisoned C, and checks every element and C's padding. Safe to call from many threads: a
// bsrmm error becomes a test failure, never an exception escaping a thread.
inline void checked_multiply(Context& ctx, const Matrix& a, const HostBsr& host, bsrmm_op op,
                             int64_t n, uint64_t seed, const std::string& what) {
  Random rng(seed);
  const bool t = op == BSRMM_OP_TRANSPOSE;
  const int64_t m = t ? host.cols : host.rows;
  const int64_t k = t ? host.rows : host.cols;
  const bsrmm_layout b_layout = seed % 2 ? BSRMM_LAYOUT_ROW_MAJOR : BSRMM_LAYOUT_COL_MAJOR;
  const bsrmm_layout c_layout = seed % 3 ? BSRMM_LAYOUT_ROW_MAJOR : BSRMM_LAYOUT_COL_MAJOR;
  HostDense b(k, n, host.dtype, b_layout, static_cast<int64_t>(seed % 3));
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < n; ++j) b.set(i, j, round_to(host.dtype, rng.uniform(-1, 1)));
  HostDense c(m, n, host.dtype, c_layout, 1);
  const HostDense c_before = c;
  bsrmm_matmul_options options = matmul_options();
  options.op_a = op;
  options.alpha = 0.75;
  bsrmm_dense bd = b.desc();
  bsrmm_dense cd = c.desc();
  try {
    matmul(ctx, a, bd, cd, options);
  } catch (const Error& error) {
    ADD_FAILURE() << what << ": " << error.code() << ": " << error.what();
    return;
  }
  const Expected expected = reference_matmul(host.to_dense(), host.rows, host.cols, op, b, c_before,
                                             options.alpha, 0.0, nullptr, BSRMM_ACTIVATION_NONE);
  expect_matches(c, expected, what);
  EXPECT_TRUE(c.padding_untouched()) << what << ": C's padding was written";
}

// What every fault test ends with: after the fault, `ctx` still builds a matrix from fresh random
// arrays and multiplies it correctly, both ways round (a rectangular A with rectangular blocks).
inline void expect_still_works(Context& ctx, const std::string& after) {
  Random rng(21);
  const HostBsr host = random_bsr(rng, 5, 4, 3, 2, 0.5, BSRMM_DTYPE_F32);
  const Matrix a = matrix_of(ctx, host);
  checked_multiply(ctx, a, host, BSRMM_OP_NONE, 7, 3, "multiply after " + after);
  checked_multiply(ctx, a, host, BSRMM_OP_TRANSPOSE, 7, 4, "A^T multiply after " + after);
}

}  // namespace bsrmm::test
