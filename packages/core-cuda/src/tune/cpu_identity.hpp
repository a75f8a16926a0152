// The name CPU choices are filed under: the processor model and the hardware thread count, so a
// home directory shared between machines never hands one CPU's choice to another.
#pragma once

#include <string>

namespace bsrmm::tuner {

// "AMD EPYC 7B13 (2 hardware threads)"; the model is "cpu" where the OS does not say. Read once.
std::string cpu_identity();

}  // namespace bsrmm::tuner
