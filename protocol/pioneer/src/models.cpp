#include "flockbridge/protocol/pioneer/models.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <numbers>

namespace flockbridge::protocol::pioneer {
namespace {

// The parameter files print AngleConvFactor rounded (0.00153) beside its
// meaning, 2 pi / 4096; ARIA's built-in default is 0.001534. The meaning is used.
constexpr double kAngleConv = 2 * std::numbers::pi / 4096;

// params/p2dx.p, p3dx.p, p3dx-sh.p: 16 discs, front and rear rings.
constexpr std::array kPioneerSonar{
    SonarPose{69, 136, 90},     SonarPose{114, 119, 50},     SonarPose{148, 78, 30},     SonarPose{166, 27, 10},
    SonarPose{166, -27, -10},   SonarPose{148, -78, -30},    SonarPose{114, -119, -50},  SonarPose{69, -136, -90},
    SonarPose{-157, -136, -90}, SonarPose{-203, -119, -130}, SonarPose{-237, -78, -150}, SonarPose{-255, -27, -170},
    SonarPose{-255, 27, 170},   SonarPose{-237, 78, 150},    SonarPose{-203, 119, 130},  SonarPose{-157, 136, 90},
};
// params/p3at-sh.p.
constexpr std::array kP3atSonar{
    SonarPose{147, 136, 90},    SonarPose{193, 119, 50},     SonarPose{227, 79, 30},     SonarPose{245, 27, 10},
    SonarPose{245, -27, -10},   SonarPose{227, -79, -30},    SonarPose{193, -119, -50},  SonarPose{147, -136, -90},
    SonarPose{-144, -136, -90}, SonarPose{-189, -119, -130}, SonarPose{-223, -79, -150}, SonarPose{-241, -27, -170},
    SonarPose{-241, 27, 170},   SonarPose{-223, 79, 150},    SonarPose{-189, 119, 130},  SonarPose{-144, 136, 90},
};
// params/amigo.p: 8 discs.
constexpr std::array kAmigoSonar{
    SonarPose{76, 100, 90},   SonarPose{125, 75, 41},   SonarPose{150, 30, 15},     SonarPose{150, -30, -15},
    SonarPose{125, -75, -41}, SonarPose{76, -100, -90}, SonarPose{-140, -58, -145}, SonarPose{-140, 58, 145},
};
// params/amigo-sh.p.
constexpr std::array kAmigoShSonar{
    SonarPose{70, 100, 90},   SonarPose{125, 75, 41},   SonarPose{144, 30, 15},     SonarPose{144, -30, -15},
    SonarPose{120, -75, -41}, SonarPose{70, -100, -90}, SonarPose{-146, -58, -145}, SonarPose{-146, 58, 145},
};

// subclass, class, radius, width, front, rear, max vel, max rot vel, baud,
// angle, dist, vel, range, diff, vel2 divisor, sonar.
const std::array kModels{
    RobotModel{"p2dx", "Pioneer", 250, 425, 210, 301, 2200, 500, 38400, kAngleConv, 0.84, 1.0, 0.268, 0.0056, 20,
               kPioneerSonar},
    RobotModel{"p3dx", "Pioneer", 250, 425, 210, 301, 2200, 500, 38400, kAngleConv, 0.485, 1.0, 1.0, 0.0056, 20,
               kPioneerSonar},
    RobotModel{"p3dx-sh", "Pioneer", 250, 425, 210, 301, 2200, 500, 38400, kAngleConv, 1.0, 1.0, 1.0, 0.0056, 20,
               kPioneerSonar},
    RobotModel{"p3at-sh", "Pioneer", 500, 505, 313, 313, 1200, 300, 38400, kAngleConv, 1.0, 1.0, 1.0, 0.0034, 20,
               kP3atSonar},
    RobotModel{"amigo", "Pioneer", 180, 279, 160, 170, 1000, 300, 38400, kAngleConv, 0.5083, 0.6154, 1.0, 0.011, 20,
               kAmigoSonar},
    RobotModel{"amigo-sh", "Pioneer", 180, 279, 160, 170, 1000, 300, 38400, kAngleConv, 1.0, 1.0, 1.0, 0.011, 20,
               kAmigoShSonar},
};

double radians_to_degrees(double radians) {
  return radians * 180.0 / std::numbers::pi;
}

/// A 15-bit counter's step, unwrapped as ARIA does.
int counter_step(int now, int before) {
  int step = now - before;
  if (step > 0x1000) step -= 0x8000;
  if (step < -0x1000) step += 0x8000;
  return step;
}

}  // namespace

double normalise_degrees(double degrees) noexcept {
  double wrapped = std::fmod(degrees, 360.0);
  if (wrapped > 180.0) wrapped -= 360.0;
  if (wrapped <= -180.0) wrapped += 360.0;
  return wrapped;
}

std::span<const RobotModel> robot_models() noexcept {
  return kModels;
}

const RobotModel* find_robot_model(std::string_view subclass) noexcept {
  const auto same = [&](std::string_view name) {
    return name.size() == subclass.size() && std::equal(name.begin(), name.end(), subclass.begin(), [](char a, char b) {
             return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
           });
  };
  const auto found =
      std::find_if(kModels.begin(), kModels.end(), [&](const RobotModel& m) { return same(m.subclass); });
  return found == kModels.end() ? nullptr : &*found;
}

SipReading convert_sip(const StandardSip& sip, const RobotModel& model) {
  SipReading reading;
  reading.left_velocity_mm_s = sip.left_velocity * model.vel_conv;
  reading.right_velocity_mm_s = sip.right_velocity * model.vel_conv;
  reading.velocity_mm_s = (reading.left_velocity_mm_s + reading.right_velocity_mm_s) / 2;
  reading.rotational_velocity_deg_s =
      sip.rotational_velocity_tenths
          ? *sip.rotational_velocity_tenths / 10.0
          : radians_to_degrees((reading.right_velocity_mm_s - reading.left_velocity_mm_s) / 2 * model.diff_conv);
  reading.battery_v = sip.battery_x10 ? *sip.battery_x10 / 10.0 : sip.battery_tenths / 10.0;
  reading.heading_setpoint_deg = normalise_degrees(radians_to_degrees((sip.control - sip.th) * model.angle_conv));
  reading.compass_deg = 2 * sip.compass;
  reading.sonar.reserve(sip.sonar.size());
  for (const SonarReading& r : sip.sonar) reading.sonar.push_back({r.number, r.range * model.range_conv});
  return reading;
}

Pose PoseTracker::update(const StandardSip& sip) {
  const int x = sip.x & 0x7FFF;
  const int y = sip.y & 0x7FFF;
  if (!started_) {
    started_ = true;
    x_mm_ = x * model_->dist_conv;
    y_mm_ = y * model_->dist_conv;
  } else {
    x_mm_ += counter_step(x, last_x_) * model_->dist_conv;
    y_mm_ += counter_step(y, last_y_) * model_->dist_conv;
  }
  last_x_ = x;
  last_y_ = y;
  return Pose{x_mm_, y_mm_, normalise_degrees(radians_to_degrees(sip.th * model_->angle_conv))};
}

}  // namespace flockbridge::protocol::pioneer

