// The loop's deadline timer (a timerfd): it fires once, never before its
// steady-clock deadline, can be stopped and set again, and keeps the loop
// alive only while it is armed.
#include <doctest/doctest.h>

#include <chrono>
#include <vector>

#include "flockbridge/bridge/uv.hpp"

using namespace flockbridge;
using namespace std::chrono_literals;

namespace {

struct Alarm {
  explicit Alarm(uv_loop_t* loop) { REQUIRE(timer.init<Alarm, &Alarm::rang>(loop, this) == 0); }
  void rang() { at.push_back(bridge::steady_now()); }
  bridge::DeadlineTimer timer;
  std::vector<bridge::SteadyTime> at;
};

/// Runs the loop until nothing keeps it alive: true if it ended by itself.
bool run_out(uv_loop_t* loop) {
  return uv_run(loop, UV_RUN_DEFAULT) == 0;
}

}  // namespace

TEST_CASE("a deadline timer fires once, never before its deadline, and then leaves the loop free to end") {
  uv_loop_t loop;
  REQUIRE(uv_loop_init(&loop) == 0);
  {
    Alarm alarm(&loop);
    CHECK(uv_loop_alive(&loop) == 0);  // unarmed, it keeps nothing alive
    const bridge::SteadyTime deadline = bridge::steady_now() + 3ms + 333us;
    alarm.timer.start_at(deadline);
    CHECK(uv_loop_alive(&loop) != 0);
    REQUIRE(run_out(&loop));
    REQUIRE(alarm.at.size() == 1);
    CHECK(alarm.at[0] >= deadline);
  }
  uv_run(&loop, UV_RUN_DEFAULT);
  CHECK(uv_loop_close(&loop) == 0);
}

TEST_CASE("a deadline timer set again keeps only its last deadline, and a stopped one does not fire") {
  uv_loop_t loop;
  REQUIRE(uv_loop_init(&loop) == 0);
  {
    Alarm alarm(&loop);
    alarm.timer.start_at(bridge::steady_now() + 1h);
    const bridge::SteadyTime deadline = bridge::steady_now() + 2ms;
    alarm.timer.start_at(deadline);
    REQUIRE(run_out(&loop));  // were the hour still armed, this would not return
    REQUIRE(alarm.at.size() == 1);
    CHECK(alarm.at[0] >= deadline);

    // A deadline already past fires at once; stopped first, it never does.
    alarm.timer.start_at(bridge::steady_now() - 1s);
    alarm.timer.stop();
    CHECK(uv_loop_alive(&loop) == 0);
    REQUIRE(run_out(&loop));
    CHECK(alarm.at.size() == 1);
    alarm.timer.start_at(bridge::steady_now() - 1s);
    REQUIRE(run_out(&loop));
    CHECK(alarm.at.size() == 2);

    // A delay, as the reopening back-offs use.
    const bridge::SteadyTime asked = bridge::steady_now();
    alarm.timer.start_after(1500us);
    REQUIRE(run_out(&loop));
    REQUIRE(alarm.at.size() == 3);
    CHECK(alarm.at[2] - asked >= 1500us);
  }
  uv_run(&loop, UV_RUN_DEFAULT);
  CHECK(uv_loop_close(&loop) == 0);
}

TEST_CASE("a deadline timer that expired while the loop was busy and was then stopped does not fire") {
  uv_loop_t loop;
  REQUIRE(uv_loop_init(&loop) == 0);
  {
    Alarm alarm(&loop);
    // Expired in the kernel (its descriptor readable) before the loop looks:
    // stopping it must forget the expiry, not deliver it later.
    alarm.timer.start_at(bridge::steady_now() - 1ms);
    alarm.timer.stop();
    alarm.timer.start_at(bridge::steady_now() + 1h);
    CHECK(uv_run(&loop, UV_RUN_NOWAIT) != 0);  // armed for the hour: still alive
    CHECK(alarm.at.empty());
    alarm.timer.stop();
    REQUIRE(run_out(&loop));
    CHECK(alarm.at.empty());
  }
  uv_run(&loop, UV_RUN_DEFAULT);
  CHECK(uv_loop_close(&loop) == 0);
}
