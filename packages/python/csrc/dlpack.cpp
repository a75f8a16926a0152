// DLPackTensor (dlpack.hpp): taking a capsule over, and handing it back.
#include "dlpack.hpp"

#include <string>

namespace bsrmm_python {

namespace {

constexpr uint32_t kSupportedMajorVersion = 1;
constexpr uint64_t kFlagReadOnly = 1ull << 0;

constexpr const char* kLegacyName = "dltensor";
constexpr const char* kVersionedName = "dltensor_versioned";

void take_ownership(const py::object& capsule, const char* used_name) {
  if (PyCapsule_SetName(capsule.ptr(), used_name) != 0) throw py::error_already_set();
}

}  // namespace

DLPackTensor::DLPackTensor(const py::object& capsule) {
  if (!PyCapsule_CheckExact(capsule.ptr()))
    throw py::type_error("__dlpack__() returned " +
                         std::string(py::str(py::type::of(capsule).attr("__name__"))) +
                         ", expected a DLPack capsule");
  const char* raw_name = PyCapsule_GetName(capsule.ptr());
  const std::string name = raw_name ? raw_name : "";
  if (name == kLegacyName) {
    legacy_ = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), kLegacyName));
    if (!legacy_) throw py::error_already_set();
    tensor_ = &legacy_->dl_tensor;
    take_ownership(capsule, "used_dltensor");
  } else if (name == kVersionedName) {
    auto* versioned = static_cast<DLManagedTensorVersioned*>(
        PyCapsule_GetPointer(capsule.ptr(), kVersionedName));
    if (!versioned) throw py::error_already_set();
    // A different major version may lay the struct out differently: leave the capsule
    // unconsumed so its own destructor frees it.
    if (versioned->version.major != kSupportedMajorVersion)
      throw py::type_error("DLPack capsule has ABI version " +
                           std::to_string(versioned->version.major) + "." +
                           std::to_string(versioned->version.minor) + "; bsrmm reads " +
                           std::to_string(kSupportedMajorVersion) + ".x");
    versioned_ = versioned;
    tensor_ = &versioned_->dl_tensor;
    take_ownership(capsule, "used_dltensor_versioned");
  } else {
    throw py::type_error("DLPack capsule is named '" + name + "' (expected '" + kLegacyName +
                         "' or '" + kVersionedName + "'; a 'used_' capsule was already consumed)");
  }
}

void DLPackTensor::release() {
  if (legacy_ && legacy_->deleter) legacy_->deleter(legacy_);
  if (versioned_ && versioned_->deleter) versioned_->deleter(versioned_);
  legacy_ = nullptr;
  versioned_ = nullptr;
  tensor_ = nullptr;
}

const DLTensor& DLPackTensor::tensor() const {
  if (!tensor_) throw py::value_error("DLPack tensor was already released");
  return *tensor_;
}

bool DLPackTensor::read_only() const {
  return versioned_ && (versioned_->flags & kFlagReadOnly);
}

}  // namespace bsrmm_python
