#include "flockbridge/sim/flockbot/uno_model.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "flockbridge/protocol/flockbot/commands.hpp"

namespace flockbridge::sim {
namespace {

using protocol::Byte;
using protocol::Bytes;

bool tag_is(ByteView payload, std::string_view tag) {
  return payload.size() >= 3 && std::equal(tag.begin(), tag.end(), payload.begin());
}

std::int16_t wrap16(double value) {
  return static_cast<std::int16_t>(static_cast<std::uint16_t>(static_cast<std::int64_t>(std::lround(value)) & 0xFFFF));
}

double signed_byte(ByteView payload, std::size_t at) {
  return static_cast<std::int8_t>(payload[at]);
}

}  // namespace

UnoModel::UnoModel(UnoModelSettings settings, std::function<void(ByteView)> transmit,
                   std::function<void(std::string_view)> log)
    : settings_(std::move(settings)),
      transmit_(std::move(transmit)),
      log_(std::move(log)),
      decoder_(protocol::flockbot::kMaxPayloadLimit),
      random_(settings_.seed),
      nak_anyway_(std::clamp(settings_.nak_rate, 0.0, 1.0)) {
  settings_.rate_hz = std::clamp(settings_.rate_hz, 0.1, 2000.0);
  reading_.battery = 800;
}

void UnoModel::power_on(SteadyTime now) {
  phase_ = Phase::Booting;
  boot_at_ = now + settings_.boot_delay;
  powered_since_ = now;
  decoder_.reset();
  last_sent_.clear();
  set_wheels(0, 0);
}

void UnoModel::power_off() {
  phase_ = Phase::Off;
  set_wheels(0, 0);
}

void UnoModel::reboot(SteadyTime now) {
  log("rebooting");
  power_off();
  power_on(now);
}

std::optional<SteadyTime> UnoModel::next_deadline() const {
  switch (phase_) {
    case Phase::Booting:
      return boot_at_;
    case Phase::Running:
      return next_sensor_;
    case Phase::Off:
    case Phase::AwaitCfg:
      break;
  }
  return std::nullopt;
}

void UnoModel::tick(SteadyTime now) {
  if (phase_ == Phase::Booting && now >= boot_at_) {
    phase_ = Phase::AwaitCfg;
    send(protocol::as_bytes("ACK"));
    log("booted: sent ACK, waiting for CFG");
  }
  if (phase_ == Phase::Running && now >= next_sensor_) {
    update_sensors(now);
    send(protocol::flockbot::encode_sensor_payload(reading_));
    const auto period = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(1.0 / settings_.rate_hz));
    next_sensor_ += period;
    if (next_sensor_ < now) next_sensor_ = now + period;  // fell behind: do not burst
  }
}

void UnoModel::bytes_received(ByteView bytes, SteadyTime now) {
  if (phase_ == Phase::Off) return;
  decoder_.feed(bytes);
  while (auto event = decoder_.next()) {
    if (event->kind != protocol::flockbot::FrameDecoder::EventKind::Frame) {
      log("rx-bad-frame: sent NAK");
      send(protocol::as_bytes("NAK"));
      continue;
    }
    if (frame_observer_) frame_observer_(event->payload, event->position);
    if (nak_next_ > 0 || (settings_.nak_rate > 0 && nak_anyway_(random_))) {
      if (nak_next_ > 0) --nak_next_;
      log("nak-injected " + protocol::to_hex(event->payload));
      send(protocol::as_bytes("NAK"));
      continue;
    }
    on_frame(event->payload, now);
  }
}

void UnoModel::on_frame(ByteView payload, SteadyTime now) {
  log("rx " + protocol::to_hex(payload));
  if (tag_is(payload, "NAK")) {
    if (last_sent_.empty()) return;
    log("resent " + protocol::to_hex(ByteView(last_sent_)
                                         .subspan(protocol::flockbot::kSyncLength + 1,
                                                  last_sent_.size() - protocol::flockbot::kFrameOverhead)));
    send_frame(last_sent_);
    return;
  }
  if (tag_is(payload, "CFG")) {
    if (payload.size() != 12) return;
    if (phase_ == Phase::AwaitCfg) {
      phase_ = Phase::Running;
      next_sensor_ = now;
      last_advance_ = now;
    }
    log("configured");
    send(protocol::as_bytes("ACK"));
    return;
  }
  if (phase_ != Phase::Running) return;
  if (!protocol::flockbot::check_command(payload)) return;  // a real Uno ignores what it cannot parse
  on_command(payload, now);
  if (settings_.ack_commands) send(protocol::as_bytes("ACK"));
}

