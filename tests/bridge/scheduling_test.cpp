// What the bridge says at start about how the kernel schedules it.
#include <doctest/doctest.h>

#include <sched.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

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
  // As systemd's CPUSchedulingResetOnFork= leaves it, the kernel returns
  // the flag with the policy. In a child: an unprivileged process may not
  // take the flag off again.
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    const bool named = ::sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &fifo) == 0 &&
                       bridge::real_time_scheduling() &&
                       bridge::scheduling_summary() == "real-time (SCHED_FIFO, priority 7)";
    ::_exit(named ? 0 : 1);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  REQUIRE(::sched_setscheduler(0, policy, &before) == 0);
  CHECK(bridge::real_time_scheduling() == (policy == SCHED_FIFO || policy == SCHED_RR));
}

TEST_CASE("the bridge's timers are sharpened to a 1 ns slack, and the slack is read back") {
  const long before = bridge::timer_slack_ns();
  REQUIRE(before >= 0);
  REQUIRE(bridge::sharpen_timers());
  CHECK(bridge::timer_slack_ns() == 1);
  REQUIRE(::prctl(PR_SET_TIMERSLACK, static_cast<unsigned long>(before), 0UL, 0UL, 0UL) == 0);
  CHECK(bridge::timer_slack_ns() == before);
}
