// How the kernel schedules the bridge's loop, and its timers' precision. A
// robot link that keeps its own clock (a bus polled every 10 ms) starts
// each period on time on a busy machine only when the loop is woken ahead
// of ordinary processes: the real-time class does that, and the bridge asks
// for it at start (scheduling.real_time; the service's unit grants it
// CAP_SYS_NICE). Where the kernel refuses (no capability, or real-time
// group scheduling that gives services no share, as some Raspberry Pi
// kernels have), the bridge runs in the ordinary class and says so.
#pragma once

#include <string>

#include "flockbridge/protocol/stats.hpp"

namespace flockbridge::bridge {

/// Asks the kernel to wake this thread's timers at their time, not up to
/// 50 us later (an ordinary thread's default timer slack, which lets the
/// kernel gather wake-ups). Threads started afterwards inherit it. False
/// when refused.
bool sharpen_timers();
/// The calling thread's timer slack in nanoseconds (a real-time thread has none).
[[nodiscard]] long timer_slack_ns();
/// Settles how the kernel schedules the loop, and says so (stats'
/// "scheduling": the class, asked, why refused; its pauses are the loop's
/// to count). With `ask`, asks for SCHED_FIFO at `priority` (1-99) for the
/// calling thread, the loop's, with the reset-on-fork flag, so that the
/// threads and processes it starts afterwards (the recorder's writer, the
/// simulator) are ordinary; a thread already in a real-time class (a unit's
/// CPUSchedulingPolicy=) keeps it; then the thread lets go of CAP_SYS_NICE,
/// which nothing after it needs, so that the service holds no capability
/// once it runs. Call it before any other thread starts.
[[nodiscard]] protocol::SchedulingSnapshot settle_loop_scheduling(bool ask, int priority);

/// "real-time (SCHED_FIFO, priority 10)" or "ordinary (SCHED_OTHER, nice 0)".
[[nodiscard]] std::string scheduling_summary();
/// True when the calling thread runs in a real-time class (SCHED_FIFO or SCHED_RR).
[[nodiscard]] bool real_time_scheduling();

}  // namespace flockbridge::bridge
