#include "flockbridge/protocol/robot_model.hpp"

#include <cmath>
#include <numbers>

namespace flockbridge::protocol {

std::string_view range_kind_name(RangeKind kind) noexcept {
  return kind == RangeKind::Sonar ? "sonar" : "ir";
}

double normalized_degrees(double degrees) noexcept {
  double d = std::remainder(degrees, 360.0);
  if (d <= -180.0) d += 360.0;
  return d;
}

void WheelOdometry::step(double left, double right, double seconds) {
  const double distance = (left + right) / 2;
  const double turn = (right - left) / wheel_base_;
  // Along the chord: the heading halfway through the step.
  const double middle = heading_rad_ + turn / 2;
  x_ += distance * std::cos(middle);
  y_ += distance * std::sin(middle);
  heading_rad_ = std::remainder(heading_rad_ + turn, 2 * std::numbers::pi);
  steps_.push_back(Step{distance, turn, seconds});
  while (steps_.size() > window_) steps_.pop_front();
  double distance_total = 0;
  double turn_total = 0;
  double seconds_total = 0;
  for (const Step& recent : steps_) {
    distance_total += recent.distance;
    turn_total += recent.turn_rad;
    seconds_total += recent.seconds;
  }
  if (seconds_total > 0) {
    speed_ = distance_total / seconds_total;
    turn_rate_ = turn_total / seconds_total;
  }
}

void WheelOdometry::reset() noexcept {
  steps_.clear();
  x_ = y_ = heading_rad_ = speed_ = turn_rate_ = 0;
}

Pose WheelOdometry::pose(double mm_per_unit) const noexcept {
  return Pose{x_ * mm_per_unit, y_ * mm_per_unit, normalized_degrees(heading_rad_ * 180.0 / std::numbers::pi)};
}

std::optional<double> InverseRange::mm(double raw) const noexcept {
  if (k == 0 || raw <= offset) return std::nullopt;
  const double distance = k / (raw - offset);
  if (distance < 0 || distance > max_mm) return std::nullopt;
  return distance;
}

}  // namespace flockbridge::protocol
