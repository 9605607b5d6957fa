// A loop turn's share of bulk work (TurnShare): the share starts at the first
// ask of a turn, runs out after its time within the turn, and is whole again
// in the next turn, however long the loop was quiet in between.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>

#include "flockbridge/bridge/uv.hpp"
#include "support/turning_loop.hpp"

using namespace flockbridge;
using namespace std::chrono_literals;

using flockbridge::testing::TurningLoop;

TEST_CASE("a turn's share lasts its time from the first ask, and the next turn has a whole one") {
  TurningLoop turning;
  {
    bridge::LoopTurns turns;
    REQUIRE(turns.init(&turning.loop) == 0);
    bridge::TurnShare share{turns, 100us};
    const bridge::SteadyTime start = bridge::steady_now();
    CHECK(share.has_time(start));
    CHECK(share.has_time(start + 99us));
    CHECK_FALSE(share.has_time(start + 100us));
    CHECK_FALSE(share.has_time(start + 5ms));
    turning.turn();
    // The next turn's first ask starts its share, whenever it comes.
    CHECK(share.has_time(start + 5ms));
    CHECK(share.has_time(start + 5ms + 50us));
    CHECK_FALSE(share.has_time(start + 5ms + 150us));
  }
}

TEST_CASE("after a quiet spell the first piece of work of a turn is done at once, not a turn later") {
  // The accepting and ending shares each kept "when this share began" and
  // forgot it in only some places: a connection after a quiet spell found an
  // old share spent and waited for another turn.
  TurningLoop turning;
  {
    bridge::LoopTurns turns;
    REQUIRE(turns.init(&turning.loop) == 0);
    bridge::TurnShare share{turns, 100us};
    const bridge::SteadyTime start = bridge::steady_now();
    CHECK(share.has_time(start));  // one connection, nothing deferred
    for (int i = 0; i < 3; ++i) turning.turn();
    CHECK(share.has_time(start + 1s));
  }
}

TEST_CASE("each kind of work has its own share of the same turn, and counting turns keeps no loop alive") {
  uv_loop_t loop;
  REQUIRE(uv_loop_init(&loop) == 0);
  {
    bridge::LoopTurns turns;
    REQUIRE(turns.init(&loop) == 0);
    bridge::TurnShare writing{turns, 100us};
    bridge::TurnShare accepting{turns, 100us};
    const bridge::SteadyTime start = bridge::steady_now();
    CHECK(writing.has_time(start));
    CHECK_FALSE(writing.has_time(start + 200us));
    CHECK(accepting.has_time(start + 200us));  // its own share begins now
    CHECK(uv_loop_alive(&loop) == 0);
  }
  uv_run(&loop, UV_RUN_DEFAULT);
  CHECK(uv_loop_close(&loop) == 0);
}

TEST_CASE("a loop that breathes pauses only after keeping its core busy for long, never while it waits") {
  uv_loop_t loop;
  REQUIRE(uv_loop_init(&loop) == 0);
  {
    bridge::LoopTurns turns;
    REQUIRE(turns.init(&loop) == 0);
    turns.breathe(2ms, 50us);
    // Busy: an idle handle keeps the loop turning without a wait, each turn
    // working 0.5 ms, for 20 ms in all.
    struct Busy {
      uv_idle_t idle{};
      bridge::SteadyTime until;
    } busy{{}, bridge::steady_now() + 20ms};
    uv_idle_init(&loop, &busy.idle);
    busy.idle.data = &busy;
    uv_idle_start(&busy.idle, [](uv_idle_t* idle) {
      auto* self = static_cast<Busy*>(idle->data);
      const bridge::SteadyTime end = std::min(bridge::steady_now() + 500us, self->until);
      while (bridge::steady_now() < end) {
      }
      if (bridge::steady_now() >= self->until) uv_idle_stop(idle);
    });
    uv_run(&loop, UV_RUN_DEFAULT);
    const std::uint64_t paused = turns.pauses();
    CHECK(paused >= 4);  // about one every 2 ms of the 20
    CHECK(paused <= 11);
    // Waiting: a timer every 5 ms, ten times; each wait gives the core away.
    // Counted from its first firing: the turn before the first wait may
    // still end the busy spell above (up to 2 ms of it, and the checks since,
    // which under an emulator take that long), and pause for it.
    constexpr int firings = 10;
    struct Waiting {
      uv_timer_t timer{};
      const bridge::LoopTurns* turns;
      int left = firings;
      std::uint64_t paused_at_first = 0;
    } waiting{{}, &turns};
    uv_timer_init(&loop, &waiting.timer);
    waiting.timer.data = &waiting;
    uv_update_time(&loop);
    uv_timer_start(
        &waiting.timer,
        [](uv_timer_t* timer) {
          auto* self = static_cast<Waiting*>(timer->data);
          if (self->left == firings) self->paused_at_first = self->turns->pauses();
          if (--self->left == 0) uv_timer_stop(timer);
        },
        5, 5);
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK(turns.pauses() == waiting.paused_at_first);
    uv_close(reinterpret_cast<uv_handle_t*>(&busy.idle), nullptr);
    uv_close(reinterpret_cast<uv_handle_t*>(&waiting.timer), nullptr);
  }
  uv_run(&loop, UV_RUN_DEFAULT);
  CHECK(uv_loop_close(&loop) == 0);
}
