// A libuv loop that a test turns by hand, one turn each time it asks: an
// idle handle keeps it alive and its poll from waiting, so work deferred to
// "after the loop has polled" (AfterPoll, a TurnShare's next turn) happens
// at a turn the test chooses.
#pragma once

#include <uv.h>

#include <doctest/doctest.h>

namespace flockbridge::testing {

struct TurningLoop {
  TurningLoop() {
    REQUIRE(uv_loop_init(&loop) == 0);
    REQUIRE(uv_idle_init(&loop, &idle) == 0);
    uv_idle_start(&idle, [](uv_idle_t* /*idle*/) {});
  }
  TurningLoop(const TurningLoop&) = delete;
  TurningLoop& operator=(const TurningLoop&) = delete;
  TurningLoop(TurningLoop&&) = delete;
  TurningLoop& operator=(TurningLoop&&) = delete;
  ~TurningLoop() {
    uv_close(reinterpret_cast<uv_handle_t*>(&idle), nullptr);
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK(uv_loop_close(&loop) == 0);
  }
  void turn() { uv_run(&loop, UV_RUN_NOWAIT); }

  uv_loop_t loop{};
  uv_idle_t idle{};
};

}  // namespace flockbridge::testing
