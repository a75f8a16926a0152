// Standalone check and timing of the sm90 (TMA + wgmma) variants on a Hopper GPU.
//
//   sm90_check [--correctness] [--perf] [--l2] [--only <variant> <density>]  (no flag: the first three)
//
// Correctness: every sm90 variant on small problems that stress the edges (partial N tiles,
// partial row groups, empty and full block rows, skewed rows, alpha/beta/bias/activations),
// C poisoned with NaN when beta == 0, every element compared with a float64 CPU reference.
// Perf: the PERF.md grid (M = K = 8192, N = 4096, blocks 16..128, densities 0.05..0.5, fixed
// block count per block row), each output checked on sampled rows before it is timed (median
// of 20 CUDA-event timings after warm-up); prints effective TFLOPS = 2 nnzb b^2 N / time.
// `--only <variant> <density>` runs one perf case (to profile it).
// Every case runs on the balanced work lists the library's plan would build (src/matrix/
// work_schedule); the correctness cases and the skewed perf case also run the old round robin.
// Exit status 1 when any check fails or a variant refuses a case it should take.
#include "common/error.hpp"
#include "common/half.hpp"
#include "cuda/cuda_backend.hpp"
#include "cuda/variant.hpp"
#include "matrix/group_columns.hpp"
#include "matrix/row_groups.hpp"
#include "matrix/work_schedule.hpp"
#include "../../support/exit_on_failure.hpp"
#include "../../support/random.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

using namespace bsrmm;
using namespace bsrmm::cuda;

