// flockbridge doctor: run on the robot's computer, it looks at what the
// bridge needs and says, in words, what is wrong and how to mend it: the
// configuration, the service, each serial device (who may open it, who
// holds it, which robot answers on it), the ports, the clock, the
// recordings' disk, the class's broker and the udev rules. It changes
// nothing: a device the running bridge serves is not opened, and one held
// by another program is not probed.
#pragma once

#include <string>
#include <vector>

namespace flockbridge::bridge::doctor {

enum class Verdict {
  Well,     ///< as it should be
  Note,     ///< worth knowing, nothing to mend (no systemd here, say)
  Problem,  ///< the bridge or its users will suffer from it
};

struct Finding {
  Verdict verdict = Verdict::Well;
  std::string topic;  ///< what was looked at: "serial device /dev/ttyUSB0"
  std::string said;   ///< what was found, in words
  std::string fix;    ///< for a problem: what to do about it
};

/// `flockbridge doctor [options]`: the bridge's own options and
/// configuration file say what to check; prints the findings, and returns
/// 0 only when none is a problem (1 otherwise, 78 for a bad option).
[[nodiscard]] int run(int argc, const char* const* argv);

/// The findings as doctor prints them.
[[nodiscard]] std::string report(const std::vector<Finding>& findings);

}  // namespace flockbridge::bridge::doctor
