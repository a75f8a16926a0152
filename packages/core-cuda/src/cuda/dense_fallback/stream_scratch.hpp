// Device memory for one multiply, allocated and freed in the order of the caller's stream
// (cudaMallocFromPoolAsync / cudaFreeAsync): no synchronisation, safe for concurrent calls on
// several streams, and cheap after the first call because the pool keeps its memory.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>

namespace bsrmm::cuda::dense_fallback {

// Why device `ordinal` cannot give stream-ordered memory, or "" when it can.
std::string stream_memory_refusal(int ordinal);

class StreamScratch {
 public:
  // Throws OUT_OF_MEMORY naming `bytes` and `user` (what wanted them). The device must be current.
  StreamScratch(std::size_t bytes, int ordinal, cudaStream_t stream, const char* user = "dense fallback");
  ~StreamScratch();
  StreamScratch(const StreamScratch&) = delete;
  StreamScratch& operator=(const StreamScratch&) = delete;

  void* data() const { return data_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }

 private:
  void* data_ = nullptr;
  cudaStream_t stream_;
};

}  // namespace bsrmm::cuda::dense_fallback
