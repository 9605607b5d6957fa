// The time the codecs and models are given: they read no clock themselves.
#pragma once

#include <chrono>

namespace flockbridge::protocol {

using SteadyTime = std::chrono::steady_clock::time_point;

}  // namespace flockbridge::protocol
