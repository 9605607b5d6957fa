// Runs a libuv loop in a test until a condition holds: the tests of bridge/
// wait for events this way, never by sleeping.
#pragma once

#include <uv.h>

#include <chrono>
#include <cstdint>

namespace flockbridge::testing {

/// Runs the loop until `done` holds, or gives up (false) after `limit` of
/// loop time; a timer of its own wakes the loop then, so that a wait for
/// something that must not happen ends too.
template <typename Done>
bool run_until(uv_loop_t* loop, Done done, std::chrono::milliseconds limit = std::chrono::seconds(10)) {
  const auto end = std::chrono::steady_clock::now() + limit;
  uv_timer_t wake{};
  uv_timer_init(loop, &wake);
  uv_timer_start(&wake, [](uv_timer_t* /*timer*/) {}, static_cast<std::uint64_t>(limit.count()) + 1, 0);
  bool held = true;
  while (!done()) {
    if (std::chrono::steady_clock::now() > end) {
      held = false;
      break;
    }
    uv_run(loop, UV_RUN_ONCE);
  }
  uv_close(reinterpret_cast<uv_handle_t*>(&wake), nullptr);
  uv_run(loop, UV_RUN_NOWAIT);  // the timer's closing is done before its memory goes
  return held;
}

}  // namespace flockbridge::testing
