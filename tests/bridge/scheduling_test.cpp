// What the bridge says at start about how the kernel schedules it.
#include <doctest/doctest.h>

#include <sched.h>

#include <string>

#include "flockbridge/bridge/scheduling.hpp"

using namespace flockbridge;

TEST_CASE("the scheduling summary names the process's class, and a real-time one with its priority") {
  const int policy = ::sched_getscheduler(0);
  sched_param before{};
  REQUIRE(::sched_getparam(0, &before) == 0);
  if (policy == SCHED_OTHER) {
    CHECK_FALSE(bridge::real_time_scheduling());
    CHECK(bridge::scheduling_summary().rfind("ordinary (SCHED_OTHER, nice ", 0) == 0);
  }
  // Where the process may take a real-time class (root, or RLIMIT_RTPRIO),
  // the summary follows it; elsewhere that half cannot be tried.
  sched_param fifo{};
  fifo.sched_priority = 7;
  if (::sched_setscheduler(0, SCHED_FIFO, &fifo) != 0) {
    MESSAGE("no real-time class for this process: its summary is not checked");
    return;
  }
  CHECK(bridge::real_time_scheduling());
  CHECK(bridge::scheduling_summary() == "real-time (SCHED_FIFO, priority 7)");
  REQUIRE(::sched_setscheduler(0, policy, &before) == 0);
  CHECK(bridge::real_time_scheduling() == (policy == SCHED_FIFO || policy == SCHED_RR));
}
