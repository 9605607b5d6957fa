// A simulated robot plugged into its device (a pseudo-terminal, or TCP),
// as the simulator program drives it: whatever the family, it can be
// unplugged, rebooted and silenced, and its line's noise counted. Each
// family's sim/<codec>/host/ folder has one (a PtyRobot<Model>, or a class of
// its own).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include "flockbridge/protocol/bytes.hpp"
#include "flockbridge/sim/line_faults.hpp"
#include "flockbridge/sim/world.hpp"

namespace flockbridge::sim {

/// What every simulated robot is given, whatever its family: where it
/// appears, the noise on its line, and the seed of everything random.
struct SimulatedLine {
  std::string link;  ///< the symlink to the pseudo-terminal
  /// Served over TCP on 127.0.0.1 at this port instead of a pseudo-terminal
  /// (0: a free one), for a family that can (SimulatedFamily::serves_tcp).
  std::optional<std::uint16_t> listen_port;
  LineFaultSettings to_host;   ///< noise on what the robot sends
  LineFaultSettings to_robot;  ///< noise on what the robot receives
  std::uint32_t seed = 1;
};

class SimRobot {
 public:
  using Log = std::function<void(std::string_view)>;

  SimRobot() = default;
  SimRobot(const SimRobot&) = delete;
  SimRobot& operator=(const SimRobot&) = delete;
  virtual ~SimRobot() = default;

  /// Makes the device appear (at `link_path`, for a pseudo-terminal).
  [[nodiscard]] virtual protocol::Result<protocol::Done> plug_in(const std::string& link_path) = 0;
  /// The device vanishes.
  virtual void unplug() = 0;
  /// The robot restarts while its device stays.
  virtual void reboot() = 0;
  /// Stops or resumes sending anything (the robot's side of a broken cable).
  virtual void set_silent(bool silent) = 0;
  /// Stops everything; the loop can then finish.
  virtual void close() = 0;
  /// What the host opens: a path, or tcp:127.0.0.1:PORT.
  [[nodiscard]] virtual std::string device_path() const = 0;
  [[nodiscard]] virtual const LineFaults& to_host_faults() const = 0;
  [[nodiscard]] virtual const LineFaults& to_robot_faults() const = 0;
  /// The room it drives in (its walls and boxes, in millimetres in the frame
  /// of its odometry: 0, 0 where it starts, facing +x); null for a robot that
  /// drives in no room.
  [[nodiscard]] virtual const World* world() const { return nullptr; }
  /// The robot's side of the line in the counters line ("to-uno", "to-robot").
  [[nodiscard]] virtual std::string_view robot_side() const noexcept { return "to-robot"; }
  /// Runs a command only this robot knows, answering through `say`; false
  /// when it is not one of them.
  virtual bool run_command(const std::string& command, std::istringstream& words, const Log& say) = 0;
  /// Whether the robot's wheels are told to turn now: the simulator reports
  /// each change ("wheels turning", "wheels stopped").
  [[nodiscard]] virtual bool wheels_turning() const = 0;
};

}  // namespace flockbridge::sim
