#include "blas_library.hpp"

#include <cstdlib>
#include <limits>
#include <memory>
#include <vector>

#if defined(_WIN32)
#include <windows.h>
#else
#include <dlfcn.h>
#endif

namespace bsrmm::cpu::blas {
namespace {

#if defined(_WIN32)
void* open_library(const std::string& name, std::string* error) {
  HMODULE module = LoadLibraryA(name.c_str());
  if (module == nullptr) *error = "LoadLibrary error " + std::to_string(GetLastError());
  return reinterpret_cast<void*>(module);
}
void* find_symbol(void* library, const char* name) {
  return reinterpret_cast<void*>(GetProcAddress(static_cast<HMODULE>(library), name));
}
const std::vector<std::string> kDefaultNames = {"libopenblas.dll", "mkl_rt.2.dll"};
#else
void* open_library(const std::string& name, std::string* error) {
  // RTLD_LOCAL: the BLAS's symbols stay out of the caller's global namespace. A library the
  // process already has (numpy's OpenBLAS through $BSRMM_BLAS) is the same instance, threads
  // included.
  void* library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* message = dlerror();
    *error = message ? message : "dlopen failed";
  }
  return library;
}
void* find_symbol(void* library, const char* name) { return dlsym(library, name); }
const std::vector<std::string> kDefaultNames = {"libopenblas.so.0",  "libmkl_rt.so.2", "libmkl_rt.so.3",
                                                "libblis.so.4",      "libflexiblas.so.3",
                                                "libcblas.so.3",     "libblas.so.3"};
#endif

// CBLAS enum values (cblas.h).
constexpr int kRowMajor = 101;
constexpr int kColMajor = 102;
constexpr int kNoTrans = 111;
constexpr int kTrans = 112;

template <typename Int>
using Sgemm = void(int, int, int, Int, Int, Int, float, const float*, Int, const float*, Int, float,
                   float*, Int);
template <typename Int>
using Dgemm = void(int, int, int, Int, Int, Int, double, const double*, Int, const double*, Int,
                   double, double*, Int);

// One symbol family of one library: Int is the BLAS integer (int for LP64, int64_t for ILP64).
template <typename Int>
class Cblas final : public Library {
 public:
  Cblas(Sgemm<Int>* sgemm, Dgemm<Int>* dgemm, std::string description, bool optimized)
      : sgemm_(sgemm), dgemm_(dgemm), description_(std::move(description)), optimized_(optimized) {}

  bool gemm(Order order, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
            const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
            int64_t ldc) const override {
    if (!fits({m, n, k, lda, ldb, ldc})) return false;
    sgemm_(order == Order::row_major ? kRowMajor : kColMajor, trans_a ? kTrans : kNoTrans,
           trans_b ? kTrans : kNoTrans, Int(m), Int(n), Int(k), alpha, a, Int(lda), b, Int(ldb),
           beta, c, Int(ldc));
    return true;
  }
  bool gemm(Order order, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
            const double* a, int64_t lda, const double* b, int64_t ldb, double beta, double* c,
            int64_t ldc) const override {
    if (!fits({m, n, k, lda, ldb, ldc})) return false;
    dgemm_(order == Order::row_major ? kRowMajor : kColMajor, trans_a ? kTrans : kNoTrans,
           trans_b ? kTrans : kNoTrans, Int(m), Int(n), Int(k), alpha, a, Int(lda), b, Int(ldb),
           beta, c, Int(ldc));
    return true;
  }
  const std::string& description() const override { return description_; }
  bool optimized() const override { return optimized_; }

 private:
  static bool fits(std::initializer_list<int64_t> sizes) {
    for (int64_t size : sizes)
      if (size > std::numeric_limits<Int>::max()) return false;
    return true;
  }
  Sgemm<Int>* sgemm_;
  Dgemm<Int>* dgemm_;
  std::string description_;
  bool optimized_;
};

// The implementation behind the CBLAS symbols, from a symbol only it exports.
std::string identify(void* library) {
  for (const char* symbol : {"openblas_get_config", "scipy_openblas_get_config",
                             "scipy_openblas_get_config64_", "openblas_get_config64_"})
    if (find_symbol(library, symbol)) return "OpenBLAS";
  if (find_symbol(library, "MKL_Get_Version") || find_symbol(library, "mkl_get_version"))
    return "MKL";
  if (find_symbol(library, "bli_info_get_version_str")) return "BLIS";
  return "";
}

std::unique_ptr<Library> bind(void* library, const std::string& name) {
  const std::string implementation = identify(library);
  const bool optimized = !implementation.empty();
  const std::string what = name + " (" + (optimized ? implementation : "unknown BLAS") + ", ";
  // LP64 names first: MKL exports both, and its LP64 interface is the default.
  for (const char* prefix : {"cblas_", "scipy_cblas_"}) {
    auto* s = reinterpret_cast<Sgemm<int>*>(find_symbol(library, (std::string(prefix) + "sgemm").c_str()));
    auto* d = reinterpret_cast<Dgemm<int>*>(find_symbol(library, (std::string(prefix) + "dgemm").c_str()));
    if (s && d) return std::make_unique<Cblas<int>>(s, d, what + prefix + "sgemm)", optimized);
  }
  for (const char* prefix : {"scipy_cblas_", "cblas_"}) {
    const std::string base = prefix;
    auto* s = reinterpret_cast<Sgemm<int64_t>*>(find_symbol(library, (base + "sgemm64_").c_str()));
    auto* d = reinterpret_cast<Dgemm<int64_t>*>(find_symbol(library, (base + "dgemm64_").c_str()));
    if (s && d) return std::make_unique<Cblas<int64_t>>(s, d, what + base + "sgemm64_)", optimized);
  }
  return nullptr;
}

struct Loaded {
  std::unique_ptr<Library> library;
  std::string why;
};

Loaded load_default() {
  std::vector<std::string> names = kDefaultNames;
  if (const char* path = std::getenv("BSRMM_BLAS"); path != nullptr && *path != '\0') names = {path};
  Loaded loaded;
  loaded.library = load(names, &loaded.why);
  return loaded;
}

}  // namespace

std::unique_ptr<Library> load(const std::vector<std::string>& names, std::string* why) {
  std::string tried;
  for (const std::string& name : names) {
    std::string error;
    // Never closed: the functions are used until the process ends.
    void* handle = open_library(name, &error);
    if (handle == nullptr) {
      tried += (tried.empty() ? "" : "; ") + name + ": " + error;
      continue;
    }
    if (std::unique_ptr<Library> library = bind(handle, name)) return library;
    tried += (tried.empty() ? "" : "; ") + name + " has no cblas_sgemm/cblas_dgemm";
  }
  if (why) {
    *why = "no CBLAS could be loaded (" + tried +
           "); install one (e.g. apt-get install libopenblas0) or set BSRMM_BLAS to its path";
  }
  return nullptr;
}

const Library* library(std::string* why) {
  static const Loaded loaded = load_default();
  if (!loaded.library && why) *why = loaded.why;
  return loaded.library.get();
}

}  // namespace bsrmm::cpu::blas
