// The robot models of the family, as facts from ARIA's parameter files
// (params/<subclass>.p): the factors that turn a SIP's raw values into
// millimetres, degrees and seconds, the speed limits, and the sonar layout.
// A robot's SYNC2 answer names its subclass, which picks the row (unless
// the bridge is told otherwise with --model).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "flockbridge/protocol/pioneer/sip.hpp"
#include "flockbridge/protocol/robot_model.hpp"

namespace flockbridge::protocol::pioneer {

/// Where a sonar disc sits on the robot and where it looks.
struct SonarPose {
  int x_mm = 0;  ///< forwards from the centre of rotation
  int y_mm = 0;  ///< to the left
  int heading_deg = 0;
};

struct RobotModel {
  std::string_view subclass;  ///< "p3dx-sh"; what SYNC2 names, lowercased
  std::string_view type;      ///< the class, "Pioneer" for every row here
  int radius_mm = 0;
  int width_mm = 0;
  int length_front_mm = 0;
  int length_rear_mm = 0;
  int max_velocity_mm_s = 0;
  int max_rot_velocity_deg_s = 0;
  int switch_to_baud = 0;   ///< the HOST baud ARIA moves a serial link to, 0: none
  double angle_conv = 0;    ///< radians per heading unit
  double dist_conv = 0;     ///< mm per position unit
  double vel_conv = 0;      ///< mm/s per velocity unit
  double range_conv = 0;    ///< mm per sonar unit
  double diff_conv = 0;     ///< rad/s per mm/s of wheel speed difference / 2
  double vel2_divisor = 0;  ///< VEL2's unit, mm/s
  std::span<const SonarPose> sonar;
};

/// The farthest a sonar disc reports, mm: a reading at or beyond it saw no echo.
inline constexpr double kSonarMaxMm = 5000;
/// Bumpers a Pioneer's SIP reports: bits 1-5 of STALL_AND_BUMPERS the front
/// ring's, 9-13 the rear's, as ARIA's parameter files count them (NumFrontBumpers 5).
inline constexpr int kBumpersPerRing = 5;

/// The common robot model's geometry of a model (footprint, wheel base from
/// DiffConvFactor, top speeds, its sonar discs sonar0..N, the bumpers
/// front_1..5 and rear_1..5); only the bumpers when the model is not known.
[[nodiscard]] RobotGeometry robot_geometry(const RobotModel* model);
/// The bumpers pressed in a SIP, as RobotState::bumped bits of robot_geometry's bumpers.
[[nodiscard]] std::uint64_t bumped(const StandardSip& sip) noexcept;

/// Every model in the table.
[[nodiscard]] std::span<const RobotModel> robot_models() noexcept;

/// The model of a subclass, whatever its case ("P3DX-SH" finds p3dx-sh).
[[nodiscard]] const RobotModel* find_robot_model(std::string_view subclass) noexcept;

/// A SIP in the units people use, for one model. The pose is integrated
/// over SIPs (PoseTracker); everything else comes from the SIP alone.
struct SipReading {
  double left_velocity_mm_s = 0;
  double right_velocity_mm_s = 0;
  double velocity_mm_s = 0;              ///< the mean of the wheels
  double rotational_velocity_deg_s = 0;  ///< the robot's ROTVEL when it sends one, else from the wheels
  double battery_v = 0;                  ///< BATTERYX10 when sent, else BATTERY
  double heading_setpoint_deg = 0;       ///< CONTROL, relative to the heading
  int compass_deg = 0;
  struct Range {
    int sonar = 0;
    double range_mm = 0;
  };
  std::vector<Range> sonar;
};

[[nodiscard]] SipReading convert_sip(const StandardSip& sip, const RobotModel& model);

/// Degrees in (-180, 180].
[[nodiscard]] double normalise_degrees(double degrees) noexcept;

struct Pose {
  double x_mm = 0;
  double y_mm = 0;
  double th_deg = 0;  ///< -180 < th <= 180
};

/// The robot's position from its SIPs. XPOS and YPOS are 15-bit counters
/// that wrap; a step of more than 0x1000 units between two SIPs is taken
/// as a wrap, as ARIA does. The first SIP gives the starting pose.
class PoseTracker {
 public:
  explicit PoseTracker(const RobotModel& model) : model_(&model) {}
  /// The pose after this SIP.
  Pose update(const StandardSip& sip);
  /// Starts again from the next SIP (after the robot link was re-established).
  void reset() noexcept { started_ = false; }

 private:
  const RobotModel* model_;
  bool started_ = false;
  int last_x_ = 0;
  int last_y_ = 0;
  double x_mm_ = 0;
  double y_mm_ = 0;
};

}  // namespace flockbridge::protocol::pioneer
