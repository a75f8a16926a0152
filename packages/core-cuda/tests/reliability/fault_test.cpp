// Faults the library must survive with a clear status, after which it keeps working:
//   - no GPU, no driver, or a CUDA-less build: NO_DEVICE with the reason, and the CPU serves;
//   - a device ordinal that does not exist: NO_DEVICE naming it;
//   - host memory running out (an address-space limit in a child process) during matrix
//     creation and while a multiply builds the matrix's lazy plan (A^T): OUT_OF_MEMORY, then,
//     with memory back, the same matrix multiplies correctly;
//   - worker threads the system refuses (no address space for their stacks): OUT_OF_MEMORY,
//     never an abort or a hang, and the same context multiplies with fewer threads or later;
//   - a multiply that tunes without memory to measure runs untuned (the tuner's scratch C is
//     released before the run asks for its own workspace);
//   - context creation, multiplies (AUTO, through the call that tunes) and bsrmm_tune under
//     address-space limits from tight to roomy: each succeeds or says OUT_OF_MEMORY, and once
//     the limit is lifted the next call succeeds with the right C.
// GPU out-of-memory lives in cuda_reliability_test.cpp (CUDA builds).
#include "stress_support.hpp"
#include "support/gpu_presence.hpp"

#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define BSRMM_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define BSRMM_TEST_SANITIZED 1
#endif
#endif

