// How the kernel schedules the bridge's process, for its start-up log, and
// its timers' precision. A robot link that keeps its own clock (a bus
// polled every 10 ms) starts each period on time on a busy machine only
// when the loop is woken ahead of ordinary processes: a real-time class
// (systemd's CPUSchedulingPolicy=, docs/deployment.md) does that; the
// bridge works without it.
#pragma once

#include <string>

namespace flockbridge::bridge {

/// Asks the kernel to wake this thread's timers at their time, not up to
/// 50 us later (an ordinary thread's default timer slack, which lets the
/// kernel gather wake-ups). Threads started afterwards inherit it. False
/// when refused.
bool sharpen_timers();
/// The calling thread's timer slack in nanoseconds (a real-time thread has none).
[[nodiscard]] long timer_slack_ns();
/// "real-time (SCHED_FIFO, priority 10)" or "ordinary (SCHED_OTHER, nice 0)".
[[nodiscard]] std::string scheduling_summary();
/// True when the process runs in a real-time class (SCHED_FIFO or SCHED_RR).
[[nodiscard]] bool real_time_scheduling();

}  // namespace flockbridge::bridge