namespace {

using bsrmm::test::Random;

// ---- 16-bit element conversions on the host (the core's, src/common/half.hpp) ----

uint16_t to_bits(float x, bsrmm_dtype dtype) {
  return dtype == BSRMM_DTYPE_F16 ? bsrmm::detail::f32_to_f16_bits(x) : bsrmm::detail::f32_to_bf16_bits(x);
}

double from_bits(uint16_t bits, bsrmm_dtype dtype) {
  return dtype == BSRMM_DTYPE_F16 ? bsrmm::detail::f16_bits_to_f32(bits) : bsrmm::detail::bf16_bits_to_f32(bits);
}

void fill_random(std::vector<uint16_t>& data, bsrmm_dtype dtype, uint64_t seed) {
  const size_t parts = 8;
  std::vector<std::thread> threads;
  for (size_t t = 0; t < parts; ++t)
    threads.emplace_back([&, t] {
      Random random(seed * 131 + t);
      const size_t begin = data.size() * t / parts, end = data.size() * (t + 1) / parts;
      for (size_t i = begin; i < end; ++i) data[i] = to_bits(float(random.uniform(-1.0, 1.0)), dtype);
    });
  for (auto& thread : threads) thread.join();
}

// ---- problems ----

enum class Pattern { fixed, skewed, edges };

struct Problem {
  int block;
  int64_t block_rows, block_cols, n;
  double density;  // fixed: blocks per row = round(density * block_cols); skewed: same total
  Pattern pattern;
  double alpha, beta;
  bool bias;
  bsrmm_activation activation;
  int64_t ld_extra;  // extra columns of padding in B's and C's leading dimension
  uint64_t seed;
};

struct HostBsr {
  std::vector<int32_t> row_ptr, col_idx, row_order;
};

// Random distinct sorted columns per block row, with the row counts the pattern asks for.
HostBsr make_structure(const Problem& problem) {
  Random random(problem.seed);
  const int64_t rows = problem.block_rows, cols = problem.block_cols;
  std::vector<int64_t> counts(rows);
  const int64_t fixed = std::clamp<int64_t>(std::llround(problem.density * cols), 1, cols);
  if (problem.pattern == Pattern::fixed) {
    std::fill(counts.begin(), counts.end(), fixed);
  } else if (problem.pattern == Pattern::skewed) {
    // Power law (row i of a random permutation gets ~ 1 / (i + 1)^0.8), same total as fixed.
    std::vector<double> weight(rows);
    double total = 0;
    for (int64_t i = 0; i < rows; ++i) total += weight[i] = std::pow(double(i + 1), -0.8);
    std::vector<int64_t> permutation(rows);
    std::iota(permutation.begin(), permutation.end(), 0);
    for (int64_t i = rows - 1; i > 0; --i) std::swap(permutation[i], permutation[random.below(i + 1)]);
    for (int64_t i = 0; i < rows; ++i)
      counts[permutation[i]] =
          std::clamp<int64_t>(std::llround(weight[i] / total * double(fixed * rows)), 0, cols);
  } else {
    // Edges: empty rows, full rows, single blocks, random counts.
    for (int64_t i = 0; i < rows; ++i) {
      const int64_t kind = i % 5;
      counts[i] = kind == 0 ? 0 : kind == 1 ? cols : kind == 2 ? 1 : 1 + random.below(cols);
    }
  }
  HostBsr bsr;
  bsr.row_ptr.assign(rows + 1, 0);
  std::vector<int32_t> pool(cols);
  for (int64_t i = 0; i < rows; ++i) {
    std::iota(pool.begin(), pool.end(), 0);
    for (int64_t j = 0; j < counts[i]; ++j) std::swap(pool[j], pool[j + random.below(cols - j)]);
    std::sort(pool.begin(), pool.begin() + counts[i]);
    bsr.col_idx.insert(bsr.col_idx.end(), pool.begin(), pool.begin() + counts[i]);
    bsr.row_ptr[i + 1] = int32_t(bsr.col_idx.size());
  }
  bsr.row_order.resize(rows);
  std::iota(bsr.row_order.begin(), bsr.row_order.end(), 0);
  std::stable_sort(bsr.row_order.begin(), bsr.row_order.end(), [&](int32_t x, int32_t y) {
    return counts[x] > counts[y];
  });
  return bsr;
}

template <typename T>
T* upload(const std::vector<T>& host);

// What the matrix plan gives the kernels in the library (src/matrix/work_lists): balanced work
// lists and the row groups' merged columns, built from the host structure, one per request,
// kept until the operands go. `round_robin` leaves the schedule out (the kernels' fallback).
class CheckWorkLists final : public WorkListSource {
 public:
  explicit CheckWorkLists(const HostBsr& bsr) : bsr_(bsr) {}
  ~CheckWorkLists() {
    for (Made& made : made_) cudaFree(made.device);
  }
  WorkList get(const WorkRequest& asked, void*) override {
    WorkRequest request = asked;
    if (round_robin) request.n_tiles = 0;
    for (const Made& made : made_)
      if (std::memcmp(&made.request, &request, sizeof request) == 0) return made.list;
    std::vector<uint32_t> host;
    WorkList list{};
    size_t begin_at = 0, items_at = 0, columns_at = 0, column_begin_at = 0, rows_at = 0;
    const int64_t block_rows = int64_t(bsr_.row_ptr.size()) - 1;
    const matrix::RowGroups slots =
        request.rows_per_slot > 1 ? matrix::similar_row_groups(bsr_.row_ptr, bsr_.col_idx, request.rows_per_slot)
                                  : matrix::consecutive_row_groups(block_rows, 1);
    if (request.rows_per_slot > 1) {  // first: 8-byte aligned
      const matrix::GroupColumns merged = matrix::group_columns(bsr_.row_ptr, bsr_.col_idx, slots);
      host = merged.entries;
      column_begin_at = host.size();
      host.insert(host.end(), merged.begin.begin(), merged.begin.end());
      rows_at = host.size();
      host.insert(host.end(), slots.rows.begin(), slots.rows.end());
    }
    if (request.n_tiles > 0) {
      const matrix::WorkSchedule schedule = matrix::balance_work(
          matrix::slot_costs(bsr_.row_ptr, bsr_.col_idx, slots, request.cost_per_block, request.cost_per_item),
          request.n_tiles, request.ctas);
      begin_at = host.size();
      host.insert(host.end(), schedule.begin.begin(), schedule.begin.end());
      items_at = host.size();
      host.insert(host.end(), schedule.items.begin(), schedule.items.end());
      last_makespan = schedule.makespan;
      last_bound = schedule.lower_bound;
    }
    uint32_t* device = upload(host);
    if (request.n_tiles > 0) {
      list.begin = reinterpret_cast<const int32_t*>(device + begin_at);
      list.items = reinterpret_cast<const int32_t*>(device + items_at);
    }
    if (request.rows_per_slot > 1) {
      list.columns = device + columns_at;
      list.column_begin = reinterpret_cast<const int32_t*>(device + column_begin_at);
      list.group_rows = reinterpret_cast<const int32_t*>(device + rows_at);
    }
    made_.push_back({request, device, list});
    return list;
  }
  bool round_robin = false;
  int64_t last_makespan = 0, last_bound = 0;