namespace bsrmm::test {
namespace {

bool starts_with(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

void cpu_still_works(const char* after) {
  Context ctx;
  ctx.set_tuning_mode(BSRMM_TUNING_OFF);
  expect_still_works(ctx, after);
}

TEST(Faults, WithoutAGpuCudaCallsSayNoDeviceAndWhyAndTheCpuWorks) {
  if (gpu_available()) GTEST_SKIP() << "a CUDA device is present; NonexistentDeviceOrdinal covers NO_DEVICE here";
  int32_t count = -1;
  EXPECT_EQ(bsrmm_cuda_device_count(&count), BSRMM_STATUS_NO_DEVICE);
  const std::string reason = bsrmm_last_error();
  EXPECT_EQ(count, 0);
  EXPECT_GT(reason.size(), std::string("bsrmm_cuda_device_count: ").size()) << reason;
  std::printf("[ fault    ] CUDA compiled: %d; no device because: %s\n", bsrmm_cuda_compiled(), reason.c_str());

  bsrmm_context_t ctx = reinterpret_cast<bsrmm_context_t>(&count);
  EXPECT_EQ(bsrmm_context_create(bsrmm_device{BSRMM_DEVICE_CUDA, 0}, &ctx), BSRMM_STATUS_NO_DEVICE);
  EXPECT_EQ(ctx, nullptr);
  const std::string message = bsrmm_last_error();
  EXPECT_TRUE(starts_with(message, "bsrmm_context_create: ")) << message;
  EXPECT_GT(message.size(), std::string("bsrmm_context_create: ").size() + 10) << message;

  // A CPU context asked for a CUDA description, and a CUDA operand, says the same.
  Context cpu;
  std::vector<int32_t> row_ptr{0, 0};
  const bsrmm_bsr_desc desc{1, 1, 1, 1, 0, row_ptr.data(), nullptr, BSRMM_INDEX_I32, nullptr,
                            BSRMM_DTYPE_F32, bsrmm_device{BSRMM_DEVICE_CUDA, 0}};
  bsrmm_matrix_t matrix = nullptr;
  EXPECT_EQ(bsrmm_matrix_create(cpu.get(), &desc, 0, &matrix), BSRMM_STATUS_NO_DEVICE) << bsrmm_last_error();
  EXPECT_EQ(matrix, nullptr);

  cpu.set_tuning_mode(BSRMM_TUNING_OFF);
  expect_still_works(cpu, "NO_DEVICE on the same context");
  cpu_still_works("NO_DEVICE");
}

TEST(Faults, NonexistentDeviceOrdinalIsNoDevice) {
  bsrmm_context_t ctx = nullptr;
  EXPECT_EQ(bsrmm_context_create(bsrmm_device{BSRMM_DEVICE_CUDA, 4096}, &ctx), BSRMM_STATUS_NO_DEVICE);
  EXPECT_EQ(ctx, nullptr);
  const std::string message = bsrmm_last_error();
  if (gpu_available()) {
    EXPECT_NE(message.find("4096"), std::string::npos) << message;
  }
  cpu_still_works("a nonexistent device");
}

#ifndef BSRMM_TEST_SANITIZED

// Current address-space size of this process (bytes), from /proc.
long long address_space_bytes() {
  std::ifstream statm("/proc/self/statm");
  long long pages = 0;
  statm >> pages;
  return pages * sysconf(_SC_PAGESIZE);
}

void set_address_space_limit(long long bytes) {
  rlimit limit{};
  getrlimit(RLIMIT_AS, &limit);
  limit.rlim_cur = bytes < 0 ? limit.rlim_max : static_cast<rlim_t>(bytes);
  ASSERT_EQ(setrlimit(RLIMIT_AS, &limit), 0) << "setrlimit failed";
}

// Runs one test of this binary in a fresh process (fork + exec of /proc/self/exe): it lowers its
// own memory limit, and no heap left behind by earlier tests may serve the allocations under
// test (free heap memory is already mapped, so an address-space limit would not refuse it).
void in_fresh_process(const char* test) {
  std::fflush(nullptr);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0) << "fork failed";
  if (pid == 0) {
    setenv("BSRMM_TEST_OOM_CHILD", "1", 1);
    alarm(120);  // kept across exec: a child that hangs dies of SIGALRM and fails its test
    const std::string filter = std::string("--gtest_filter=") + test;
    execl("/proc/self/exe", "bsrmm_reliability_tests", filter.c_str(), static_cast<char*>(nullptr));
    std::_Exit(127);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << test << " died from signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  EXPECT_EQ(WEXITSTATUS(status), 0) << test << " failed in its own process (its output is above)";
}

#define ONLY_IN_THE_CHILD()                                                                   \
  if (std::getenv("BSRMM_TEST_OOM_CHILD") == nullptr)                                         \
  GTEST_SKIP() << "runs in a fresh process started by its Faults.* test"

TEST(Faults, HostOutOfMemoryWhileCreatingIsReportedAndRecovered) {
  in_fresh_process("FaultsInAFreshProcess.CreateOutOfMemory");
  cpu_still_works("a child ran out of memory");
}

TEST(Faults, HostOutOfMemoryInAMultiplyLeavesTheMatrixUsable) {
  in_fresh_process("FaultsInAFreshProcess.MultiplyOutOfMemory");
}

TEST(FaultsInAFreshProcess, CreateOutOfMemory) {
  ONLY_IN_THE_CHILD();
  // 256 MiB of caller values the library must copy: reserved, never touched before the copy.
  const size_t bytes = size_t{256} << 20;
  void* values = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  ASSERT_NE(values, MAP_FAILED);
  const int32_t blocks = static_cast<int32_t>(bytes / (256 * 256 * sizeof(float)));  // 1024
  std::vector<int32_t> row_ptr{0, blocks}, col_idx(static_cast<size_t>(blocks));
  for (int32_t i = 0; i < blocks; ++i) col_idx[static_cast<size_t>(i)] = i;
  const bsrmm_bsr_desc desc{256, int64_t{blocks} * 256, 256, 256, blocks, row_ptr.data(), col_idx.data(),
                            BSRMM_INDEX_I32, values, BSRMM_DTYPE_F32, bsrmm_device{BSRMM_DEVICE_CPU, 0}};
  Context ctx;

  set_address_space_limit(address_space_bytes() + (int64_t{64} << 20));
  bsrmm_matrix_t matrix = nullptr;
  const bsrmm_status status = bsrmm_matrix_create(ctx.get(), &desc, 0, &matrix);
  const std::string message = bsrmm_last_error();
  set_address_space_limit(-1);
  EXPECT_EQ(status, BSRMM_STATUS_OUT_OF_MEMORY) << message;
  EXPECT_EQ(matrix, nullptr);
  EXPECT_NE(message.find("memory"), std::string::npos) << message;
  std::printf("[ fault    ] as expected: %s\n", message.c_str());

  ASSERT_EQ(bsrmm_matrix_create(ctx.get(), &desc, 0, &matrix), BSRMM_STATUS_SUCCESS) << bsrmm_last_error();
  bsrmm_matrix_destroy(matrix);
  munmap(values, bytes);
}

TEST(FaultsInAFreshProcess, MultiplyOutOfMemory) {
  ONLY_IN_THE_CHILD();
  // The first A^T multiply builds A^T (as large as A's 16 MiB of values) in the matrix's plan.
  Random rng(8);
  const HostBsr host = random_bsr(rng, 32, 32, 64, 64, 1.0, BSRMM_DTYPE_F32);
  Context ctx;
  ctx.set_tuning_mode(BSRMM_TUNING_OFF);
  ctx.set_num_threads(1);
  const Matrix a = matrix_of(ctx, host);
  HostDense b(host.rows, 8, BSRMM_DTYPE_F32), c(host.cols, 8, BSRMM_DTYPE_F32);
  for (int64_t i = 0; i < host.rows; ++i)
    for (int64_t j = 0; j < 8; ++j) b.set(i, j, rng.uniform(-1, 1));
  const HostDense c_before = c;
  bsrmm_dense bd = b.desc(), cd = c.desc();
  bsrmm_matmul_options options = matmul_options();
  options.op_a = BSRMM_OP_TRANSPOSE;
  // Room for everything this multiply touches besides A^T, then the limit.
  set_address_space_limit(address_space_bytes() + (int64_t{4} << 20));
  const bsrmm_status status = bsrmm_matmul(ctx.get(), a.get(), &bd, &cd, &options);
  const std::string message = bsrmm_last_error();
  set_address_space_limit(-1);
  ASSERT_EQ(status, BSRMM_STATUS_OUT_OF_MEMORY) << message;
  std::printf("[ fault    ] as expected: %s\n", message.c_str());

  ASSERT_EQ(bsrmm_matmul(ctx.get(), a.get(), &bd, &cd, &options), BSRMM_STATUS_SUCCESS) << bsrmm_last_error();
  expect_matches(c, reference_matmul(host.to_dense(), host.rows, host.cols, BSRMM_OP_TRANSPOSE, b, c_before, 1.0,
                                     0.0, nullptr, BSRMM_ACTIVATION_NONE),
                 "A^T multiply after running out of memory");
}

// A status a call under an address-space limit may give: SUCCESS or OUT_OF_MEMORY; anything
// else, INTERNAL included, is a bug.
bsrmm_status expect_success_or_out_of_memory(bsrmm_status status, const std::string& what) {
  EXPECT_TRUE(status == BSRMM_STATUS_SUCCESS || status == BSRMM_STATUS_OUT_OF_MEMORY)
      << what << ": status " << status << ": " << bsrmm_last_error();
  return status;
}

TEST(Faults, RefusedWorkerThreadsAreOutOfMemoryAndRecovered) {
  in_fresh_process("FaultsInAFreshProcess.WorkerThreadsRefused");
}

TEST(Faults, TuningWithoutMemoryToMeasureRunsUntuned) {
  in_fresh_process("FaultsInAFreshProcess.TuningWithoutMemory");
}

TEST(Faults, EveryCallUnderAnAddressSpaceLimitSucceedsOrSaysOutOfMemory) {
  in_fresh_process("FaultsInAFreshProcess.EveryCallUnderALimit");
}

TEST(FaultsInAFreshProcess, WorkerThreadsRefused) {
  ONLY_IN_THE_CHILD();
  // 63 workers need 63 stacks (8 MiB of address space each by default): more than the limit.
  Random rng(9);
  const HostBsr host = random_bsr(rng, 6, 5, 4, 4, 0.6, BSRMM_DTYPE_F32);
  Context ctx;
  ctx.set_tuning_mode(BSRMM_TUNING_OFF);
  ctx.set_num_threads(64);
  const Matrix a = matrix_of(ctx, host);
  HostDense b(host.cols, 8, BSRMM_DTYPE_F32), c(host.rows, 8, BSRMM_DTYPE_F32);
  for (int64_t i = 0; i < host.cols; ++i)
    for (int64_t j = 0; j < 8; ++j) b.set(i, j, rng.uniform(-1, 1));
  bsrmm_dense bd = b.desc(), cd = c.desc();

  set_address_space_limit(address_space_bytes() + (int64_t{64} << 20));
  const bsrmm_status status =
      expect_success_or_out_of_memory(bsrmm_matmul(ctx.get(), a.get(), &bd, &cd, nullptr), "64 threads");
  const std::string message = bsrmm_last_error();
  ctx.set_num_threads(1);
  const bsrmm_status serial = bsrmm_matmul(ctx.get(), a.get(), &bd, &cd, nullptr);
  const std::string serial_message = bsrmm_last_error();
  set_address_space_limit(-1);
  EXPECT_EQ(status, BSRMM_STATUS_OUT_OF_MEMORY) << "64 stacks fit in 64 MiB?";
  EXPECT_NE(message.find("could not start CPU worker thread"), std::string::npos) << message;
  std::printf("[ fault    ] as expected: %s\n", message.c_str());
  EXPECT_EQ(serial, BSRMM_STATUS_SUCCESS) << "one thread, under the same limit: " << serial_message;

  ctx.set_num_threads(64);
  expect_still_works(ctx, "worker threads were refused");
}

// B and C of 40 MiB each (the scratch C of measuring is another 40, the packed B of the CPU
// kernel's workspace another) under a limit of 60 MiB more than the process holds: the first
// measuring run gets the scratch C but not the workspace. The multiply must then run untuned,
// which fits once the scratch C is given back.
TEST(FaultsInAFreshProcess, TuningWithoutMemory) {
  ONLY_IN_THE_CHILD();
  constexpr int32_t side = 16;
  constexpr int64_t blocks = 10240, n = 64;
  // Block diagonal plus one empty block column, and B column-major: the CPU kernel packs B
  // (it reads a row-major B in place only under a matrix that uses every block column).
  HostBsr host;
  host.rows = blocks * side;
  host.cols = (blocks + 1) * side;
  host.block_height = host.block_width = side;
  host.values.resize(static_cast<size_t>(blocks * side * side) * sizeof(float));
  Random rng(12);
  for (int64_t r = 0; r < blocks; ++r) {
    host.col_idx.push_back(r);
    host.row_ptr.push_back(r + 1);
    for (int32_t i = 0; i < side; ++i)
      for (int32_t j = 0; j < side; ++j) host.set_value(r, i, j, round_to(BSRMM_DTYPE_F32, rng.uniform(-1, 1)));
  }
  HostDense b(host.cols, n, BSRMM_DTYPE_F32, BSRMM_LAYOUT_COL_MAJOR), c(host.rows, n, BSRMM_DTYPE_F32);
  for (int64_t i = 0; i < host.cols; ++i)
    for (int64_t j = 0; j < n; ++j) b.set(i, j, round_to(BSRMM_DTYPE_F32, rng.uniform(-1, 1)));
  bsrmm_dense bd = b.desc(), cd = c.desc();

  Context ctx;
  ctx.set_tuning_mode(BSRMM_TUNING_FORCE);
  const Matrix a = matrix_of(ctx, host);
  // Before the limit, the worker pools of every thread count measuring tries (a small problem
  // tuned on this context). Nothing large is freed before the limit: the heap would keep it
  // mapped, and measuring could use it without asking for more.
  expect_still_works(ctx, "tuning a small problem");

  set_address_space_limit(address_space_bytes() + (int64_t{60} << 20));
  c.fill(std::nan(""));
  const bsrmm_status tuned_multiply = bsrmm_matmul(ctx.get(), a.get(), &bd, &cd, nullptr);
  const std::string message = bsrmm_last_error();
  const std::string ran = ctx.last_variant();
  const bsrmm_status tune = expect_success_or_out_of_memory(
      bsrmm_tune(ctx.get(), a.get(), &bd, &cd, nullptr), "bsrmm_tune under the limit");
  const std::string tune_message = bsrmm_last_error();
  set_address_space_limit(-1);
  ASSERT_EQ(tuned_multiply, BSRMM_STATUS_SUCCESS) << "a multiply that tunes but cannot measure: " << message;
  {
    // The untuned pick (rowwise in bands with AVX-512, else blocked), asked now the limit is off.
    Context untuned;
    untuned.set_tuning_mode(BSRMM_TUNING_OFF);
    const Matrix same = matrix_of(untuned, host);
    HostDense scratch(host.rows, n, BSRMM_DTYPE_F32);
    bsrmm_dense sd = scratch.desc();
    ASSERT_EQ(bsrmm_matmul(untuned.get(), same.get(), &bd, &sd, nullptr), BSRMM_STATUS_SUCCESS) << bsrmm_last_error();
    EXPECT_EQ(ran, untuned.last_variant()) << "the heuristic's pick ran";
  }
  EXPECT_EQ(tune, BSRMM_STATUS_OUT_OF_MEMORY) << "bsrmm_tune measured: the limit left room to measure";
  std::printf("[ fault    ] as expected: %s\n", tune_message.c_str());

  for (const bool again : {false, true}) {
    if (again) {
      c.fill(std::nan(""));
      ASSERT_EQ(bsrmm_matmul(ctx.get(), a.get(), &bd, &cd, nullptr), BSRMM_STATUS_SUCCESS) << bsrmm_last_error();
    }
    int64_t wrong = 0;
    for (int64_t i = 0; i < host.rows; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double want = 0, magnitude = 0;
        for (int32_t k = 0; k < side; ++k) {
          const double term = host.value(i / side, static_cast<int32_t>(i % side), k) * b.get(i / side * side + k, j);
          want += term;
          magnitude += std::fabs(term);
        }
        if (!(std::fabs(c.get(i, j) - want) <= 4e-7 * magnitude + 1e-30)) ++wrong;
      }
    EXPECT_EQ(wrong, 0) << (again ? "C after the limit was lifted" : "C of the untuned multiply");
  }
}

TEST(FaultsInAFreshProcess, EveryCallUnderALimit) {
  ONLY_IN_THE_CHILD();
  Random rng(14);
  const HostBsr host = random_bsr(rng, 48, 40, 16, 16, 0.4, BSRMM_DTYPE_F32);
  HostBsr arrays = host;
  const bsrmm_bsr_desc desc = arrays.desc();
  HostDense b(host.cols, 96, BSRMM_DTYPE_F32), c(host.rows, 96, BSRMM_DTYPE_F32);
  for (int64_t i = 0; i < host.cols; ++i)
    for (int64_t j = 0; j < 96; ++j) b.set(i, j, round_to(BSRMM_DTYPE_F32, rng.uniform(-1, 1)));
  const HostDense c_before = c;
  const Expected expected = reference_matmul(host.to_dense(), host.rows, host.cols, BSRMM_OP_NONE, b, c_before,
                                             1.0, 0.0, nullptr, BSRMM_ACTIVATION_NONE);
  bsrmm_dense bd = b.desc(), cd = c.desc();
  const bsrmm_device cpu{BSRMM_DEVICE_CPU, 0};
  int out_of_memory = 0, calls = 0;
  // The default thread count, and 8 threads (8 stacks of address space, more than the tighter
  // limits leave) on any machine.
  for (const int32_t threads : {0, 8}) {
    for (const int64_t room_kib : {0, 256, 1024, 4096, 16384, 65536}) {
      const std::string at =
          " with " + std::to_string(room_kib) + " KiB to spare, threads = " + std::to_string(threads);
      bsrmm_context_t ctx = nullptr;
      bsrmm_matrix_t a = nullptr;
      auto call = [&](bsrmm_status status, const std::string& what) {
        ++calls;
        out_of_memory += expect_success_or_out_of_memory(status, what + at) == BSRMM_STATUS_OUT_OF_MEMORY;
        return status == BSRMM_STATUS_SUCCESS;
      };
      set_address_space_limit(address_space_bytes() + room_kib * 1024);
      if (call(bsrmm_context_create(cpu, &ctx), "bsrmm_context_create") &&
          call(bsrmm_context_set_num_threads(ctx, threads), "bsrmm_context_set_num_threads") &&
          call(bsrmm_matrix_create(ctx, &desc, 0, &a), "bsrmm_matrix_create")) {
        for (int m = 1; m <= 3; ++m)  // AUTO: the third call of a key tunes
          call(bsrmm_matmul(ctx, a, &bd, &cd, nullptr), "AUTO multiply " + std::to_string(m));
        call(bsrmm_tune(ctx, a, &bd, &cd, nullptr), "bsrmm_tune");
      }
      set_address_space_limit(-1);
      // The next call succeeds: on the same handles where they were made, else on new ones.
      if (ctx == nullptr) ASSERT_EQ(bsrmm_context_create(cpu, &ctx), BSRMM_STATUS_SUCCESS) << bsrmm_last_error();
      ASSERT_EQ(bsrmm_context_set_num_threads(ctx, threads), BSRMM_STATUS_SUCCESS) << bsrmm_last_error();
      if (a == nullptr) ASSERT_EQ(bsrmm_matrix_create(ctx, &desc, 0, &a), BSRMM_STATUS_SUCCESS) << bsrmm_last_error();
      c = c_before;
      ASSERT_EQ(bsrmm_matmul(ctx, a, &bd, &cd, nullptr), BSRMM_STATUS_SUCCESS) << bsrmm_last_error();
      expect_matches(c, expected, "multiply after the limit" + at);
      c = c_before;
      ASSERT_EQ(bsrmm_tune(ctx, a, &bd, &cd, nullptr), BSRMM_STATUS_SUCCESS) << bsrmm_last_error();
      expect_matches(c, expected, "bsrmm_tune after the limit" + at);
      bsrmm_matrix_destroy(a);
      bsrmm_context_destroy(ctx);
    }
  }
  std::printf("[ fault    ] %d calls under address-space limits, %d of them OUT_OF_MEMORY\n", calls, out_of_memory);
}

#else

TEST(Faults, HostOutOfMemory) {
  GTEST_SKIP() << "an address-space limit cannot be combined with a sanitizer's shadow memory; "
                  "the unsanitized build runs these";
}

#endif

}  // namespace
}  // namespace bsrmm::test