namespace flockbridge::protocol::pioneer {

RobotGeometry robot_geometry(const RobotModel* model) {
  RobotGeometry g;
  for (const char* ring : {"front_", "rear_"}) {
    for (int i = 1; i <= kBumpersPerRing; ++i) g.bumpers.push_back(ring + std::to_string(i));
  }
  if (model == nullptr) return g;
  g.radius_mm = model->radius_mm;
  g.length_mm = model->length_front_mm + model->length_rear_mm;
  g.width_mm = model->width_mm;
  // DiffConvFactor turns half the wheels' speed difference into rad/s:
  // w = (right - left) / 2 * factor, so the wheels are 2 / factor apart.
  if (model->diff_conv > 0) g.wheel_base_mm = std::round(2 / model->diff_conv);
  g.max_v_mm_s = model->max_velocity_mm_s;
  g.max_w_deg_s = model->max_rot_velocity_deg_s;
  for (std::size_t i = 0; i < model->sonar.size(); ++i) {
    const SonarPose& disc = model->sonar[i];
    g.ranges.push_back(RangeSensor{.name = "sonar" + std::to_string(i),
                                   .kind = RangeKind::Sonar,
                                   .deg = disc.heading_deg,
                                   .x_mm = disc.x_mm,
                                   .y_mm = disc.y_mm,
                                   .max_mm = kSonarMaxMm});
  }
  return g;
}

std::uint64_t bumped(const StandardSip& sip) noexcept {
  constexpr unsigned kRing = (1U << kBumpersPerRing) - 1;
  const unsigned front = (sip.stall_and_bumpers >> 1) & kRing;
  const unsigned rear = (sip.stall_and_bumpers >> 9) & kRing;
  return front | (static_cast<std::uint64_t>(rear) << kBumpersPerRing);
}

}  // namespace flockbridge::protocol::pioneer
