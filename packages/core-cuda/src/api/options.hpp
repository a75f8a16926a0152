// Reading a caller's options struct: NULL means the defaults; `struct_size` says how much of the
// struct the caller knows. A longer one comes from a newer caller, whose extra fields this
// version does not read. A shorter one is refused (initialise with the *_default() function)
// unless it is exactly `oldest_size`, the struct an older release shipped before fields were
// appended: those fields then keep their defaults.
#pragma once

#include "../common/error.hpp"

#include <cstddef>
#include <cstring>

namespace bsrmm::api {

template <typename Options>
Options read_versioned(const Options* given, Options defaults, const char* default_function,
                       std::size_t oldest_size = sizeof(Options)) {
  if (given == nullptr) return defaults;
  const bool older = given->struct_size == oldest_size;
  if (given->struct_size < sizeof(Options) && !older) {
    detail::invalid_argument("options->struct_size = ", given->struct_size, " < ", sizeof(Options),
                             " (initialise options with ", default_function, "())");
  }
  Options options = defaults;
  std::memcpy(&options, given, older ? oldest_size : sizeof(options));
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
