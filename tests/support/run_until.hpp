// Runs a libuv loop in a test until a condition holds: the tests of bridge/
// wait for events this way, never by sleeping.
#pragma once

#include <uv.h>

#include <chrono>

namespace flockbridge::testing {

/// Runs the loop until `done` holds, or gives up (false) after `limit` of loop time.
template <typename Done>
bool run_until(uv_loop_t* loop, Done done, std::chrono::milliseconds limit = std::chrono::seconds(10)) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > end) return false;
    uv_run(loop, UV_RUN_ONCE);
  }
  return true;
}

}  // namespace flockbridge::testing
