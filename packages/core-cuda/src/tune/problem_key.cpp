#include "problem_key.hpp"

#include "../common/dtype.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace bsrmm::tuner {

namespace {

bool aligned16(const bsrmm_dense& dense) {
  const std::size_t bytes = detail::element_size(dense.dtype);
  return reinterpret_cast<std::uintptr_t>(dense.data) % 16 == 0 &&
         (static_cast<std::size_t>(dense.ld) * bytes) % 16 == 0;
}

const char* activation_name(bsrmm_activation activation) {
  switch (activation) {
    case BSRMM_ACTIVATION_RELU: return "relu";
    case BSRMM_ACTIVATION_GELU: return "gelu";
    case BSRMM_ACTIVATION_SILU: return "silu";
    case BSRMM_ACTIVATION_NONE: break;
  }
  return "none";
}

// FNV-1a: a stable hash of the candidate labels (std::hash may differ between builds).
uint32_t fnv1a(const std::vector<std::string>& labels) {
  uint32_t hash = 2166136261u;
  for (const std::string& label : labels) {
    for (const char c : label) {
      hash ^= static_cast<unsigned char>(c);
      hash *= 16777619u;
    }
    hash ^= static_cast<unsigned char>(',');
    hash *= 16777619u;
  }
  return hash;
}

}  // namespace

ProblemShape describe_problem(const std::string& arch, const matrix::BsrMatrix& op_a,
                              const bsrmm_dense& b, const bsrmm_dense& c,
                              const bsrmm_matmul_options& options, bsrmm_f32_mode f32_mode) {
  const matrix::BsrShape& shape = op_a.shape();
  ProblemShape problem;
  problem.arch = arch;
  problem.dtype = op_a.dtype();
  problem.b_dtype = b.dtype;
  problem.c_dtype = c.dtype;
  problem.f32_mode = f32_mode;
  problem.b_layout = b.layout;
  problem.c_layout = c.layout;
  problem.op_a = options.op_a;
  problem.block_height = shape.block_height;
  problem.block_width = shape.block_width;
  problem.m = c.rows;
  problem.k = b.rows;
  problem.n = c.cols;
  problem.block_rows = shape.block_row_count;
  problem.block_cols = shape.block_col_count;
  problem.nnzb = shape.nnzb;
  problem.max_row_blocks = op_a.max_row_blocks();
  problem.beta = options.beta != 0.0;
  problem.bias = options.bias != nullptr;
  problem.activation = options.activation;
  problem.aligned = aligned16(b) && aligned16(c);
  return problem;
}

int64_t size_bucket(int64_t value) {
  int64_t bucket = 1;
  while (bucket < value && bucket < (int64_t{1} << 62)) bucket <<= 1;
  return bucket;
}

int density_exponent(const ProblemShape& shape) {
  const double blocks = static_cast<double>(shape.block_rows) * static_cast<double>(shape.block_cols);
  if (shape.nnzb <= 0 || blocks <= 0) return -99;
  return static_cast<int>(std::lround(std::log2(static_cast<double>(shape.nnzb) / blocks)));
}

int skew_exponent(const ProblemShape& shape) {
  if (shape.nnzb <= 0 || shape.block_rows <= 0) return 0;
  const double mean = static_cast<double>(shape.nnzb) / static_cast<double>(shape.block_rows);
  return static_cast<int>(std::lround(std::log2(static_cast<double>(shape.max_row_blocks) / mean)));
}

std::string problem_key(const ProblemShape& shape, const std::vector<std::string>& candidate_labels) {
  std::ostringstream key;
  key << "arch=" << shape.arch << "|dtype=" << detail::name(shape.dtype);
  if (shape.b_dtype != shape.dtype || shape.c_dtype != shape.dtype)
    key << "*" << detail::name(shape.b_dtype) << "->" << detail::name(shape.c_dtype);
  // Only f32 on a GPU has a choice of arithmetic; elsewhere the mode changes nothing.
  if (shape.dtype == BSRMM_DTYPE_F32 && shape.arch != "cpu")
    key << "|f32=" << (shape.f32_mode == BSRMM_F32_TF32 ? "tf32" : "exact");
  key << "|op=" << (shape.op_a == BSRMM_OP_TRANSPOSE ? "T" : "N")
      << "|B=" << (shape.b_layout == BSRMM_LAYOUT_ROW_MAJOR ? "row" : "col")
      << "|C=" << (shape.c_layout == BSRMM_LAYOUT_ROW_MAJOR ? "row" : "col")
      << "|block=" << shape.block_height << "x" << shape.block_width
      << "|m=" << size_bucket(shape.m) << "|k=" << size_bucket(shape.k)
      << "|n=" << size_bucket(shape.n) << "|density=2^" << density_exponent(shape)
      << "|skew=2^" << skew_exponent(shape) << "|epilogue=";
  std::string epilogue;
  if (shape.beta) epilogue += "beta+";
  if (shape.bias) epilogue += "bias+";
  epilogue += activation_name(shape.activation);
  key << epilogue << "|aligned=" << (shape.aligned ? 1 : 0);
  if (shape.sm_budget > 0 && shape.arch != "cpu") key << "|sms=" << shape.sm_budget;
  char hash[16];
  std::snprintf(hash, sizeof(hash), "%08x", static_cast<unsigned>(fnv1a(candidate_labels)));
  key << "|candidates=" << candidate_labels.size() << ":" << hash;
  return key.str();
}

}  // namespace bsrmm::tuner
