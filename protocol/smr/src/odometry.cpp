#include "flockbridge/protocol/smr/odometry.hpp"

#include <cmath>
#include <numbers>

namespace flockbridge::protocol::smr {

double Geometry::metres_per_position() const noexcept {
  return std::numbers::pi * wheel_diameter_m / positions_per_turn;
}

double Geometry::speed_units(double metres_per_second) const noexcept {
  return metres_per_second * period_s / metres_per_position();
}

double Geometry::wheel_speed(int speed_units) const noexcept {
  return speed_units * metres_per_position() / period_s;
}

const Pose& Odometry::update(std::uint16_t left, std::uint16_t right, double seconds) {
  if (left_ && right_) {
    // The counters wrap: the step is the shorter way round.
    const auto step = [](std::uint16_t now, std::uint16_t before) {
      return static_cast<std::int16_t>(static_cast<std::uint16_t>(now - before));
    };
    const double metres = geometry_.metres_per_position();
    const double dl = step(left, *left_) * metres;
    const double dr = -step(right, *right_) * metres;  // mounted mirrored
    const double distance = (dl + dr) / 2;
    const double turn = (dr - dl) / geometry_.wheel_base_m;
    const double middle = pose_.heading_rad + turn / 2;
    pose_.x_m += distance * std::cos(middle);
    pose_.y_m += distance * std::sin(middle);
    pose_.heading_rad = std::remainder(pose_.heading_rad + turn, 2 * std::numbers::pi);
    steps_.push_back(Step{distance, turn, seconds});
    while (steps_.size() > window_) steps_.pop_front();
    double metres_total = 0;
    double turn_total = 0;
    double seconds_total = 0;
    for (const Step& recent : steps_) {
      metres_total += recent.distance_m;
      turn_total += recent.turn_rad;
      seconds_total += recent.seconds;
    }
    if (seconds_total > 0) {
      pose_.v_m_s = metres_total / seconds_total;
      pose_.w_rad_s = turn_total / seconds_total;
    }
  }
  left_ = left;
  right_ = right;
  return pose_;
}

void Odometry::reset() noexcept {
  pose_ = Pose{};
  steps_.clear();
  left_.reset();
  right_.reset();
}

}  // namespace flockbridge::protocol::smr
