// Consuming a DLPack capsule (legacy "dltensor" or versioned "dltensor_versioned"): the
// consumer renames the capsule to its "used_" name, owns the managed tensor and calls its
// deleter when done. _core.DLPackTensor does exactly that and exposes the fields the Python
// layer turns into a dense descriptor. The structs below are the DLPack ABI (dlpack.h, v1.x),
// restated from the specification because the extension needs only these layouts.
#include "bindings.hpp"

#include <pybind11/stl.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace bsrmm_python {

namespace {

struct DLDevice {
  int32_t device_type;
  int32_t device_id;
};

struct DLDataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};

struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;  // in elements; null means compact row-major
  uint64_t byte_offset;
};

struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor*);
};

struct DLPackVersion {
  uint32_t major;
  uint32_t minor;
};

struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned*);
  uint64_t flags;
  DLTensor dl_tensor;
};

constexpr uint32_t kSupportedMajorVersion = 1;
constexpr uint64_t kFlagReadOnly = 1ull << 0;

constexpr const char* kLegacyName = "dltensor";
constexpr const char* kVersionedName = "dltensor_versioned";

class DLPackTensor {
 public:
  explicit DLPackTensor(const py::object& capsule) {
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

  ~DLPackTensor() { release(); }
  DLPackTensor(const DLPackTensor&) = delete;
  DLPackTensor& operator=(const DLPackTensor&) = delete;

  // Hands the tensor back to its producer; afterwards no field may be read.
  void release() {
    if (legacy_ && legacy_->deleter) legacy_->deleter(legacy_);
    if (versioned_ && versioned_->deleter) versioned_->deleter(versioned_);
    legacy_ = nullptr;
    versioned_ = nullptr;
    tensor_ = nullptr;
  }

  const DLTensor& tensor() const {
    if (!tensor_) throw py::value_error("DLPack tensor was already released");
    return *tensor_;
  }

  Address data() const {
    const DLTensor& t = tensor();
    return reinterpret_cast<Address>(static_cast<char*>(t.data) + t.byte_offset);
  }
  std::vector<int64_t> shape() const {
    const DLTensor& t = tensor();
    return std::vector<int64_t>(t.shape, t.shape + t.ndim);
  }
  std::optional<std::vector<int64_t>> strides() const {
    const DLTensor& t = tensor();
    if (!t.strides) return std::nullopt;
    return std::vector<int64_t>(t.strides, t.strides + t.ndim);
  }
  bool read_only() const { return versioned_ && (versioned_->flags & kFlagReadOnly); }
  bool versioned() const { return versioned_ != nullptr; }

 private:
  static void take_ownership(const py::object& capsule, const char* used_name) {
    if (PyCapsule_SetName(capsule.ptr(), used_name) != 0) throw py::error_already_set();
  }

  DLManagedTensor* legacy_ = nullptr;
  DLManagedTensorVersioned* versioned_ = nullptr;
  DLTensor* tensor_ = nullptr;
};

}  // namespace

void bind_dlpack(py::module_& m) {
  py::class_<DLPackTensor>(m, "DLPackTensor")
      .def(py::init<const py::object&>(), py::arg("capsule"))
      .def("release", &DLPackTensor::release)
      .def_property_readonly("data", &DLPackTensor::data)
      .def_property_readonly("shape", &DLPackTensor::shape)
      .def_property_readonly("strides", &DLPackTensor::strides)
      .def_property_readonly("dtype",
                             [](const DLPackTensor& t) {
                               const DLDataType d = t.tensor().dtype;
                               return py::make_tuple(int(d.code), int(d.bits), int(d.lanes));
                             })
      .def_property_readonly("device",
                             [](const DLPackTensor& t) {
                               const DLDevice d = t.tensor().device;
                               return py::make_tuple(d.device_type, d.device_id);
                             })
      .def_property_readonly("read_only", &DLPackTensor::read_only)
      .def_property_readonly("versioned", &DLPackTensor::versioned);
}

}  // namespace bsrmm_python
