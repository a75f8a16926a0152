// The exception wall of the C ABI: every exported function runs its body through guarded(), so
// no C++ exception crosses into C. Errors become a status plus a thread-local message that
// starts with the function's name.
#pragma once

#include "../common/error.hpp"

#include <bsrmm/bsrmm.h>

#include <exception>
#include <new>
#include <string>

namespace bsrmm::api {

void set_last_error(const char* function, const char* message) noexcept;

template <typename Body>
bsrmm_status guarded(const char* function, Body&& body) noexcept {
  try {
    body();
    return BSRMM_STATUS_SUCCESS;
  } catch (const detail::Error& error) {
    set_last_error(function, error.what());
    return error.status();
  } catch (const std::bad_alloc&) {
    set_last_error(function, "out of host memory");
    return BSRMM_STATUS_OUT_OF_MEMORY;
  } catch (const std::exception& error) {
    set_last_error(function, (std::string("internal error: ") + error.what()).c_str());
    return BSRMM_STATUS_INTERNAL;
  } catch (...) {
    set_last_error(function, "internal error: unknown exception");
    return BSRMM_STATUS_INTERNAL;
  }
}

// Null handles and out-pointers are INVALID_ARGUMENT naming the argument.
template <typename T>
T& require(T* pointer, const char* name) {
  if (pointer == nullptr) detail::invalid_argument(name, " is NULL");
  return *pointer;
}

}  // namespace bsrmm::api
