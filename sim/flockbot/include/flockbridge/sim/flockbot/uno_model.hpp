// A simulated Flockbot Uno: the firmware's side of the serial protocol and a
// simple model of the robot's motion. Like the codecs it does no I/O and
// reads no clock; PtyUno (pty_uno.hpp) connects it to a pseudo-terminal.
//
// What it plays: after power-on (which on a real Uno follows every opening of
// the port) it sends ACK and waits for CFG; once configured it sends a sensor
// packet at a steady rate and obeys the movement, claw, camera and LCD
// commands; a move to a distance, a degree rotation and an arc end with DMC.
// It answers a frame with a bad checksum with NAK and resends its last packet
// when it receives a NAK. It drives in the simulators' shared room
// (world.hpp): walls and the box stop it, its five IR sensors see them (by
// the distance law of SimulatedUno, with a little noise), and touching one
// sets a bump bit: l_bump bit 0 on its front left, 1 front right, 2 rear.
// Faults can be injected one at a time for tests.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <string_view>

#include "flockbridge/protocol/bytes.hpp"
#include "flockbridge/protocol/flockbot/frame.hpp"
#include "flockbridge/protocol/flockbot/robot_model.hpp"
#include "flockbridge/protocol/flockbot/uno_packets.hpp"
#include "flockbridge/protocol/message_decoder.hpp"
#include "flockbridge/sim/world.hpp"

namespace flockbridge::sim {

using protocol::ByteView;
using protocol::SteadyTime;

struct UnoModelSettings {
  double rate_hz = 33.0;                      ///< sensor packets per second
  std::chrono::milliseconds boot_delay{100};  ///< from power-on to the boot ACK
  bool ack_commands = false;                  ///< acknowledge every command (some firmware does)
  std::uint32_t seed = 1;                     ///< for the IR readings' noise and injected faults
  double nak_rate = 0;                        ///< answer this share of good frames with NAK anyway
  /// The room (World::classroom()); the robot starts at its 0, 0, facing +x.
  World world = World::classroom();
};

/// The simulated robot's physical constants (protocol/flockbot's
/// SimulatedUno, which the bridge reads it with): odometers count
/// millimetres, wheel-watchers encoder ticks.
inline constexpr double kWheelBaseMm = protocol::flockbot::SimulatedUno::kWheelBaseMm;
inline constexpr double kMmPerTick = protocol::flockbot::SimulatedUno::kWheelWatcherMmPerCount;

class UnoModel {
 public:
  enum class Phase { Off, Booting, AwaitCfg, Running };

  /// `transmit` receives whole frames to put on the line; `log` receives one
  /// line per event worth telling (never per sensor packet).
  UnoModel(UnoModelSettings settings, std::function<void(ByteView)> transmit,
           std::function<void(std::string_view)> log);

  void power_on(SteadyTime now);
  void power_off();
  /// A reboot: power off and on again, as a brown-out or reflash would.
  void reboot(SteadyTime now);

  void bytes_received(ByteView bytes, SteadyTime now);
  void tick(SteadyTime now);
  [[nodiscard]] std::optional<SteadyTime> next_deadline() const;

  /// Called with every frame that passes the checksum, before the Uno acts
  /// on it, and where in the received stream it began.
  void set_frame_observer(std::function<void(ByteView payload, std::uint64_t position)> observer) {
    frame_observer_ = std::move(observer);
  }

  // Faults. nak_next: answer the next `count` frames with NAK.
  void nak_next(unsigned count = 1) { nak_next_ = count; }
  void corrupt_next() { corrupt_next_ = true; }
  void set_silent(bool silent) { silent_ = silent; }
  void send_emergency();
  /// Sends a packet of any type, as newer firmware might (while running).
  void send_packet(ByteView payload);
  /// Sends `count` sensor packets at once, in one write: what the host sees
  /// when a USB-serial adapter holds bytes back and delivers them bunched.
  void send_sensor_burst(unsigned count);
  /// Bump bits pressed by hand, beside those the walls press.
  void set_bumpers(std::uint8_t low, std::uint8_t high);
  /// The robot's true pose in the room (mm, degrees).
  [[nodiscard]] double x_mm() const noexcept { return x_mm_; }
  [[nodiscard]] double y_mm() const noexcept { return y_mm_; }
  [[nodiscard]] double heading_deg() const noexcept;
  [[nodiscard]] const World& world() const noexcept { return settings_.world; }

  [[nodiscard]] Phase phase() const noexcept { return phase_; }
  [[nodiscard]] const protocol::flockbot::SensorReading& reading() const noexcept { return reading_; }
  /// Whether a wheel is told to turn.
  [[nodiscard]] bool wheels_turning() const noexcept { return left_speed_ != 0 || right_speed_ != 0; }

 private:
  enum class Goal { None, Distance, Angle };

  void on_frame(ByteView payload, SteadyTime now);
  void on_command(ByteView payload, SteadyTime now);
  void send(ByteView payload);
  void send_frame(const protocol::Bytes& frame);
  void set_wheels(double left_cm_s, double right_cm_s, Goal goal = Goal::None, double amount = 0);
  void advance(double seconds);
  void update_sensors(SteadyTime now);
  void log(const std::string& line) const { log_(line); }

  UnoModelSettings settings_;
  std::function<void(ByteView)> transmit_;
  std::function<void(std::string_view)> log_;
  std::function<void(ByteView, std::uint64_t)> frame_observer_;
  protocol::flockbot::FrameDecoder decoder_;
  std::mt19937 random_;
  std::bernoulli_distribution nak_anyway_;

  Phase phase_ = Phase::Off;
  SteadyTime boot_at_{};
  SteadyTime next_sensor_{};
  SteadyTime last_advance_{};
  SteadyTime powered_since_{};
  protocol::Bytes last_sent_;
  unsigned nak_next_ = 0;
  bool corrupt_next_ = false;
  bool silent_ = false;

  // Motion: wheel speeds in cm/s, distances in mm, angles in degrees.
  double left_speed_ = 0;
  double right_speed_ = 0;
  Goal goal_ = Goal::None;
  double goal_remaining_ = 0;
  double left_mm_ = 0;
  double right_mm_ = 0;
  double x_mm_ = 0;  ///< the true pose in the room
  double y_mm_ = 0;
  double heading_rad_ = 0;
  std::uint8_t pressed_low_ = 0;  ///< set_bumpers's
  std::uint8_t pressed_high_ = 0;
  protocol::flockbot::SensorReading reading_;
};

}  // namespace flockbridge::sim
