// The robot model every family fills: one robot state and one geometry, in
// millimetres, degrees and volts, with stated frames, as every gpsd driver
// fills one time-position-velocity report. Clients, pages and telemetry read
// these; each family's own fields stay beside them for programs that want
// them.
//
// Frames: the robot's own frame has x forward, y to the left, angles
// counter-clockwise from the front; the pose is in the odometry's frame,
// which starts where the robot was when the bridge started (or at the last
// reset_pose), facing +x. A value the bridge cannot know without
// configuration is left empty (JSON null), never guessed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace flockbridge::protocol {

enum class RangeKind : std::uint8_t { Ir, Sonar };

[[nodiscard]] std::string_view range_kind_name(RangeKind kind) noexcept;

/// One range sensor and where it is mounted on the robot.
struct RangeSensor {
  std::string name;  ///< "front", "left", "sonar3", ...
  RangeKind kind = RangeKind::Ir;
  std::optional<double> deg;     ///< its axis, from the robot's front, counter-clockwise
  std::optional<double> x_mm;    ///< from the robot's centre, forward
  std::optional<double> y_mm;    ///< from the robot's centre, to the left
  std::optional<double> max_mm;  ///< the farthest it reports; beyond it a reading is empty

  friend bool operator==(const RangeSensor&, const RangeSensor&) = default;
};

/// What a robot is: its size, its wheels, its top speeds and its sensors.
struct RobotGeometry {
  std::optional<double> radius_mm;  ///< the circle that holds the robot, about its centre of rotation
  std::optional<double> length_mm;  ///< a robot that is not round: front to back
  std::optional<double> width_mm;   ///< and side to side
  std::optional<double> wheel_base_mm;
  std::optional<double> max_v_mm_s;
  std::optional<double> max_w_deg_s;
  std::vector<RangeSensor> ranges;
  std::vector<std::string> bumpers;  ///< "front", "front_1", ...: the names `bumped` uses

  friend bool operator==(const RobotGeometry&, const RobotGeometry&) = default;
};

struct Pose {
  double x_mm = 0;
  double y_mm = 0;
  double th_deg = 0;  ///< -180 < th_deg <= 180

  friend bool operator==(const Pose&, const Pose&) = default;
};

/// The robot's state in one sensor reading.
struct RobotState {
  std::optional<Pose> pose;
  std::optional<double> v_mm_s;   ///< forward speed, measured
  std::optional<double> w_deg_s;  ///< turn rate, measured, counter-clockwise
  std::optional<double> battery_v;  ///< rounded by the driver to what its robot reports
  /// One distance per RobotGeometry::ranges entry, in its order; empty when
  /// the sensor sees nothing in range or its conversion is not known.
  std::vector<std::optional<double>> ranges_mm;
  /// Bit i set: RobotGeometry::bumpers[i] is pressed now.
  std::uint64_t bumped = 0;
};

/// A heading in degrees, brought into (-180, 180].
[[nodiscard]] double normalized_degrees(double degrees) noexcept;

/// The pose and speeds two wheels' travel adds up to (a differential drive),
/// in whatever unit of length the caller uses for both wheels and the wheel
/// base.
class WheelOdometry {
 public:
  /// The speeds are the travel of the last `window` steps over their time:
  /// one step of an encoder is too coarse for a speed on its own.
  explicit WheelOdometry(double wheel_base, std::size_t window = 10) : wheel_base_(wheel_base), window_(window) {}

  /// Adds one step: each wheel's travel (forward positive) in `seconds`.
  void step(double left, double right, double seconds);
  void reset() noexcept;
  void set_wheel_base(double wheel_base) noexcept { wheel_base_ = wheel_base; }

  [[nodiscard]] double x() const noexcept { return x_; }
  [[nodiscard]] double y() const noexcept { return y_; }
  [[nodiscard]] double heading_rad() const noexcept { return heading_rad_; }
  [[nodiscard]] double speed() const noexcept { return speed_; }          ///< length a second
  [[nodiscard]] double turn_rate() const noexcept { return turn_rate_; }  ///< radians a second
  /// The pose in millimetres and degrees, for odometry kept in `mm_per_unit`.
  [[nodiscard]] Pose pose(double mm_per_unit = 1) const noexcept;

 private:
  struct Step {
    double distance;
    double turn_rad;
    double seconds;
  };
  double wheel_base_;
  std::size_t window_;
  std::deque<Step> steps_;
  double x_ = 0;
  double y_ = 0;
  double heading_rad_ = 0;
  double speed_ = 0;
  double turn_rate_ = 0;
};

/// A range sensor's distance from its reading, for sensors whose output
/// falls as the inverse of the distance (IR rangers of the Sharp kind):
/// mm = k / (raw - offset). Empty when k is 0 (not known), when the reading
/// is at or below the offset, or when the distance is beyond `max_mm`.
struct InverseRange {
  double k = 0;
  double offset = 0;
  double max_mm = 800;

  [[nodiscard]] std::optional<double> mm(double raw) const noexcept;
  /// The reading a sensor gives at `mm` (for simulators and calibration).
  [[nodiscard]] double raw(double mm) const noexcept { return offset + k / mm; }
  [[nodiscard]] bool known() const noexcept { return k != 0; }

  friend bool operator==(const InverseRange&, const InverseRange&) = default;
};

}  // namespace flockbridge::protocol
