#include "cublaslt_library.hpp"

#include "../../common/error.hpp"

#include <cstdlib>
#include <map>
#include <mutex>
#include <vector>

#if defined(_WIN32)
#include <windows.h>
#else
#include <dlfcn.h>
#endif

namespace bsrmm::cuda::lt {
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
const std::vector<std::string> kDefaultNames = {"cublasLt64_13.dll", "cublasLt64_12.dll"};
#else
void* open_library(const std::string& name, std::string* error) {
  // RTLD_LOCAL: cuBLASLt's symbols stay out of the global namespace of the caller's process.
  void* library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* message = dlerror();
    *error = message ? message : "dlopen failed";
  }
  return library;
}
void* find_symbol(void* library, const char* name) { return dlsym(library, name); }
const std::vector<std::string> kDefaultNames = {"libcublasLt.so.13", "libcublasLt.so.12"};
#endif

template <typename Function>
bool bind(void* library, const char* name, Function*& out, std::string* missing) {
  out = reinterpret_cast<Function*>(find_symbol(library, name));
  if (out == nullptr) *missing += std::string(missing->empty() ? "" : ", ") + name;
  return out != nullptr;
}

struct Loaded {
  Api api{};
  bool ok = false;
  std::string why;
};

// Fills every function of `api` from `library`; false (with the names) when one is missing.
bool bind_all(void* library, Api& api, std::string* missing) {
  bool ok = true;
  ok &= bind(library, "cublasLtCreate", api.create, missing);
  ok &= bind(library, "cublasLtGetVersion", api.get_version, missing);
  ok &= bind(library, "cublasLtMatmulDescCreate", api.matmul_desc_create, missing);
  ok &= bind(library, "cublasLtMatmulDescDestroy", api.matmul_desc_destroy, missing);
  ok &= bind(library, "cublasLtMatmulDescSetAttribute", api.matmul_desc_set_attribute, missing);
  ok &= bind(library, "cublasLtMatrixLayoutCreate", api.matrix_layout_create, missing);
  ok &= bind(library, "cublasLtMatrixLayoutDestroy", api.matrix_layout_destroy, missing);
  ok &= bind(library, "cublasLtMatmulPreferenceCreate", api.preference_create, missing);
  ok &= bind(library, "cublasLtMatmulPreferenceDestroy", api.preference_destroy, missing);
  ok &= bind(library, "cublasLtMatmulPreferenceSetAttribute", api.preference_set_attribute, missing);
  ok &= bind(library, "cublasLtMatmulAlgoGetHeuristic", api.algo_get_heuristic, missing);
  ok &= bind(library, "cublasLtMatmul", api.matmul, missing);
  std::string optional;
  bind(library, "cublasLtGetStatusName", api.get_status_name, &optional);
  return ok;
}

Loaded load() {
  Loaded loaded;
  std::vector<std::string> names = kDefaultNames;
#ifndef _WIN32
  // A CUDA toolkit's lib64 is often not on the loader's path (e.g. /usr/local/cuda without an
  // ldconfig entry): look there too, after the loader's own search.
  for (const char* variable : {"CUDA_HOME", "CUDA_PATH"}) {
    const char* home = std::getenv(variable);
    if (home == nullptr || *home == '\0') continue;
    for (const std::string& name : kDefaultNames) names.push_back(std::string(home) + "/lib64/" + name);
  }
  for (const std::string& name : kDefaultNames) names.push_back("/usr/local/cuda/lib64/" + name);
#endif
  if (const char* path = std::getenv("BSRMM_CUBLASLT"); path != nullptr && *path != '\0')
    names = {path};
  std::string tried;
  for (const std::string& name : names) {
    std::string error;
    // Never closed: the functions are used until the process ends.
    void* library = open_library(name, &error);
    if (library == nullptr) {
      tried += (tried.empty() ? "" : "; ") + name + ": " + error;
      continue;
    }
    std::string missing;
    if (!bind_all(library, loaded.api, &missing)) {
      tried += (tried.empty() ? "" : "; ") + name + " lacks " + missing;
      continue;
    }
    // cublasLtGetVersion: major * 10000 + minor * 100 + patch.
    const std::size_t major = loaded.api.get_version() / 10000;
    if (major != 12 && major != 13) {
      tried += (tried.empty() ? "" : "; ") + name + " is cuBLASLt " +
               std::to_string(loaded.api.get_version()) + " (bsrmm knows major versions 12 and 13)";
      continue;
    }
    loaded.ok = true;
    return loaded;
  }
  loaded.why = "cuBLASLt could not be loaded (" + tried +
               "); install it (e.g. pip install nvidia-cublas) or set BSRMM_CUBLASLT to its path";
  return loaded;
}

}  // namespace

const Api* api(std::string* why) {
  static const Loaded loaded = load();
  if (!loaded.ok) {
    if (why) *why = loaded.why;
    return nullptr;
  }
  return &loaded.api;
}

Handle handle(const Api& api, int ordinal) {
  static std::mutex mutex;
  static std::map<int, Handle> handles;  // never destroyed: the driver may be gone at exit
  std::lock_guard<std::mutex> lock(mutex);
  auto found = handles.find(ordinal);
  if (found != handles.end()) return found->second;
  Handle created = nullptr;
  const Status status = api.create(&created);
  if (status != kSuccess)
    detail::fail(BSRMM_STATUS_CUDA_ERROR, "cublasLtCreate on device ", ordinal, " failed: ",
                 status_text(api, status));
  handles.emplace(ordinal, created);
  return created;
}

std::string status_text(const Api& api, Status status) {
  const char* name = api.get_status_name ? api.get_status_name(status) : nullptr;
  return name ? std::string(name) + " (" + std::to_string(status) + ")" : std::to_string(status);
}

}  // namespace bsrmm::cuda::lt
