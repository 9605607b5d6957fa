#include "flockbridge/sim/pioneer/pioneer_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>

namespace flockbridge::sim::pioneer {
namespace {

namespace command = protocol::pioneer::command;

constexpr double kMoveSpeedMmS = 400;  ///< MOVE's speed, within SETV's limit
constexpr double kTurnSpeedDegS = 60;  ///< HEAD's and DHEAD's, within SETRV's
constexpr double kMaxSonarRangeMm = 5000;

double radians(double degrees) {
  return degrees * std::numbers::pi / 180;
}

std::int16_t to_i16(double value) {
  return static_cast<std::int16_t>(std::clamp(std::lround(value), -32767L, 32767L));
}

std::optional<int> int_argument(const protocol::pioneer::Command& c) {
  if (const int* value = std::get_if<int>(&c.argument)) return *value;
  return std::nullopt;
}

}  // namespace

PioneerModel::PioneerModel(PioneerModelSettings settings, std::function<void(ByteView)> transmit,
                           std::function<void(std::string_view)> log)
    : settings_(std::move(settings)),
      model_(protocol::pioneer::find_robot_model(settings_.model)),
      transmit_(std::move(transmit)),
      log_(std::move(log)),
      random_(settings_.seed) {
  if (model_ == nullptr) throw std::invalid_argument("no robot model '" + settings_.model + "'");
  max_velocity_ = model_->max_velocity_mm_s;
  max_rot_velocity_ = model_->max_rot_velocity_deg_s;
}

std::uint64_t PioneerModel::bad_packets() const noexcept {
  const auto& stats = decoder_.stats();
  return stats.bad_checksum + stats.bad_count + stats.incomplete;
}

void PioneerModel::send(const protocol::Bytes& packet) {
  transmit_(packet);
}

void PioneerModel::bytes_received(ByteView bytes, SteadyTime now) {
  decoder_.feed(bytes);
  while (auto event = decoder_.next()) {
    if (event->kind != protocol::pioneer::PacketDecoder::EventKind::Packet) {
      log("rx-bad-packet");
      continue;
    }
    on_packet(event->type, event->payload, now);
  }
}

void PioneerModel::on_packet(protocol::Byte type, ByteView payload, SteadyTime now) {
  switch (phase_) {
    case Phase::AwaitSync0:
    case Phase::AwaitSync1:
    case Phase::AwaitSync2: {
      const auto expected = static_cast<protocol::Byte>(static_cast<int>(phase_) - static_cast<int>(Phase::AwaitSync0));
      if (type != expected && type != command::kSync0) {
        log("sync out of turn (" + std::to_string(type) + "): waiting for SYNC0");
        phase_ = Phase::AwaitSync0;
        return;
      }
      if (type == command::kSync2) {
        send(protocol::pioneer::encode_identity(
            {settings_.name, std::string(model_->type), std::string(model_->subclass)}));
        phase_ = Phase::AwaitOpen;
        log("synced: waiting for OPEN");
      } else {
        send(protocol::pioneer::encode_packet(type));
        phase_ = type == command::kSync0 ? Phase::AwaitSync1 : Phase::AwaitSync2;
      }
      return;
    }
    case Phase::AwaitOpen:
      if (type == command::kOpen) {
        phase_ = Phase::Open;
        next_sip_ = last_advance_ = last_client_packet_ = now;
        watchdog_tripped_ = false;
        log("servers open");
      } else if (type == command::kSync0) {
        send(protocol::pioneer::encode_packet(command::kSync0));
        phase_ = Phase::AwaitSync1;
      } else if (type == command::kClose) {
        phase_ = Phase::AwaitSync0;
      }
      return;
    case Phase::Open:
      advance(now);
      last_client_packet_ = now;
      on_command(protocol::pioneer::decode_command(type, payload), now);
      return;
  }
}

void PioneerModel::on_command(const protocol::pioneer::Command& c, SteadyTime now) {
  const std::optional<int> value = int_argument(c);
  if (c.number != command::kPulse) {
    std::string line = "rx " + protocol::pioneer::command_name(c.number);
    if (value) line.append(" ").append(std::to_string(*value));
    log(line);
  }
  const bool motion = c.number == command::kVel || c.number == command::kRVel || c.number == command::kRotate ||
                      c.number == command::kVel2 || c.number == command::kMove || c.number == command::kHead ||
                      c.number == command::kDHead;
  if (motion) {
    if (!motors_enabled_) {
      log("motors disabled: " + protocol::pioneer::command_name(c.number) + " ignored");
      return;
    }
    watchdog_tripped_ = false;
  }
  switch (c.number) {
    case command::kPulse:
    case command::kOpen:
      return;
    case command::kClose:
      stop_motion();
      motors_enabled_ = false;
      phase_ = Phase::AwaitSync0;
      log("closed: waiting for SYNC0");
      return;
    case command::kEnable:
      motors_enabled_ = value.value_or(0) != 0;
      if (!motors_enabled_) stop_motion();
      log(motors_enabled_ ? "motors enabled" : "motors disabled");
      return;
    case command::kSetO:
      origin_x_mm_ = x_mm_;
      origin_y_mm_ = y_mm_;
      origin_heading_deg_ = heading_deg_;
      return;
    case command::kSetV:
      max_velocity_ = std::clamp<double>(value.value_or(0), 0, model_->max_velocity_mm_s);
      return;
    case command::kSetRV:
      max_rot_velocity_ = std::clamp<double>(value.value_or(0), 0, model_->max_rot_velocity_deg_s);
      return;
    case command::kVel:
      goal_ = Goal::None;
      velocity_ = std::clamp<double>(value.value_or(0), -max_velocity_, max_velocity_);
      return;
    case command::kRVel:
    case command::kRotate:
      if (goal_ == Goal::Heading) goal_ = Goal::None;
      rot_velocity_ = std::clamp<double>(value.value_or(0), -max_rot_velocity_, max_rot_velocity_);
      return;
    case command::kVel2: {
      // High byte the right wheel, low byte the left, signed, in Vel2Divisor units.
      const int raw = value.value_or(0) & 0xFFFF;
      const double left = static_cast<std::int8_t>(raw & 0xFF) * model_->vel2_divisor;
      const double right = static_cast<std::int8_t>(raw >> 8) * model_->vel2_divisor;
      goal_ = Goal::None;
      velocity_ = std::clamp((left + right) / 2, -max_velocity_, max_velocity_);
      rot_velocity_ = std::clamp((right - left) / 2 * model_->diff_conv * 180 / std::numbers::pi, -max_rot_velocity_,
                                 max_rot_velocity_);
      return;
    }
    case command::kMove: {
      const int distance = value.value_or(0);
      goal_ = distance == 0 ? Goal::None : Goal::Distance;
      goal_remaining_mm_ = std::abs(distance);
      velocity_ = distance == 0 ? 0 : std::copysign(std::min(kMoveSpeedMmS, max_velocity_), distance);
      return;
    }
    case command::kHead:
    case command::kDHead: {
      const double target =
          c.number == command::kHead ? origin_heading_deg_ + value.value_or(0) : heading_deg_ + value.value_or(0);
      goal_heading_deg_ = protocol::pioneer::normalise_degrees(target);
      const double turn = protocol::pioneer::normalise_degrees(goal_heading_deg_ - heading_deg_);
      goal_ = turn == 0 ? Goal::None : Goal::Heading;
      rot_velocity_ = turn == 0 ? 0 : std::copysign(std::min(kTurnSpeedDegS, max_rot_velocity_), turn);
      return;
    }
    case command::kConfig: {
      protocol::pioneer::ConfigPacket config;
      config.type = std::string(model_->type);
      config.subtype = std::string(model_->subclass);
      config.serial_number = "SIM";
      config.rot_vel_top = static_cast<std::uint16_t>(model_->max_rot_velocity_deg_s);
      config.trans_vel_top = static_cast<std::uint16_t>(model_->max_velocity_mm_s);
      config.name = settings_.name;
      config.sip_cycle_ms = static_cast<std::uint8_t>(std::min<long>(settings_.sip_period.count(), 255));
      config.watchdog_ms = static_cast<std::uint16_t>(settings_.watchdog.count());
      config.rot_vel_max = static_cast<std::uint16_t>(max_rot_velocity_);
      config.trans_vel_max = static_cast<std::uint16_t>(max_velocity_);
      config.front_sonar = 1;
      config.rear_sonar = model_->sonar.size() > 8 ? 1 : 0;
      config.low_battery = 115;
      config.shutdown_voltage = 105;
      config.firmware_version = "flockbridge-sim";
      send(protocol::pioneer::encode_config(config));
      return;
    }
    case command::kSonar:
      sonar_enabled_ = value.value_or(0) != 0;
      return;
    case command::kStop:
    case command::kEStop:
      stop_motion();
      return;
    default:
      log("ignored " + protocol::pioneer::command_name(c.number));
      return;
  }
  (void)now;
}

void PioneerModel::stop_motion() {
  velocity_ = 0;
  rot_velocity_ = 0;
  goal_ = Goal::None;
}

void PioneerModel::advance(SteadyTime now) {
  const double dt = std::chrono::duration<double>(now - last_advance_).count();
  last_advance_ = now;
  if (dt <= 0 || !motors_enabled_) return;
  double turn = rot_velocity_ * dt;
  if (goal_ == Goal::Heading) {
    const double left = protocol::pioneer::normalise_degrees(goal_heading_deg_ - heading_deg_);
    if (std::abs(turn) >= std::abs(left)) {
      turn = left;
      rot_velocity_ = 0;
      goal_ = Goal::None;
    }
  }
  heading_deg_ = protocol::pioneer::normalise_degrees(heading_deg_ + turn);
  double step = velocity_ * dt;
  if (goal_ == Goal::Distance) {
    if (std::abs(step) >= goal_remaining_mm_) {
      step = std::copysign(goal_remaining_mm_, step);
      velocity_ = 0;
      goal_ = Goal::None;
    } else {
      goal_remaining_mm_ -= std::abs(step);
    }
  }
  const double dx = step * std::cos(radians(heading_deg_));
  const double dy = step * std::sin(radians(heading_deg_));
  const double share = settings_.world.free_share(x_mm_, y_mm_, dx, dy, model_->radius_mm);
  x_mm_ += share * dx;
  y_mm_ += share * dy;
  if (share < 1) {
    // A wall or the box: the robot stops against it rather than passing through.
    velocity_ = 0;
    goal_ = goal_ == Goal::Distance ? Goal::None : goal_;
  }
}

void PioneerModel::tick(SteadyTime now) {
  if (phase_ != Phase::Open) return;
  advance(now);
  if (!watchdog_tripped_ && now - last_client_packet_ >= settings_.watchdog) {
    watchdog_tripped_ = true;
    if (velocity_ != 0 || rot_velocity_ != 0) {
      ++watchdog_stops_;
      stop_motion();
      log("watchdog: no packet from the client for " + std::to_string(settings_.watchdog.count()) +
          " ms; motors stopped");
    }
  }
  if (now >= next_sip_) {
    send_sip();
    next_sip_ += settings_.sip_period;
    if (next_sip_ < now) next_sip_ = now + settings_.sip_period;  // fell behind: do not burst
  }
}

std::optional<SteadyTime> PioneerModel::next_deadline() const {
  if (phase_ != Phase::Open) return std::nullopt;
  SteadyTime deadline = next_sip_;
  if (!watchdog_tripped_) deadline = std::min(deadline, last_client_packet_ + settings_.watchdog);
  return deadline;
}

double PioneerModel::sonar_range_mm(const protocol::pioneer::SonarPose& disc) {
  const double range =
      settings_.world.sensor_ray(x_mm_, y_mm_, radians(heading_deg_), disc.x_mm, disc.y_mm, disc.heading_deg);
  // A sonar's echo: within a centimetre or so, spreading a little with distance.
  std::normal_distribution<double> noise(0.0, 5.0 + range * 0.005);
  return std::clamp(range + noise(random_), 0.0, kMaxSonarRangeMm);
}

std::pair<unsigned, unsigned> PioneerModel::touched_bumpers() const {
  constexpr double kReachMm = 10;  // the bumper ring stands out a little from the body
  const auto contact = settings_.world.contact(x_mm_, y_mm_, model_->radius_mm + kReachMm);
  if (!contact) return {0, 0};
  // Where the contact is, from the robot's front, counter-clockwise.
  const double relative = protocol::pioneer::normalise_degrees(*contact * 180.0 / std::numbers::pi - heading_deg_);
  constexpr int kPerRing = protocol::pioneer::kBumpersPerRing;
  if (std::abs(relative) <= 90) {
    const int index = std::clamp(static_cast<int>((90 - relative) / (180.0 / kPerRing)), 0, kPerRing - 1);
    return {1U << index, 0};
  }
  // The rear ring, left to right as seen from behind: from +90 round to -90 through 180.
  const double from_left = relative > 0 ? relative - 90 : relative + 270;
  const int index = std::clamp(static_cast<int>(from_left / (180.0 / kPerRing)), 0, kPerRing - 1);
  return {0, 1U << index};
}

void PioneerModel::send_sip() {
  protocol::pioneer::StandardSip sip;
  const bool enabled = motors_enabled_;
  sip.moving = enabled && (velocity_ != 0 || rot_velocity_ != 0);
  // Position from the robot's own origin, in its units, as 15-bit counters.
  const double o = radians(origin_heading_deg_);
  const double dx = x_mm_ - origin_x_mm_;
  const double dy = y_mm_ - origin_y_mm_;
  const double fx = dx * std::cos(o) + dy * std::sin(o);
  const double fy = -dx * std::sin(o) + dy * std::cos(o);
  sip.x = static_cast<std::uint16_t>(std::lround(fx / model_->dist_conv) & 0x7FFF);
  sip.y = static_cast<std::uint16_t>(std::lround(fy / model_->dist_conv) & 0x7FFF);
  sip.th = to_i16(radians(protocol::pioneer::normalise_degrees(heading_deg_ - origin_heading_deg_)) / model_->angle_conv);
  const double v = enabled ? velocity_ : 0;
  const double w = enabled ? radians(rot_velocity_) : 0;
  const double half_difference = w / model_->diff_conv;
  sip.left_velocity = to_i16((v - half_difference) / model_->vel_conv);
  sip.right_velocity = to_i16((v + half_difference) / model_->vel_conv);
  sip.battery_tenths = static_cast<std::uint8_t>(std::lround(settings_.battery_v * 10));
  sip.control =
      goal_ == Goal::Heading ? to_i16(radians(goal_heading_deg_ - origin_heading_deg_) / model_->angle_conv) : sip.th;
  sip.flags = static_cast<std::uint16_t>((enabled ? 0x0001 : 0) | (sonar_enabled_ ? 0x0002 : 0));
  // Bits 1-7: the front bumper ring's inputs, 9-15 the rear's.
  const auto [front, rear] = touched_bumpers();
  sip.stall_and_bumpers =
      static_cast<std::uint16_t>((((front_bumpers_ | front) & 0x7F) << 1) | (((rear_bumpers_ | rear) & 0x7F) << 9));
  if (sonar_enabled_ && !model_->sonar.empty()) {
    for (unsigned i = 0; i < settings_.sonar_per_sip; ++i) {
      const unsigned disc = next_disc_;
      next_disc_ = static_cast<unsigned>((next_disc_ + 1) % model_->sonar.size());
      const double range = sonar_range_mm(model_->sonar[disc]) / model_->range_conv;
      sip.sonar.push_back({static_cast<std::uint8_t>(disc), static_cast<std::uint16_t>(std::lround(range))});
    }
  }
  if (model_->subclass.ends_with("-sh")) {
    // The newer firmware (AROS, AmigoSH) sends the later fields too.
    sip.io = protocol::pioneer::SipIo{};
    sip.battery_x10 = static_cast<std::uint16_t>(std::lround(settings_.battery_v * 10));
    sip.charge_state = 0;
    sip.rotational_velocity_tenths = to_i16(enabled ? rot_velocity_ * 10 : 0);
  }
  send(protocol::pioneer::encode_standard_sip(sip));
}

}  // namespace flockbridge::sim::pioneer