 private:
  struct Made {
    WorkRequest request;
    uint32_t* device;
    WorkList list;
  };
  const HostBsr& bsr_;
  std::vector<Made> made_;
};

template <typename T>
T* upload(const std::vector<T>& host) {
  T* device = nullptr;
  CHECK_CUDA(cudaMalloc(&device, std::max<size_t>(1, host.size()) * sizeof(T)));
  if (!host.empty())
    CHECK_CUDA(cudaMemcpy(device, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  return device;
}

struct Operands {
  Problem problem;
  bsrmm_dtype dtype;
  HostBsr bsr;
  std::vector<uint16_t> values, b, c0, bias;
  mutable std::vector<float> b_float;  // B converted once, for the reference
  int64_t ldb, ldc;
  int32_t *row_ptr = nullptr, *col_idx = nullptr, *row_order = nullptr;
  std::unique_ptr<CheckWorkLists> work_lists;
  bool round_robin = false;  // run without work lists, as before the plan built them
  uint16_t *d_values = nullptr, *d_b = nullptr, *d_c = nullptr, *d_bias = nullptr;

  int64_t m() const { return problem.block_rows * problem.block; }
  int64_t k() const { return problem.block_cols * problem.block; }
  int64_t nnzb() const { return int64_t(bsr.col_idx.size()); }

  Operands(const Problem& p, bsrmm_dtype type) : problem(p), dtype(type) {
    bsr = make_structure(p);
    const int64_t b2 = int64_t(p.block) * p.block;
    values.resize(std::max<int64_t>(1, nnzb()) * b2);
    fill_random(values, dtype, p.seed + 1);
    ldb = p.n + p.ld_extra;
    ldc = p.n + p.ld_extra;
    b.resize(k() * ldb);
    fill_random(b, dtype, p.seed + 2);
    c0.resize(m() * ldc);
    fill_random(c0, dtype, p.seed + 3);
    if (p.bias) {
      bias.resize(m());
      fill_random(bias, dtype, p.seed + 4);
    }
    work_lists = std::make_unique<CheckWorkLists>(bsr);
    row_ptr = upload(bsr.row_ptr);
    col_idx = upload(bsr.col_idx);
    row_order = upload(bsr.row_order);
    d_values = upload(values);
    d_b = upload(b);
    d_c = upload(c0);
    if (p.bias) d_bias = upload(bias);
  }
  ~Operands() {
    cudaFree(row_ptr), cudaFree(col_idx), cudaFree(row_order), cudaFree(d_values);
    cudaFree(d_b), cudaFree(d_c), cudaFree(d_bias);
  }
  Operands(const Operands&) = delete;

  MatmulArgs args() const {
    MatmulArgs a{};
    a.a.block_row_count = problem.block_rows;
    a.a.block_col_count = problem.block_cols;
    a.a.block_height = problem.block;
    a.a.block_width = problem.block;
    a.a.nnzb = nnzb();
    a.a.row_ptr = row_ptr;
    a.a.col_idx = col_idx;
    a.a.values = d_values;
    a.a.row_order = row_order;
    a.a.dtype = dtype;
    a.b = DenseView{d_b, k(), problem.n, ldb, BSRMM_LAYOUT_ROW_MAJOR, dtype};
    a.c = DenseView{d_c, m(), problem.n, ldc, BSRMM_LAYOUT_ROW_MAJOR, dtype};
    a.alpha = problem.alpha;
    a.beta = problem.beta;
    a.bias = d_bias;
    a.activation = problem.activation;
    a.f32_mode = BSRMM_F32_EXACT;
    a.device = 0;
    a.stream = nullptr;
    work_lists->round_robin = round_robin;
    a.work_lists = work_lists.get();
    return a;
  }

  // C as the variant will see it: the original values, or NaN everywhere when beta == 0 (C is
  // then only written, and any element the kernel skips stays NaN).
  void reset_c() {
    if (problem.beta == 0.0)
      CHECK_CUDA(cudaMemset(d_c, 0xFF, c0.size() * 2));
    else
      CHECK_CUDA(cudaMemcpy(d_c, c0.data(), c0.size() * 2, cudaMemcpyHostToDevice));
  }
};

double activate(double x, bsrmm_activation activation) {
  switch (activation) {
    case BSRMM_ACTIVATION_RELU: return x < 0 ? 0 : x;
    case BSRMM_ACTIVATION_GELU:
      return 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
    case BSRMM_ACTIVATION_SILU: return x / (1 + std::exp(-x));
    default: return x;
  }
}

struct CheckResult {
  double relative_error = 0;  // ||out - ref|| / ||ref|| over the checked rows
  int64_t non_finite = 0;     // outputs that are NaN / inf (poison left behind)
  int64_t checked = 0;
};

// Compares the listed rows of C (all rows when `rows` is empty) with a float64 reference.
CheckResult check(const Operands& ops, std::vector<int64_t> rows) {
  const Problem& p = ops.problem;
  if (rows.empty()) {
    rows.resize(ops.m());
    std::iota(rows.begin(), rows.end(), 0);
  }
  if (ops.b_float.size() != ops.b.size()) {
    ops.b_float.resize(ops.b.size());
    for (size_t i = 0; i < ops.b.size(); ++i) ops.b_float[i] = float(from_bits(ops.b[i], ops.dtype));
  }
  std::vector<uint16_t> out(ops.c0.size());
  CHECK_CUDA(cudaMemcpy(out.data(), ops.d_c, out.size() * 2, cudaMemcpyDeviceToHost));
  const int parts = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
  std::vector<double> err(parts, 0), ref_norm(parts, 0);
  std::vector<int64_t> bad(parts, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < parts; ++t)
    threads.emplace_back([&, t] {
      std::vector<double> acc(p.n);
      for (size_t index = t; index < rows.size(); index += parts) {
        const int64_t r = rows[index];
        const int64_t block_row = r / p.block, within = r % p.block;
        std::fill(acc.begin(), acc.end(), 0.0);
        for (int32_t q = ops.bsr.row_ptr[block_row]; q < ops.bsr.row_ptr[block_row + 1]; ++q) {
          const int64_t k0 = int64_t(ops.bsr.col_idx[q]) * p.block;
          const uint16_t* a_row = &ops.values[(int64_t(q) * p.block + within) * p.block];
          for (int kk = 0; kk < p.block; ++kk) {
            const double a = from_bits(a_row[kk], ops.dtype);
            const float* b_row = &ops.b_float[(k0 + kk) * ops.ldb];
            for (int64_t j = 0; j < p.n; ++j) acc[j] += a * double(b_row[j]);
          }
        }
        const double bias = p.bias ? from_bits(ops.bias[r], ops.dtype) : 0.0;
        for (int64_t j = 0; j < p.n; ++j) {
          double ref = p.alpha * acc[j] + bias;
          if (p.beta != 0) ref += p.beta * from_bits(ops.c0[r * ops.ldc + j], ops.dtype);
          ref = activate(ref, p.activation);
          const double got = from_bits(out[r * ops.ldc + j], ops.dtype);
          if (!std::isfinite(got)) ++bad[t];
          else err[t] += (got - ref) * (got - ref);
          ref_norm[t] += ref * ref;
        }
      }
    });
  for (auto& thread : threads) thread.join();
  CheckResult result;
  double e = 0, n = 0;
  for (int t = 0; t < parts; ++t) e += err[t], n += ref_norm[t], result.non_finite += bad[t];
  result.relative_error = std::sqrt(e) / std::max(1e-300, std::sqrt(n));
  result.checked = int64_t(rows.size()) * p.n;
  return result;
}

double tolerance(bsrmm_dtype dtype) { return dtype == BSRMM_DTYPE_F16 ? 1e-3 : 1e-2; }

DeviceTraits traits_of(int device) {
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, device));
  return DeviceTraits{prop.major, prop.minor, prop.multiProcessorCount,
                      int(prop.sharedMemPerBlockOptin)};
}

const Variant* find_variant(const std::vector<Variant>& variants, const std::string& name) {
  for (const Variant& v : variants)
    if (v.name == name) return &v;
  return nullptr;
}

int failures = 0;

bool run_variant(const Variant& variant, const MatmulArgs& args, const DeviceTraits& traits) {
  try {
    variant.launch(args, traits);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());
    return true;
  } catch (const detail::Error& error) {
    std::printf("  %s: launch threw: %s\n", variant.name.c_str(), error.what());
    ++failures;
    return false;
  }
}

