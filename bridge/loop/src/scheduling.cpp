#include "flockbridge/bridge/scheduling.hpp"

#include <linux/capability.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>

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

/// Takes CAP_SYS_NICE out of the calling thread's capabilities (effective,
/// permitted, inheritable, ambient), where it has it.
void let_go_of_sys_nice() {
  ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_LOWER, CAP_SYS_NICE, 0UL, 0UL);
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  std::array<__user_cap_data_struct, _LINUX_CAPABILITY_U32S_3> data{};
  if (::syscall(SYS_capget, &header, data.data()) != 0) return;
  constexpr std::size_t kWord = CAP_SYS_NICE / 32;
  constexpr std::uint32_t kBit = 1U << (CAP_SYS_NICE % 32);
  if (((data[kWord].permitted | data[kWord].effective | data[kWord].inheritable) & kBit) == 0) return;
  data[kWord].effective &= ~kBit;
  data[kWord].permitted &= ~kBit;
  data[kWord].inheritable &= ~kBit;
  ::syscall(SYS_capset, &header, data.data());
}

/// Why sched_setscheduler refused, in words a person can act on.
std::string refusal(int error) {
  if (error == EPERM) {
    return "the kernel refused it (EPERM): the bridge lacks CAP_SYS_NICE (the service's unit grants it), or the "
           "kernel's real-time group scheduling gives its group no real-time share";
  }
  return std::string("the kernel refused it: ") + std::strerror(error);
}

}  // namespace

protocol::SchedulingSnapshot settle_loop_scheduling(bool ask, int priority) {
  protocol::SchedulingSnapshot result;
  result.asked = ask;
  if (ask) {
    if (!real_time_scheduling()) {
      sched_param param{};
      param.sched_priority = priority;
      if (::sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &param) != 0) result.refused = refusal(errno);
    }
    let_go_of_sys_nice();
  }
  result.real_time = real_time_scheduling();
  result.summary = scheduling_summary();
  return result;
}

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
