// machine_timer: the machine's own timer lateness (machine_timer.hpp) for a
// benchmark written in another language, over the phases it marks. It
// sleeps to a deadline every --period-ms (10) in a thread of its own, in
// SCHED_FIFO at --priority when given (0: ordinary), on --cpu when given;
// each line read on standard input ends a phase, and at the end of input the
// last one: each phase's figures are printed as one JSON line on standard
// output, {"wakes":N,"p50_ms":..,"p99_ms":..,"max_ms":..,"over_0_5ms":N,
// "over_2ms":N,"class":"ordinary"|"real-time"}. Asserts nothing.
//
//   machine_timer [--period-ms 10] [--priority 10] [--cpu 0]

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bench/machine_timer.hpp"

namespace {

using flockbridge::testing::bench::first_deadline;
using flockbridge::testing::bench::next_wake_late_ms;

struct Options {
  double period_ms = 10;
  int priority = 0;
  int cpu = -1;
};

double at(const std::vector<double>& sorted, double fraction) {
  if (sorted.empty()) return 0;
  const auto index = static_cast<std::size_t>(fraction * static_cast<double>(sorted.size() - 1) + 0.5);
  return sorted[std::min(index, sorted.size() - 1)];
}

void print_phase(std::vector<double> late, bool real_time) {
  std::sort(late.begin(), late.end());
  const auto over = [&](double mark) {
    return static_cast<long>(late.end() - std::upper_bound(late.begin(), late.end(), mark));
  };
  std::printf(
      "{\"wakes\":%zu,\"p50_ms\":%.4f,\"p99_ms\":%.4f,\"max_ms\":%.4f,\"over_0_5ms\":%ld,\"over_2ms\":%ld,"
      "\"class\":\"%s\"}\n",
      late.size(), at(late, 0.5), at(late, 0.99), late.empty() ? 0.0 : late.back(), over(0.5), over(2),
      real_time ? "real-time" : "ordinary");
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string name = argv[i];
    if (name == "--period-ms") {
      options.period_ms = std::atof(argv[i + 1]);
    } else if (name == "--priority") {
      options.priority = std::atoi(argv[i + 1]);
    } else if (name == "--cpu") {
      options.cpu = std::atoi(argv[i + 1]);
    } else {
      std::fprintf(stderr, "usage: machine_timer [--period-ms 10] [--priority P] [--cpu N]\n");
      return 2;
    }
  }
  std::mutex mutex;
  std::vector<double> late;
  std::atomic<bool> running{true};
  std::atomic<bool> real_time{false};
  std::thread timer([&] {
    if (options.cpu >= 0) {
      cpu_set_t cpus;
      CPU_ZERO(&cpus);
      CPU_SET(static_cast<unsigned>(options.cpu), &cpus);
      ::pthread_setaffinity_np(::pthread_self(), sizeof(cpus), &cpus);
    }
    if (options.priority > 0) {
      sched_param param{};
      param.sched_priority = options.priority;
      real_time = ::pthread_setschedparam(::pthread_self(), SCHED_FIFO, &param) == 0;
    }
    timespec due = first_deadline(options.period_ms);
    while (running) {
      const double ms = next_wake_late_ms(due, options.period_ms);
      const std::lock_guard lock(mutex);
      late.push_back(ms);
    }
  });
  const auto take = [&] {
    const std::lock_guard lock(mutex);
    std::vector<double> phase;
    phase.swap(late);
    return phase;
  };
  for (std::string line; std::getline(std::cin, line);) print_phase(take(), real_time);
  running = false;
  timer.join();
  print_phase(take(), real_time);
  return 0;
}
