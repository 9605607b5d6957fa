#include "flockbridge/bridge/scheduling.hpp"

#include <sched.h>
#include <sys/resource.h>

#include <cerrno>

namespace flockbridge::bridge {

bool real_time_scheduling() {
  const int policy = ::sched_getscheduler(0);
  return policy == SCHED_FIFO || policy == SCHED_RR;
}

std::string scheduling_summary() {
  const int policy = ::sched_getscheduler(0);
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
