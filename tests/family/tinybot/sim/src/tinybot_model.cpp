#include "flockbridge/sim/tinybot/tinybot_model.hpp"

#include <cmath>
#include <numbers>
#include <string>

namespace flockbridge::sim::tinybot {
namespace {

namespace bot = protocol::tinybot;

constexpr std::chrono::milliseconds kStep{10};  ///< the motion's integration step

}  // namespace

TinybotModel::TinybotModel(TinybotModelSettings settings, std::function<void(protocol::ByteView)> transmit,
                           std::function<void(std::string_view)> log)
    : settings_(std::move(settings)), transmit_(std::move(transmit)), log_(std::move(log)) {}

void TinybotModel::bytes_received(protocol::ByteView bytes, protocol::SteadyTime now) {
  advance(now);
  lines_.feed(bytes);
  while (const auto line = lines_.next()) on_line(*line, now);
}

void TinybotModel::on_line(std::string_view line, protocol::SteadyTime now) {
  if (line == "PING") {
    transmit_(bot::encode_pong());
    if (!next_reading_) next_reading_ = now;
    return;
  }
  const auto speeds = bot::read_command(line);
  if (!speeds) {
    log_("rx unknown " + std::string(line.substr(0, 40)));
    return;
  }
  speeds_ = *speeds;
  log_(line == "X" ? std::string("rx stop")
                   : "rx speeds " + std::to_string(speeds_.left_mm_s) + " " + std::to_string(speeds_.right_mm_s));
}

void TinybotModel::tick(protocol::SteadyTime now) {
  advance(now);
  if (!next_reading_ || now < *next_reading_) return;
  const std::string line = bot::reading_line(reading());
  transmit_(protocol::as_bytes(line));
  // A tick that came late does not make a burst of readings.
  *next_reading_ += bot::kReadingPeriod;
  if (*next_reading_ <= now) *next_reading_ = now + bot::kReadingPeriod;
}

std::optional<protocol::SteadyTime> TinybotModel::next_deadline() const {
  return next_reading_;
}

double TinybotModel::heading_deg() const noexcept {
  return heading_rad_ * 180 / std::numbers::pi;
}

void TinybotModel::advance(protocol::SteadyTime now) {
  if (!last_advance_) last_advance_ = now;
  double remaining = std::chrono::duration<double>(now - *last_advance_).count();
  last_advance_ = now;
  const double step_s = std::chrono::duration<double>(kStep).count();
  while (remaining > 0) {
    const double step = std::min(remaining, step_s);
    remaining -= step;
    const double left = speeds_.left_mm_s * step;
    const double right = speeds_.right_mm_s * step;
    const double distance = (left + right) / 2;
    const double turn = (right - left) / bot::kWheelBaseMm;
    const double middle = heading_rad_ + turn / 2;
    const double x = x_mm_ + distance * std::cos(middle);
    const double y = y_mm_ + distance * std::sin(middle);
    if (settings_.world.collides(x, y, bot::kRadiusMm)) {
      // Against a wall or the box: the wheels stand still; the bumper is
      // pressed when what it touches is ahead.
      const auto towards = settings_.world.contact(x_mm_, y_mm_, bot::kRadiusMm + 1);
      bumped_ = towards && std::cos(*towards - heading_rad_) > 0.5;
      continue;
    }
    bumped_ = false;
    x_mm_ = x;
    y_mm_ = y;
    heading_rad_ = std::remainder(heading_rad_ + turn, 2 * std::numbers::pi);
    left_mm_ += left;
    right_mm_ += right;
  }
}

bot::Reading TinybotModel::reading() const {
  bot::Reading r;
  r.left_mm = std::llround(left_mm_);
  r.right_mm = std::llround(right_mm_);
  const protocol::RobotGeometry geometry = bot::robot_geometry();
  for (std::size_t i = 0; i < r.ranges_mm.size(); ++i) {
    const protocol::RangeSensor& sensor = geometry.ranges[i];
    const double seen = settings_.world.sensor_ray(x_mm_, y_mm_, heading_rad_, *sensor.x_mm, *sensor.y_mm, *sensor.deg);
    if (seen <= bot::kRangeMaxMm) r.ranges_mm[i] = static_cast<int>(std::lround(seen));
  }
  r.bumped = bumped_;
  r.battery_mv = settings_.battery_mv;
  return r;
}

}  // namespace flockbridge::sim::tinybot
