// compare_bench's families: each plays its robot on pseudo-terminals and
// measures the bridge beside ser2net on the same workloads.
#pragma once

#include <string>

#include "support/bench.hpp"

namespace flockbridge::testing::bench {

struct Options {
  std::string robot = "flockbot";
  double seconds = 0;  ///< per phase; 0: the family's default
  double rate_hz = 0;  ///< sensor packets a second; 0: the family's default
  bool ser2net = true;
  bool isolate = true;
};

/// The Flockbot: ports 2005 and 2006, sensor frames from the Uno.
void compare_flockbot(const Options& options, const Placement& placement);
/// The Pioneer: ARIA programs on port 8101 and JSON clients, SIPs from the robot.
void compare_pioneer(const Options& options, const Placement& placement);
/// The SMR: SMR programs on port 24901 and JSON clients, the bus polled every 10 ms.
void compare_smr(const Options& options, const Placement& placement);

}  // namespace flockbridge::testing::bench
