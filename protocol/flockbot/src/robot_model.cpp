#include "flockbridge/protocol/flockbot/robot_model.hpp"

#include <cmath>
#include <numbers>

namespace flockbridge::protocol::flockbot {
namespace {

/// The farthest a wheel goes between two packets without it being a reset
/// of the odometers: a wheel at full speed (100 steps of 1 cm/s) for a
/// second, a packet gap no live link has.
constexpr double kLongestStepMm = 1000;

std::optional<double> positive(double value) {
  return value > 0 ? std::optional<double>(value) : std::nullopt;
}

}  // namespace

SensorUnits SimulatedUno::units() {
  SensorUnits units;
  units.battery_volts_per_count = kBatteryVoltsPerCount;
  units.odometer_mm_per_count = kOdometerMmPerCount;
  units.wheel_watcher_mm_per_count = kWheelWatcherMmPerCount;
  units.wheel_mm_s_per_percent = kWheelMmSPerPercent;
  units.wheel_base_mm = kWheelBaseMm;
  return units;
}

FlockbotBody SimulatedUno::body() {
  return FlockbotBody{kRadiusMm, std::vector<double>(kIrDeg.begin(), kIrDeg.end()), kIrMountMm, kIrRange};
}

std::string range_name(std::optional<double> deg, std::string fallback) {
  if (!deg) return fallback;
  static constexpr std::array<const char*, 8> kNames{"front", "front_left", "left",  "rear_left",
                                                     "rear",  "rear_right", "right", "front_right"};
  const double d = normalized_degrees(*deg);
  const double eighths = d / 45.0;
  const double nearest = std::round(eighths);
  if (std::abs(eighths - nearest) > 0.25) return fallback;
  const auto index = static_cast<std::size_t>((static_cast<int>(nearest) + 8) % 8);
  return kNames[index];
}

RobotGeometry robot_geometry(const SensorUnits& units, const FlockbotBody& body) {
  RobotGeometry g;
  g.radius_mm = positive(body.radius_mm);
  g.wheel_base_mm = positive(units.wheel_base_mm);
  if (units.wheel_mm_s_per_percent > 0) {
    g.max_v_mm_s = 100 * units.wheel_mm_s_per_percent;
    if (units.wheel_base_mm > 0) {
      g.max_w_deg_s = std::round(2 * 100 * units.wheel_mm_s_per_percent / units.wheel_base_mm * 180 / std::numbers::pi);
    }
  }
  for (std::size_t i = 0; i < kIrCount; ++i) {
    RangeSensor sensor;
    sensor.kind = RangeKind::Ir;
    if (i < body.ir_deg.size()) sensor.deg = body.ir_deg[i];
    sensor.name = range_name(sensor.deg, "ir" + std::to_string(i));
    if (sensor.deg && body.ir_mount_mm > 0) {
      const double rad = *sensor.deg * std::numbers::pi / 180;
      sensor.x_mm = std::round(body.ir_mount_mm * std::cos(rad) * 10) / 10;
      sensor.y_mm = std::round(body.ir_mount_mm * std::sin(rad) * 10) / 10;
    }
    if (body.ir_range.known()) sensor.max_mm = body.ir_range.max_mm;
    g.ranges.push_back(std::move(sensor));
  }
  for (std::size_t bit = 0; bit < kBumpBits; ++bit) g.bumpers.push_back("bump" + std::to_string(bit));
  return g;
}

FlockbotState::FlockbotState(const SensorUnits& units, const FlockbotBody& body)
    : units_(units), body_(body), odometry_(units.wheel_base_mm > 0 ? units.wheel_base_mm : 1) {}

void FlockbotState::configure(const SensorUnits& units, const FlockbotBody& body) {
  units_ = units;
  body_ = body;
  odometry_.set_wheel_base(units.wheel_base_mm > 0 ? units.wheel_base_mm : 1);
}

void FlockbotState::reset_pose() noexcept {
  odometry_.reset();
}

RobotState FlockbotState::update(const SensorReading& r, double seconds) {
  RobotState state;
  const double mm_per_count = units_.odometer_mm_per_count;
  if (mm_per_count > 0) {
    if (last_odometers_) {
      // The counters wrap: the step is the shorter way round.
      const auto step = [](std::int16_t now, std::int16_t before) {
        return static_cast<std::int16_t>(static_cast<std::uint16_t>(now) - static_cast<std::uint16_t>(before));
      };
      const std::int16_t left_counts = step(r.odometer_left, (*last_odometers_)[0]);
      const std::int16_t right_counts = step(r.odometer_right, (*last_odometers_)[1]);
      const double left = left_counts * mm_per_count;
      const double right = right_counts * mm_per_count;
      const bool to_zero = reset_expected_for_ > 0 && (left_counts != 0 || right_counts != 0) &&
                           std::abs(r.odometer_left) < std::abs(left_counts) + 1 &&
                           std::abs(r.odometer_right) < std::abs(right_counts) + 1;
      if (reset_expected_for_ > 0) --reset_expected_for_;
      if (to_zero || std::abs(left) > kLongestStepMm || std::abs(right) > kLongestStepMm) {
        ++odometer_resets_;
        reset_expected_for_ = 0;
      } else {
        odometry_.step(left, right, seconds);
      }
    }
    last_odometers_ = {r.odometer_left, r.odometer_right};
    state.pose = odometry_.pose();
    state.v_mm_s = odometry_.speed();
    state.w_deg_s = odometry_.turn_rate() * 180 / std::numbers::pi;
  }
  // To 0.1 mV, as the family's message wrote battery_v before the model.
  if (units_.battery_volts_per_count > 0) {
    state.battery_v = std::round(r.battery * units_.battery_volts_per_count * 1e4) / 1e4;
  }
  state.ranges_mm.reserve(kIrCount);
  for (const std::uint16_t raw : r.ir) state.ranges_mm.push_back(body_.ir_range.mm(raw));
  state.bumped = static_cast<std::uint64_t>(r.l_bump) | (static_cast<std::uint64_t>(r.h_bump) << 8);
  return state;
}

}  // namespace flockbridge::protocol::flockbot