void UnoModel::on_command(ByteView p, SteadyTime now) {
  advance(std::chrono::duration<double>(now - last_advance_).count());
  last_advance_ = now;
  const std::string code(p.begin(), p.begin() + 3);
  if (code == "DMS") {
    set_wheels(signed_byte(p, 3), signed_byte(p, 3));
  } else if (code == "DMW") {
    set_wheels(signed_byte(p, 3), signed_byte(p, 4));
  } else if (code == "DMD") {
    const double cm = p.size() == 6 ? protocol::read_u16le(p, 4) : p[4];
    set_wheels(signed_byte(p, 3), signed_byte(p, 3), Goal::Distance, cm * 10.0);
  } else if (code == "DRC") {
    set_wheels(-signed_byte(p, 3), signed_byte(p, 3));
  } else if (code == "DRD") {
    set_wheels(-signed_byte(p, 3), signed_byte(p, 3), Goal::Angle, protocol::read_u16le(p, 4));
  } else if (code == "DRA") {
    // Around an object `radius` cm away, turning left.
    const double speed = p[3];
    const double radius_mm = p[4] * 10.0;
    const double half = kWheelBaseMm / 2;
    if (radius_mm <= half) {
      set_wheels(-speed, speed, Goal::Angle, protocol::read_u16le(p, 5));
    } else {
      set_wheels(speed * (radius_mm - half) / radius_mm, speed * (radius_mm + half) / radius_mm, Goal::Angle,
                 protocol::read_u16le(p, 5));
    }
  } else if (code == "DST" || code == "EMG") {
    set_wheels(0, 0);
  } else if (code == "DMR") {
    left_mm_ = right_mm_ = 0;
  }
  // Claw, camera and LCD commands change nothing the sensors report.
}

void UnoModel::set_wheels(double left_cm_s, double right_cm_s, Goal goal, double amount) {
  left_speed_ = left_cm_s;
  right_speed_ = right_cm_s;
  goal_ = goal;
  goal_remaining_ = amount;
  if (goal != Goal::None && (amount <= 0 || (left_cm_s == 0 && right_cm_s == 0))) {
    // Nothing to do: the move is complete at once.
    left_speed_ = right_speed_ = 0;
    goal_ = Goal::None;
    if (phase_ == Phase::Running) send(protocol::as_bytes("DMC"));
  }
}

void UnoModel::advance(double seconds) {
  if (seconds <= 0 || (left_speed_ == 0 && right_speed_ == 0)) return;
  double left = left_speed_ * 10.0 * seconds;  // mm
  double right = right_speed_ * 10.0 * seconds;
  // Progress towards the goal: millimetres travelled, or degrees turned.
  double step = 0;
  if (goal_ == Goal::Distance) step = (std::abs(left) + std::abs(right)) / 2;
  if (goal_ == Goal::Angle) step = std::abs(right - left) / kWheelBaseMm * 180.0 / std::numbers::pi;
  const bool done = goal_ != Goal::None && step >= goal_remaining_;
  if (done) {
    // Stop exactly at the goal, not at the end of this time step.
    left *= goal_remaining_ / step;
    right *= goal_remaining_ / step;
  }
  // The wheels' travel moves the robot, unless a wall or the box is in the
  // way: it then stands against it, its wheels slipping, its odometers still.
  const double turn = (right - left) / kWheelBaseMm;
  const double middle = heading_rad_ + turn / 2;
  const double dx = (left + right) / 2 * std::cos(middle);
  const double dy = (left + right) / 2 * std::sin(middle);
  const double share = settings_.world.free_share(x_mm_, y_mm_, dx, dy, protocol::flockbot::SimulatedUno::kRadiusMm);
  x_mm_ += share * dx;
  y_mm_ += share * dy;
  heading_rad_ = std::remainder(heading_rad_ + share * turn, 2 * std::numbers::pi);
  goal_remaining_ -= share * step;
  left_mm_ += share * left;
  right_mm_ += share * right;
  if (done) {
    left_speed_ = right_speed_ = 0;
    goal_ = Goal::None;
    log("move complete: sent DMC");
    send(protocol::as_bytes("DMC"));
  }
}

