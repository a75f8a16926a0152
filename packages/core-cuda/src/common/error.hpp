// Internal error type. Everything below the C ABI throws bsrmm::detail::Error; src/api catches
// it at the boundary, stores the message thread-locally and returns the status.
#pragma once

#include <bsrmm/bsrmm.h>

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace bsrmm::detail {

class Error : public std::runtime_error {
 public:
  Error(bsrmm_status status, std::string message)
      : std::runtime_error(std::move(message)), status_(status) {}
  bsrmm_status status() const noexcept { return status_; }

 private:
  bsrmm_status status_;
};

// Builds a message from streamable parts: fail(BSRMM_STATUS_INVALID_ARGUMENT, "col_idx[", i, "] = ", v).
template <typename... Parts>
[[noreturn]] void fail(bsrmm_status status, const Parts&... parts) {
  std::ostringstream message;
  (message << ... << parts);
  throw Error(status, message.str());
}

template <typename... Parts>
[[noreturn]] void invalid_argument(const Parts&... parts) {
  fail(BSRMM_STATUS_INVALID_ARGUMENT, parts...);
}

}  // namespace bsrmm::detail