// "..._b128_..." -> 128 (the dtype's "_bf16" also starts with "_b": skip to the digits).
int block_of(const std::string& name) {
  for (size_t at = name.find("_b"); at != std::string::npos; at = name.find("_b", at + 1))
    if (std::isdigit(static_cast<unsigned char>(name[at + 2]))) return std::atoi(name.c_str() + at + 2);
  return 0;
}
bsrmm_dtype dtype_of(const std::string& name) {
  return name.find("_bf16_") != std::string::npos ? BSRMM_DTYPE_BF16 : BSRMM_DTYPE_F16;
}

// ---- correctness on small problems, every element ----

void correctness(const std::vector<Variant>& variants, const DeviceTraits& traits) {
  std::printf("== correctness: full float64 check, C poisoned with NaN when beta == 0\n");
  uint64_t seed = 1000;
  for (const Variant& variant : variants) {
    const int b = block_of(variant.name);
    const bsrmm_dtype dtype = dtype_of(variant.name);
    // rows chosen so the transposed kernel's last group of 256 rows is partial.
    const int64_t block_rows = 2 * 256 / b + 3;
    std::vector<Problem> problems = {
        {b, block_rows, 4096 / b, 512, 0.25, Pattern::fixed, 1.0, 0.0, false, BSRMM_ACTIVATION_NONE, 0, seed++},
        {b, block_rows, 2048 / b, 200, 0.3, Pattern::edges, 0.75, 0.0, true, BSRMM_ACTIVATION_RELU, 8, seed++},
        {b, block_rows, 2048 / b, 328, 0.2, Pattern::skewed, -1.25, 0.5, true, BSRMM_ACTIVATION_GELU, 0, seed++},
        {b, block_rows, 1024 / b, 136, 0.5, Pattern::edges, 1.0, 1.0, false, BSRMM_ACTIVATION_SILU, 16, seed++},
        // More tiles than CTAs (several per CTA in the balanced list), skewed, and a narrow N.
        {b, 6144 / b, 1024 / b, 1024, 0.25, Pattern::skewed, 1.0, 0.0, false, BSRMM_ACTIVATION_NONE, 0, seed++},
        {b, 6144 / b, 2048 / b, 16, 0.25, Pattern::edges, 1.0, 0.0, false, BSRMM_ACTIVATION_NONE, 8, seed++},
    };
    for (const Problem& problem : problems) {
      Operands ops(problem, dtype);
      const MatmulArgs args = ops.args();
      if (!variant.supports(args, traits)) {
        std::printf("  FAIL %-44s refuses n=%lld\n", variant.name.c_str(), (long long)problem.n);
        ++failures;
        continue;
      }
      for (bool round_robin : {false, true}) {
        ops.round_robin = round_robin;
        ops.reset_c();
        if (!run_variant(variant, ops.args(), traits)) continue;
        const CheckResult result = check(ops, {});
        const bool ok = result.non_finite == 0 && result.relative_error < tolerance(dtype);
        if (!ok) ++failures;
        std::printf("  %s %-44s %s m=%-5lld k=%-5lld n=%-4lld nnzb=%-6lld rel_err=%.2e non_finite=%lld\n",
                    ok ? "ok  " : "FAIL", variant.name.c_str(), round_robin ? "rr  " : "list",
                    (long long)ops.m(), (long long)ops.k(), (long long)problem.n,
                    (long long)ops.nnzb(), result.relative_error, (long long)result.non_finite);
      }
    }
  }
  // Refusals the variants must make: wrong block shape, column-major C, misaligned ld.
  Problem problem{16, 8, 8, 64, 0.5, Pattern::fixed, 1.0, 0.0, false, BSRMM_ACTIVATION_NONE, 0, 7};
  Operands ops(problem, BSRMM_DTYPE_F16);
  MatmulArgs args = ops.args();
  const Variant* v16 = find_variant(variants, "sm90_tma_wgmma_f16_b16_transposed_r256_n128");
  const Variant* v128 = find_variant(variants, "sm90_tma_wgmma_f16_b128_rowtile_n256");
  bool refusals_ok = v16 && v128 && v16->supports(args, traits) && !v128->supports(args, traits);
  MatmulArgs col = args;
  col.c.layout = BSRMM_LAYOUT_COL_MAJOR;
  refusals_ok = refusals_ok && !v16->supports(col, traits);
  MatmulArgs odd = args;
  odd.b.ld = 68;
  odd.b.cols = 60;
  refusals_ok = refusals_ok && !v16->supports(odd, traits);
  MatmulArgs bf = args;
  bf.a.dtype = BSRMM_DTYPE_BF16;
  refusals_ok = refusals_ok && !v16->supports(bf, traits);
  if (!refusals_ok) ++failures;
  std::printf("  %s supports() refuses other block sizes, column-major C, N %% 8 != 0, mixed dtypes\n",
              refusals_ok ? "ok  " : "FAIL");
}

