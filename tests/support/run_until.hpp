// Runs a libuv loop in a test until a condition holds: the tests of bridge/
// wait for events this way, never by sleeping.
#pragma once

#include <uv.h>

#include <chrono>
#include <cstdint>

namespace flockbridge::testing {

/// Runs the loop until `done` holds, or gives up (false) after `limit`; a
/// timer of its own wakes the loop then, so that a wait for something that
/// must not happen ends too. The timer is set again before every turn for
/// the time still left: the loop's clock is the one it read at its last
/// turn (and may be a coarse one), so a timer set once can fire before
/// `limit` has passed by the steady clock, and a turn after it would then
/// wait for the watched handles alone, for ever if nothing comes.
template <typename Done>
bool run_until(uv_loop_t* loop, Done done, std::chrono::milliseconds limit = std::chrono::seconds(10)) {
  const auto end = std::chrono::steady_clock::now() + limit;
  uv_timer_t wake{};
  uv_timer_init(loop, &wake);
  bool held = true;
  while (!done()) {
    const auto now = std::chrono::steady_clock::now();
    if (now > end) {
      held = false;
      break;
    }
    uv_update_time(loop);
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(end - now);
    uv_timer_start(
        &wake, [](uv_timer_t* /*timer*/) {}, static_cast<std::uint64_t>(left.count()) + 1, 0);
    uv_run(loop, UV_RUN_ONCE);
  }
  uv_close(reinterpret_cast<uv_handle_t*>(&wake), nullptr);
  uv_run(loop, UV_RUN_NOWAIT);  // the timer's closing is done before its memory goes
  return held;
}

}  // namespace flockbridge::testing