void UnoModel::update_sensors(SteadyTime now) {
  advance(std::chrono::duration<double>(now - last_advance_).count());
  last_advance_ = now;
  const double t = std::chrono::duration<double>(now - powered_since_).count();
  reading_.battery = static_cast<std::uint16_t>(std::max(600.0, 800.0 - t / 10.0));
  using Sim = protocol::flockbot::SimulatedUno;
  for (std::size_t i = 0; i < reading_.ir.size(); ++i) {
    const double axis = Sim::kIrDeg[i] * std::numbers::pi / 180;
    const double seen = settings_.world.sensor_ray(x_mm_, y_mm_, heading_rad_, Sim::kIrMountMm * std::cos(axis),
                                                   Sim::kIrMountMm * std::sin(axis), Sim::kIrDeg[i]);
    reading_.ir[i] = static_cast<std::uint16_t>(std::lround(ir_reading(seen, Sim::kIrRange, random_, 65535)));
  }
  // A wall or the box within reach of the body presses a bumper.
  std::uint8_t touched = 0;
  if (const auto contact = settings_.world.contact(x_mm_, y_mm_, Sim::kRadiusMm + 5)) {
    const double relative = std::remainder(*contact - heading_rad_, 2 * std::numbers::pi);
    if (std::abs(relative) > std::numbers::pi / 2) {
      touched = 0x04;  // the rear
    } else {
      touched = relative >= 0 ? 0x01 : 0x02;  // front left, front right
    }
  }
  reading_.l_bump = static_cast<std::uint8_t>(pressed_low_ | touched);
  reading_.h_bump = pressed_high_;
  reading_.odometer_left = wrap16(left_mm_);
  reading_.odometer_right = wrap16(right_mm_);
  reading_.odometer_avg = wrap16((left_mm_ + right_mm_) / 2);
  reading_.wheel_watcher_left = wrap16(left_mm_ / kMmPerTick);
  reading_.wheel_watcher_right = wrap16(right_mm_ / kMmPerTick);
}

void UnoModel::send_emergency() {
  if (phase_ != Phase::Running) return;
  set_wheels(0, 0);
  log("emergency: sent EMG");
  send(protocol::as_bytes("EMG"));
}

void UnoModel::send_packet(ByteView payload) {
  if (phase_ != Phase::Running || payload.empty() || payload.size() > protocol::flockbot::kMaxPayloadLimit) return;
  log("sent a packet: " + protocol::to_hex(payload));
  send(payload);
}

void UnoModel::set_bumpers(std::uint8_t low, std::uint8_t high) {
  pressed_low_ = low;
  pressed_high_ = high;
  reading_.l_bump = low;
  reading_.h_bump = high;
}

double UnoModel::heading_deg() const noexcept {
  return heading_rad_ * 180.0 / std::numbers::pi;
}

void UnoModel::send_sensor_burst(unsigned count) {
  if (phase_ != Phase::Running || silent_ || count == 0) return;
  Bytes frames;
  for (unsigned i = 0; i < count; ++i) {
    const Bytes frame = protocol::flockbot::encode_frame(protocol::flockbot::encode_sensor_payload(reading_));
    frames.insert(frames.end(), frame.begin(), frame.end());
    last_sent_ = frame;
  }
  log("sent a burst of " + std::to_string(count) + " sensor packets");
  transmit_(frames);
}

void UnoModel::send(ByteView payload) {
  send_frame(protocol::flockbot::encode_frame(payload));
}

void UnoModel::send_frame(const Bytes& frame) {
  last_sent_ = frame;
  if (silent_) return;
  if (corrupt_next_) {
    corrupt_next_ = false;
    Bytes corrupted = frame;
    if (!corrupted.empty()) corrupted[corrupted.size() - 1] ^= 0xFF;
    log("sent-corrupt " + protocol::to_hex(ByteView(frame).subspan(protocol::flockbot::kSyncLength + 1,
                                                                   frame.size() - protocol::flockbot::kFrameOverhead)));
    transmit_(corrupted);
    return;
  }
  transmit_(frame);
}

}  // namespace flockbridge::sim