// ---- performance grid ----

struct Row {
  std::string variant, note;
  int block;
  double density;
  int64_t nnzb;
  double ms, tflops, rel_err;
  bool ok;
};

double median(std::vector<float> times) {
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

void time_case(const std::vector<Variant>& variants, const DeviceTraits& traits,
               const std::vector<std::string>& names, const Problem& problem, bsrmm_dtype dtype,
               const std::string& note, std::vector<Row>& table, bool round_robin = false) {
  Operands ops(problem, dtype);
  ops.round_robin = round_robin;
  const MatmulArgs args = ops.args();
  // Sampled rows: first, last, and random ones (every column of each).
  Random random(problem.seed + 99);
  std::vector<int64_t> rows = {0, ops.m() - 1};
  for (int i = 0; i < 30; ++i) rows.push_back(random.below(ops.m()));
  for (const std::string& name : names) {
    const Variant* variant = find_variant(variants, name);
    Row row{name, note, problem.block, problem.density, ops.nnzb(), 0, 0, 0, false};
    if (!variant || !variant->supports(args, traits)) {
      std::printf("  FAIL %s refuses the perf case\n", name.c_str());
      ++failures;
      table.push_back(row);
      continue;
    }
    ops.reset_c();
    if (!run_variant(*variant, args, traits)) {
      table.push_back(row);
      continue;
    }
    const CheckResult result = check(ops, rows);
    row.rel_err = result.relative_error;
    row.ok = result.non_finite == 0 && result.relative_error < tolerance(dtype);
    if (!row.ok) ++failures;
    cudaEvent_t start, stop;
    CHECK_CUDA(cudaEventCreate(&start));
    CHECK_CUDA(cudaEventCreate(&stop));
    for (int i = 0; i < 5; ++i) variant->launch(args, traits);
    std::vector<float> times;
    for (int i = 0; i < 20; ++i) {
      CHECK_CUDA(cudaEventRecord(start));
      variant->launch(args, traits);
      CHECK_CUDA(cudaEventRecord(stop));
      CHECK_CUDA(cudaEventSynchronize(stop));
      float ms = 0;
      CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
      times.push_back(ms);
    }
    CHECK_CUDA(cudaEventDestroy(start));
    CHECK_CUDA(cudaEventDestroy(stop));
    row.ms = median(times);
    row.tflops = 2.0 * double(ops.nnzb()) * problem.block * problem.block * double(problem.n) /
                 (row.ms * 1e-3) / 1e12;
    std::printf("  %-46s %-14s b=%-3d d=%.3f nnzb=%-7lld %8.4f ms %7.1f TFLOPS rel_err=%.1e %s",
                name.c_str(), note.c_str(), problem.block, problem.density, (long long)ops.nnzb(),
                row.ms, row.tflops, row.rel_err, row.ok ? "ok" : "FAIL");
    if (!round_robin)  // the schedule's modelled time over its lower bound
      std::printf("  model %.2f", double(ops.work_lists->last_makespan) / double(std::max<int64_t>(1, ops.work_lists->last_bound)));
    std::printf("\n");
    std::fflush(stdout);
    table.push_back(row);
  }
}

void performance(const std::vector<Variant>& variants, const DeviceTraits& traits) {
  std::printf("== performance: M = K = 8192, N = 4096, fixed blocks per block row, median of 20\n");
  std::vector<Row> table;
  const int64_t size = 8192, n = 4096;
  uint64_t seed = 5000;
  const double densities[] = {0.05, 0.125, 0.25, 0.5};
  for (int b : {128, 64, 32, 16}) {
    std::vector<std::string> names;
    const std::string prefix = "sm90_tma_wgmma_f16_b" + std::to_string(b);
    if (b == 128) names = {prefix + "_rowtile_n256"};
    if (b == 64) names = {prefix + "_rowtile_n256", prefix + "_transposed_r256_n128"};
    if (b <= 32) names = {prefix + "_transposed_r256_n128"};
    for (double d : densities) {
      Problem problem{b, size / b, size / b, n, d, Pattern::fixed, 1.0, 0.0, false, BSRMM_ACTIVATION_NONE, 0, seed++};
      time_case(variants, traits, names, problem, BSRMM_DTYPE_F16, "f16", table);
    }
    // bf16 and a skewed pattern with the same total at density 0.125.
    const std::string bf = "sm90_tma_wgmma_bf16_b" + std::to_string(b) + names[0].substr(prefix.size());
    Problem problem{b, size / b, size / b, n, 0.125, Pattern::fixed, 1.0, 0.0, false, BSRMM_ACTIVATION_NONE, 0, seed++};
    time_case(variants, traits, {bf}, problem, BSRMM_DTYPE_BF16, "bf16", table);
    problem.pattern = Pattern::skewed;
    time_case(variants, traits, {names[0]}, problem, BSRMM_DTYPE_F16, "f16 skewed", table);
    time_case(variants, traits, {names[0]}, problem, BSRMM_DTYPE_F16, "f16 skewed rr", table, true);
    // Small N (decode-like batches) and the epilogue with beta, bias and an activation.
    for (int64_t small_n : {256, 64, 16}) {
      Problem small{b, size / b, size / b, small_n, 0.125, Pattern::fixed, 1.0, 0.0, false, BSRMM_ACTIVATION_NONE, 0, seed++};
      time_case(variants, traits, {names[0]}, small, BSRMM_DTYPE_F16, "f16 n=" + std::to_string(small_n), table);
    }
    Problem fused{b, size / b, size / b, n, 0.125, Pattern::fixed, 0.5, 1.0, true, BSRMM_ACTIVATION_GELU, 0, seed++};
    time_case(variants, traits, {names[0]}, fused, BSRMM_DTYPE_F16, "f16 beta+gelu", table);
  }
  std::printf("\n| variant | case | b | density | nnzb | ms | TFLOPS | rel err |\n|---|---|---|---|---|---|---|---|\n");
  for (const Row& r : table)
    std::printf("| %s | %s | %d | %.3f | %lld | %.4f | %.1f | %.1e%s |\n", r.variant.c_str(),
                r.note.c_str(), r.block, r.density, (long long)r.nnzb, r.ms, r.tflops, r.rel_err,
                r.ok ? "" : " FAIL");
}

// ---- L2 -> SM read bandwidth (what bounds small blocks) ----

__global__ void l2_read(const uint4* data, size_t count, int repeats, uint4* sink) {
  uint4 acc = make_uint4(0, 0, 0, 0);
  for (int r = 0; r < repeats; ++r)
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count;
         i += size_t(gridDim.x) * blockDim.x) {
      const uint4 v = __ldcg(data + i);
      acc.x ^= v.x, acc.y ^= v.y, acc.z ^= v.z, acc.w ^= v.w;
    }
  if ((acc.x ^ acc.y ^ acc.z ^ acc.w) == 0x12345678u) sink[0] = acc;
}

