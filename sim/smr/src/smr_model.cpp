#include "flockbridge/sim/smr/smr_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <string>

namespace flockbridge::sim::smr {
namespace {

namespace bus = protocol::smr;

constexpr double kLineBarAheadM = 0.15;  ///< the line sensor bar, ahead of the wheels' axle
constexpr double kLineSpacingM = 0.015;  ///< between two line sensors
constexpr std::uint8_t kFloor = 230;     ///< the line sensor over the white floor
constexpr std::uint8_t kLine = 20;       ///< over the black line

/// Where the module's poll sits in kPolls, or nothing.
std::optional<std::size_t> poll_index(protocol::Byte module) {
  for (std::size_t i = 0; i < bus::kPolls.size(); ++i) {
    if (bus::kPolls[i].module == module) return i;
  }
  return std::nullopt;
}

}  // namespace

SmrModel::SmrModel(SmrModelSettings settings, std::function<void(ByteView)> transmit,
                   std::function<void(std::string_view)> log)
    : settings_(std::move(settings)), transmit_(std::move(transmit)), log_(std::move(log)), random_(settings_.seed) {}

void SmrModel::bytes_received(ByteView bytes, SteadyTime now) {
  advance(now);
  decoder_.feed(bytes);
  while (auto message = decoder_.next()) on_message(message->type, message->body);
}

void SmrModel::set_module_silent(protocol::Byte module, bool silent) {
  if (const auto index = poll_index(module)) silent_[*index] = silent;
}

double SmrModel::heading_deg() const noexcept {
  return heading_rad_ * 180.0 / std::numbers::pi;
}

std::uint16_t SmrModel::left_encoder() const noexcept {
  return static_cast<std::uint16_t>(static_cast<std::int64_t>(std::lround(left_positions_)) & 0xFFFF);
}

std::uint16_t SmrModel::right_encoder() const noexcept {
  return static_cast<std::uint16_t>(static_cast<std::int64_t>(std::lround(right_positions_)) & 0xFFFF);
}

void SmrModel::on_message(std::uint8_t type, ByteView body) {
  if (type != static_cast<std::uint8_t>(bus::MessageType::Bus)) {
    ++other_messages_;
    return;
  }
  if (body.empty()) return;  // the master's zeros
  if (body.size() == 1 && poll_index(body[0])) {
    answer(body[0]);
    return;
  }
  if (const auto speed = bus::read_speed(body)) {
    const bool left = speed->module == bus::module::kLeftSpeed;
    int& motor = left ? left_speed_ : right_speed_;
    // NOLINTNEXTLINE(bugprone-signed-char-misuse): a speed is a signed byte on the bus
    const int value = speed->speed;
    if (value != motor) log_(std::string("rx ") + (left ? "left" : "right") + " speed " + std::to_string(value));
    motor = value;
    if (left_speed_ == 0 && right_speed_ == 0) blocked_ = false;
    return;
  }
  ++other_messages_;
}

void SmrModel::advance(SteadyTime now) {
  if (!last_advance_) last_advance_ = now;
  double remaining = std::chrono::duration<double>(now - *last_advance_).count();
  last_advance_ = now;
  const bus::Geometry& g = settings_.geometry;
  while (remaining > 0) {
    const double step = std::min(remaining, g.period_s);
    remaining -= step;
    const double left = g.wheel_speed(left_speed_) * step;
    const double right = g.wheel_speed(-right_speed_) * step;  // mounted mirrored
    const double distance = (left + right) / 2;
    const double turn = (right - left) / g.wheel_base_m;
    const double middle = heading_rad_ + turn / 2;
    const double x = x_m_ + distance * std::cos(middle);
    const double y = y_m_ + distance * std::sin(middle);
    if (settings_.world.collides(x * 1000, y * 1000, bus::kRadiusMm)) {
      blocked_ = true;  // against a wall or the box: the wheels stand still
      continue;
    }
    x_m_ = x;
    y_m_ = y;
    heading_rad_ = std::remainder(heading_rad_ + turn, 2 * std::numbers::pi);
    left_positions_ += left_speed_ * step / g.period_s;
    right_positions_ += right_speed_ * step / g.period_s;
  }
}

void SmrModel::answer(protocol::Byte module) {
  if (silent_[*poll_index(module)]) return;
  const int status = blocked_ ? bus::motor_status::kBlocked : 0;
  protocol::Bytes reply;
  switch (module) {
    case bus::module::kLeftMotor:
      reply = bus::encode_motor(bus::reply::kLeftEncoder, left_encoder(), status, left_speed_);
      break;
    case bus::module::kRightMotor:
      reply = bus::encode_motor(bus::reply::kRightEncoder, right_encoder(), status, right_speed_);
      break;
    case bus::module::kLineSensor: {
      const auto values = line_values();
      protocol::Bytes body{bus::reply::kLineSensor};
      body.insert(body.end(), values.begin(), values.end());
      reply = bus::encode_message(bus::MessageType::Bus, body);
      break;
    }
    case bus::module::kInfrared: {
      const auto values = ir_values();
      protocol::Bytes body{bus::reply::kInfrared};
      body.insert(body.end(), values.begin(), values.end());
      reply = bus::encode_message(bus::MessageType::Bus, body);
      break;
    }
    default: {
      const int battery = static_cast<int>(std::lround(settings_.battery_v / bus::analog_volts(1)));
      reply = bus::encode_power(power_on_ ? bus::power_status::kPowerOn : 0, {std::min(battery, 1023), 0, 0, 0, 0});
      break;
    }
  }
  transmit_(reply);
}

std::array<std::uint8_t, bus::kLineCount> SmrModel::line_values() const {
  std::array<std::uint8_t, bus::kLineCount> values{};
  const double c = std::cos(heading_rad_);
  const double s = std::sin(heading_rad_);
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double across = (3.5 - static_cast<double>(i)) * kLineSpacingM;  // sensor 0 on the left
    const double y = y_m_ + kLineBarAheadM * s + across * c;
    const double off = std::abs(y) - settings_.line_width_m / 2;
    // Black over the line, white a centimetre beside it, grey between.
    const double white = std::clamp(off / 0.01, 0.0, 1.0);
    values[i] = static_cast<std::uint8_t>(std::lround(kLine + white * (kFloor - kLine)));
  }
  return values;
}

std::array<std::uint8_t, bus::kIrCount> SmrModel::ir_values() {
  std::array<std::uint8_t, bus::kIrCount> values{};
  for (std::size_t i = 0; i < values.size(); ++i) {
    const bus::IrMount& mount = bus::kIrMounts[i];
    const double seen =
        settings_.world.sensor_ray(x_m_ * 1000, y_m_ * 1000, heading_rad_, mount.x_mm, mount.y_mm, mount.deg);
    // Nearer reads higher, by the law the bridge reads the simulated robot with.
    values[i] = static_cast<std::uint8_t>(std::lround(ir_reading(seen, bus::kSimulatedIrRange, random_, 255)));
  }
  return values;
}

}  // namespace flockbridge::sim::smr
