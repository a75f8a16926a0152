// Consuming a DLPack capsule (legacy "dltensor" or versioned "dltensor_versioned"): the
// consumer renames the capsule to its "used_" name, owns the managed tensor and calls its
// deleter when done. DLPackTensor does exactly that; array_view.cpp reads its fields. The
// structs below are the DLPack ABI (dlpack.h, v1.x), restated from the specification because
// the extension needs only these layouts.
#pragma once

#include "bindings.hpp"

#include <cstdint>

namespace bsrmm_python {

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

// DLDeviceType values the core can address.
constexpr int32_t kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3, kDLCUDAManaged = 13;

class DLPackTensor {
 public:
  explicit DLPackTensor(const py::object& capsule);  // takes ownership: renames the capsule
  ~DLPackTensor() { release(); }
  DLPackTensor(const DLPackTensor&) = delete;
  DLPackTensor& operator=(const DLPackTensor&) = delete;

  // Hands the tensor back to its producer; afterwards no field may be read.
  void release();

  const DLTensor& tensor() const;
  Address data() const {
    const DLTensor& t = tensor();
    return reinterpret_cast<Address>(static_cast<char*>(t.data) + t.byte_offset);
  }
  bool read_only() const;
  bool versioned() const { return versioned_ != nullptr; }

 private:
  DLManagedTensor* legacy_ = nullptr;
  DLManagedTensorVersioned* versioned_ = nullptr;
  DLTensor* tensor_ = nullptr;
};

}  // namespace bsrmm_python
