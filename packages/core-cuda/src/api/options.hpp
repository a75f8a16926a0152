// Reading a caller's options struct: NULL means the defaults; `struct_size` says how much of the
// struct the caller knows. A shorter one is refused (initialise with the *_default() function); a
// longer one comes from a newer caller, whose extra fields this version does not read.
#pragma once

#include "../common/error.hpp"

#include <cstring>

namespace bsrmm::api {

template <typename Options>
Options read_versioned(const Options* given, Options defaults, const char* default_function) {
  if (given == nullptr) return defaults;
  if (given->struct_size < sizeof(Options)) {
    detail::invalid_argument("options->struct_size = ", given->struct_size, " < ", sizeof(Options),
                             " (initialise options with ", default_function, "())");
  }
  Options options;
  std::memcpy(&options, given, sizeof(options));
  options.struct_size = sizeof(options);
  return options;
}

// The start of every *_default(): this version's struct, zeroed, with its struct_size set.
template <typename Options>
Options zeroed_options() {
  Options options;
  std::memset(&options, 0, sizeof(options));
  options.struct_size = sizeof(options);
  return options;
}

}  // namespace bsrmm::api
