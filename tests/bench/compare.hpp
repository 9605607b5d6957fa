// compare_bench's families: each plays its robot on pseudo-terminals and
// measures the bridge beside ser2net on the same workloads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "flockbridge/protocol/bytes.hpp"
#include "support/bench.hpp"
#include "support/process.hpp"

namespace flockbridge::testing::bench {

struct Options {
  std::string robot = "flockbot";
  double seconds = 0;  ///< per phase; 0: the family's default
  double rate_hz = 0;  ///< sensor packets a second; 0: the family's default
  bool ser2net = true;
  bool isolate = true;
  bool record = false;  ///< the bridge records the run as it serves (--record)
  /// The threads timing the period, and the machine's timer, in the
  /// real-time class just below the bridge's (SCHED_FIFO 10), as a control
  /// program that asks for it (--real-time).
  bool real_time = false;
  /// The bridge in the ordinary class (its --no-real-time): what the
  /// real-time class it asks for by default changes (--ordinary).
  bool ordinary = false;
};

/// The bridge's arguments for its scheduling class: none (it asks for the
/// real-time class, as installed), or --no-real-time with --ordinary.
[[nodiscard]] inline std::vector<std::string> class_args(const Options& options) {
  return options.ordinary ? std::vector<std::string>{"--no-real-time"} : std::vector<std::string>{};
}

/// The Flockbot: ports 2005 and 2006, sensor frames from the Uno.
void compare_flockbot(const Options& options, const Placement& placement);
/// The Pioneer: ARIA programs on port 8101 and JSON clients, SIPs from the robot.
void compare_pioneer(const Options& options, const Placement& placement);
/// The SMR: SMR programs on port 24901 and JSON clients, the bus polled every 10 ms.
void compare_smr(const Options& options, const Placement& placement);

/// What the floor server (compare_floor.cpp) needs of a family: the
/// sequence numbers in the robot's bytes, the JSON keys that carry one as
/// the family's JSON reader finds them, and for a robot that is polled the
/// bytes that poll it every 10 ms.
struct FloorRecipe {
  SeqParser robot;
  std::function<std::string(long seq)> keys;
  protocol::Bytes poll;  ///< empty: the robot sends unasked
};
[[nodiscard]] FloorRecipe flockbot_floor();
[[nodiscard]] FloorRecipe pioneer_floor();
[[nodiscard]] FloorRecipe smr_floor();

/// The floor server's loop, as `compare_bench --floor-server ROBOT DEVICE BYTES` runs it.
int floor_server(const std::string& robot, const std::string& device, std::size_t bytes);

/// A floor server started for `robot`'s readings on `device`, its lines `bytes` long.
struct Floor {
  std::unique_ptr<ChildProcess> process;
  std::uint16_t port = 0;
};
[[nodiscard]] Floor start_floor(const Placement& placement, const std::string& robot, const std::string& device,
                                std::size_t bytes);

/// A floor server for `robot`'s readings on `source`'s pseudo-terminal
/// (`device`), its lines `bytes` long, found by `seq`, the source paced at
/// `rate_hz` while it is measured (0: the floor polls it). It runs from its
/// making to its end, as the bridge does, and its readers come and go.
class FloorServer {
 public:
  FloorServer(const Placement& placement, const std::string& robot, SensorSource& source, const std::string& device,
              std::size_t bytes, long (*seq)(std::string_view), double rate_hz);
  /// `clients` JSON readers connected, measured for `seconds` and let go;
  /// prints the figures as the bridge's are printed.
  [[nodiscard]] Workload measure(double seconds, int clients = 1000);

 private:
  Floor floor_;
  SensorSource& source_;
  long (*seq_)(std::string_view);
  double rate_hz_;
};

/// The server's CPU time per message delivered, in microseconds.
[[nodiscard]] double per_message_us(const Workload& load);

/// The bridge's CPU per message at 1000 JSON clients against the floor's,
/// measured in turns: a single phase of each, seconds apart, differs by as
/// much as the machine drifts (the floor alone by a quarter between two
/// runs here), so the servers take turns in pairs, the order swapped each
/// pair (bridge, floor; floor, bridge; ...), and each pair gives a ratio.
struct FloorComparison {
  std::vector<double> bridge_us;  ///< CPU per message delivered, each trial
  std::vector<double> floor_us;
  std::vector<double> ratios;  ///< each pair's bridge / floor, in the pairs' order
  [[nodiscard]] double median_ratio() const;
};

/// `pairs` pairs of trials, under a heading line; a trial connects its
/// clients, measures and lets them go, so that the idle server's clients
/// cost nothing meanwhile.
[[nodiscard]] FloorComparison alternate_with_floor(const std::function<Workload()>& bridge_trial,
                                                   const std::function<Workload()>& floor_trial, int pairs);
/// How many pairs a run of `seconds` a phase measures: one in a check run.
[[nodiscard]] int floor_pairs(double seconds);

/// "CPU per message delivered to 1000 clients: ..." with each pair's
/// figures and their ratio.
void print_floor_ratio(const FloorComparison& comparison, std::size_t bytes);
/// The median pair's ratio as a line of the summary.
void summarize_floor(const FloorComparison& comparison, std::size_t bytes);

/// The length of the bridge's sensor message (its line, with the newline),
/// read from its JSON port while readings flow.
[[nodiscard]] std::size_t sensor_line_bytes(std::uint16_t json_port);

}  // namespace flockbridge::testing::bench
