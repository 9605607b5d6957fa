// The machine's own timer lateness: how late a plain thread wakes from
// sleeping to a deadline (clock_nanosleep on CLOCK_MONOTONIC, absolute),
// one deadline every period. Every benchmark that prints a figure of the
// bridge's periods prints this beside it, measured over the same phase by
// the same method (this one), in the same scheduling class as whatever
// reads the bridge's periods: no process on the machine starts a period
// sooner than its timer wakes it, so this is the floor the bridge's periods
// are judged against. compare_bench measures it in a thread of its own; the
// Python benchmarks run the machine_timer program (machine_timer.cpp).
#pragma once

#include <time.h>

#include <algorithm>
#include <vector>

namespace flockbridge::testing::bench {

/// Sleeps to `due`, moves `due` on by `period_ms`, and returns how late the
/// thread woke, in ms.
inline double next_wake_late_ms(timespec& due, double period_ms) {
  ::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &due, nullptr);
  timespec woke{};
  ::clock_gettime(CLOCK_MONOTONIC, &woke);
  const double late =
      static_cast<double>(woke.tv_sec - due.tv_sec) * 1e3 + static_cast<double>(woke.tv_nsec - due.tv_nsec) / 1e6;
  due.tv_nsec += static_cast<long>(period_ms * 1'000'000);
  while (due.tv_nsec >= 1'000'000'000) {
    due.tv_nsec -= 1'000'000'000;
    ++due.tv_sec;
  }
  return late;
}

/// The first deadline: one period from now.
inline timespec first_deadline(double period_ms) {
  timespec due{};
  ::clock_gettime(CLOCK_MONOTONIC, &due);
  due.tv_nsec += static_cast<long>(period_ms * 1'000'000);
  while (due.tv_nsec >= 1'000'000'000) {
    due.tv_nsec -= 1'000'000'000;
    ++due.tv_sec;
  }
  return due;
}

/// How late the calling thread woke at each of `count` deadlines, `period_ms`
/// apart, in ms, sorted.
inline std::vector<double> timer_lateness(long count, double period_ms) {
  std::vector<double> late;
  late.reserve(static_cast<std::size_t>(std::max(count, 0L)));
  timespec due = first_deadline(period_ms);
  for (long i = 0; i < count; ++i) late.push_back(next_wake_late_ms(due, period_ms));
  std::sort(late.begin(), late.end());
  return late;
}

}  // namespace flockbridge::testing::bench
