#include "flockbridge/bridge/scheduling.hpp"

#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#include <cerrno>

namespace flockbridge::bridge {

bool sharpen_timers() {
  return ::prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL) == 0;
}

long timer_slack_ns() {
  return ::prctl(PR_GET_TIMERSLACK, 0UL, 0UL, 0UL, 0UL);
}

namespace {

/// The process's policy, without the reset-on-fork flag that the kernel
/// returns with it (systemd's CPUSchedulingResetOnFork=).
int policy_now() {
  const int policy = ::sched_getscheduler(0);
  return policy < 0 ? policy : policy & ~SCHED_RESET_ON_FORK;
}

}  // namespace

bool real_time_scheduling() {
  const int policy = policy_now();
  return policy == SCHED_FIFO || policy == SCHED_RR;
}

std::string scheduling_summary() {
  const int policy = policy_now();
  if (real_time_scheduling()) {
    sched_param param{};
    ::sched_getparam(0, &param);
    return std::string("real-time (") + (policy == SCHED_FIFO ? "SCHED_FIFO" : "SCHED_RR") + ", priority " +
           std::to_string(param.sched_priority) + ")";
  }
  errno = 0;
  const int nice = ::getpriority(PRIO_PROCESS, 0);
  const std::string niceness = errno == 0 ? ", nice " + std::to_string(nice) : "";
  switch (policy) {
    case SCHED_BATCH:
      return "ordinary (SCHED_BATCH" + niceness + ")";
    case SCHED_IDLE:
      return "idle (SCHED_IDLE)";
    default:
      return "ordinary (SCHED_OTHER" + niceness + ")";
  }
}

}  // namespace flockbridge::bridge
