// The Flockbot as the common robot model sees it (robot_model.hpp): its
// geometry and its state, from the Uno's raw sensor packets and the
// conversions a robot's configuration gives.
//
// Conditions of the problem: the Uno's packet gives raw counts with no units
// (protocol decisions, section 3): a battery reading, five IR readings, two
// bump bytes, three 16-bit odometers that wrap and start again at 0 when the
// Uno reboots or is told D M R. So:
// - battery volts and IR distances need conversions from configuration
//   (battery_volts_per_count; an inverse law k / (raw - offset) for the IR,
//   which falls with distance as Sharp rangers do), and are empty until set;
// - the pose adds up the odometers' steps (odometer_mm_per_count and the
//   wheel base): a step longer than a robot can travel between two packets
//   is a reset of the odometers, not a move, and starts the steps again;
// - the IR sensors' mounting and the robot's size are the robot's, not the
//   protocol's: empty until configured;
// - bumped names the bits of l_bump (bits 0-7) and h_bump (8-15) that are set.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "flockbridge/protocol/flockbot/uno_packets.hpp"
#include "flockbridge/protocol/robot_model.hpp"

namespace flockbridge::protocol::flockbot {

inline constexpr std::size_t kIrCount = 5;
inline constexpr std::size_t kBumpBits = 16;

/// What a Flockbot's configuration says about its body and its IR sensors.
struct FlockbotBody {
  double radius_mm = 0;  ///< 0: not known
  /// Each IR sensor's axis, from the front, counter-clockwise (degrees);
  /// empty: not known, and the sensors are named ir0..ir4.
  std::vector<double> ir_deg;
  double ir_mount_mm = 0;  ///< from the robot's centre to the sensors (0: not known)
  InverseRange ir_range;   ///< raw IR reading to mm (k 0: not known)

  friend bool operator==(const FlockbotBody&, const FlockbotBody&) = default;
};

/// The project's simulated Uno (sim/flockbot): what its readings mean. The
/// simulator plays these values and `--simulate` reads its robot with them.
struct SimulatedUno {
  static constexpr double kOdometerMmPerCount = 1.0;
  static constexpr double kWheelWatcherMmPerCount = 3.25;
  static constexpr double kWheelMmSPerPercent = 10.0;
  static constexpr double kWheelBaseMm = 100.0;
  static constexpr double kBatteryVoltsPerCount = 0.00925;  ///< 800 counts: 7.4 V
  static constexpr double kRadiusMm = 90.0;
  static constexpr double kIrMountMm = 80.0;
  static constexpr std::array<double, kIrCount> kIrDeg{90, 45, 0, -45, -90};
  static constexpr InverseRange kIrRange{.k = 120'000, .offset = 20, .max_mm = 800};

  [[nodiscard]] static SensorUnits units();
  [[nodiscard]] static FlockbotBody body();
};

/// The robot model's geometry of a Flockbot with these settings.
[[nodiscard]] RobotGeometry robot_geometry(const SensorUnits& units, const FlockbotBody& body);

/// A range sensor's name from the angle of its axis: front, left, right,
/// rear, front_left, front_right, rear_left, rear_right; `fallback` for
/// other angles or none.
[[nodiscard]] std::string range_name(std::optional<double> deg, std::string fallback);

/// Turns the Uno's sensor packets into robot states.
class FlockbotState {
 public:
  FlockbotState(const SensorUnits& units, const FlockbotBody& body);

  /// The state after one sensor packet, `seconds` after the one before.
  [[nodiscard]] RobotState update(const SensorReading& reading, double seconds);
  /// The pose starts again at 0, 0, 0 from the next packet.
  void reset_pose() noexcept;
  /// New settings; the pose is kept.
  void configure(const SensorUnits& units, const FlockbotBody& body);
  /// The Uno has been told to start its odometers again (D M R) or has
  /// rebooted: within the next second of packets, a step that lands both
  /// odometers nearer 0 than it moved them is that reset, not a move.
  void expect_odometer_reset() noexcept { reset_expected_for_ = kResetWindowPackets; }
  /// Odometer steps taken for a reset of the odometers (a reboot or D M R).
  [[nodiscard]] std::uint64_t odometer_resets() const noexcept { return odometer_resets_; }

 private:
  SensorUnits units_;
  FlockbotBody body_;
  WheelOdometry odometry_;
  std::optional<std::array<std::int16_t, 2>> last_odometers_;
  std::uint64_t odometer_resets_ = 0;
  static constexpr unsigned kResetWindowPackets = 40;
  unsigned reset_expected_for_ = 0;
};

}  // namespace flockbridge::protocol::flockbot
