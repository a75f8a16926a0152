// The Backend interface over the CUDA backend's functions: the registry's matmul and its
// ranked supporting variants, event timing, the device's identity. Host C++ only.
#include "cuda_backend.hpp"
#include "sddmm/sddmm_backend.hpp"

namespace bsrmm::cuda {
namespace {

class CudaBackend final : public backend::Backend {
 public:
  explicit CudaBackend(int ordinal) : ordinal_(ordinal) {}

  std::string arch() const override { return device_identity(ordinal_).arch; }
  std::string device_name() const override {
    const DeviceIdentity identity = device_identity(ordinal_);
    return identity.name + " (" + identity.arch + ")";
  }
  backend::Clock clock() const override { return backend::Clock::device; }

  std::string matmul(const MatmulArgs& args, const backend::Candidate& run) override {
    return cuda::matmul(args, run.variant);
  }
  std::vector<backend::Candidate> matmul_candidates(const MatmulArgs& args) override {
    std::vector<backend::Candidate> candidates;
    for (std::string& name : supporting_variants(args))
      candidates.push_back(backend::Candidate{std::move(name), 0});
    return candidates;
  }
  double time_matmul(const MatmulArgs& args, const backend::Candidate& run) override {
    return cuda::time_matmul(args, run.variant);
  }
  std::string sddmm(const backend::SddmmArgs& args, const backend::Candidate& run) override {
    return cuda::sddmm(args, run.variant);
  }

 private:
  const int ordinal_;
};

}  // namespace

std::unique_ptr<backend::Backend> make_backend(int ordinal) {
  return std::make_unique<CudaBackend>(ordinal);
}

}  // namespace bsrmm::cuda