void l2_bandwidth(const DeviceTraits& traits) {
  const size_t bytes = size_t(24) << 20;  // fits in the 50 MB L2
  uint4 *data = nullptr, *sink = nullptr;
  CHECK_CUDA(cudaMalloc(&data, bytes));
  CHECK_CUDA(cudaMalloc(&sink, 16));
  CHECK_CUDA(cudaMemset(data, 1, bytes));
  const size_t count = bytes / 16;
  const int repeats = 20;
  l2_read<<<traits.sm_count * 4, 512>>>(data, count, 2, sink);
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  CHECK_CUDA(cudaEventRecord(start));
  l2_read<<<traits.sm_count * 4, 512>>>(data, count, repeats, sink);
  CHECK_CUDA(cudaEventRecord(stop));
  CHECK_CUDA(cudaEventSynchronize(stop));
  float ms = 0;
  CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
  std::printf("== L2 read bandwidth (24 MB resident, 16-byte ld.global.cg): %.2f TB/s\n",
              double(bytes) * repeats / (ms * 1e-3) / 1e12);
  cudaFree(data), cudaFree(sink);
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // keep what was printed if a kernel faults
  bool run_correctness = argc == 1, run_perf = argc == 1, run_l2 = argc == 1;
  std::string only_variant;
  double only_density = 0;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--correctness")) run_correctness = true;
    if (!std::strcmp(argv[i], "--perf")) run_perf = true;
    if (!std::strcmp(argv[i], "--l2")) run_l2 = true;
    if (!std::strcmp(argv[i], "--only") && i + 2 < argc) {
      only_variant = argv[i + 1];
      only_density = std::atof(argv[i + 2]);
      i += 2;
    }
  }
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("SKIP: no CUDA device (sm90 kernels need an H100 / H200)\n");
    return 0;
  }
  const DeviceTraits traits = traits_of(0);
  if (traits.cc_major != 9 || traits.cc_minor != 0) {
    std::printf("SKIP: device is sm_%d%d; the sm90 kernels need compute capability 9.0\n",
                traits.cc_major, traits.cc_minor);
    return 0;
  }
  const std::vector<Variant> variants = sm90_variants();
  std::printf("device: %d SMs, %d B shared memory per block; %zu sm90 variants\n", traits.sm_count,
              traits.max_smem_per_block_optin, variants.size());
  if (!only_variant.empty()) {
    // One case of the perf grid (for a profiler): sm90_check --only <variant> <density>
    const int b = block_of(only_variant);
    std::vector<Row> table;
    Problem problem{b, 8192 / b, 8192 / b, 4096, only_density, Pattern::fixed, 1.0, 0.0, false,
                    BSRMM_ACTIVATION_NONE, 0, 77};
    time_case(variants, traits, {only_variant}, problem, dtype_of(only_variant), "only", table);
  }
  if (run_l2) l2_bandwidth(traits);
  if (run_correctness) correctness(variants, traits);
  if (run_perf) performance(variants, traits);
  std::printf("%s: %d failure(s)\n", failures ? "FAILED" : "PASSED", failures);
  return failures ? 1 : 0;
}
