// A simulated DTU Small Mobile Robot: the modules of its RS485 bus and a
// model of its motion in a rectangular room with a line on the floor. Like
// the codecs it does no I/O and reads no clock: bytes and the time go in,
// the modules' replies come out through `transmit`.
//
// What it plays, after smrd.c, smr.h and the seeds:
// - each module answers its poll at once: `01 21` with `05 A1 enc status
//   pwm+128` (left motor), `01 22` with A2 (right motor, mounted mirrored:
//   its encoder counts down when the robot drives forward), `01 17` with 8
//   line sensor values, `01 88` with 6 IR values, `01 19` with the power
//   module's 8 bytes (the power switch on, the battery on analog input A);
// - `02 11 s` and `02 12 s` set the motors' speeds, in encoder positions per
//   10 ms period (the right one mirrored, as the client library sends it);
//   the motors hold their speed until told otherwise; each change is logged
//   ("rx left speed 30");
// - zero bytes (the master's padding) are empty messages, and ignored;
// - the robot drives in the simulators' shared room (world.hpp: walls and a
//   box stop it; its motors then report "blocked"); a black line runs along
//   x through its start; the line sensor bar is 8 sensors across the robot's
//   front (0 on the left); the IR sensors (protocol/smr/robot_model.hpp's
//   places: 0 the left side, 1..3 the front, 4 the right side, 5 the rear)
//   see the walls and the box, by the simulated robot's distance law, with
//   a little noise;
// - faults: a module can be made silent, the power switch turned off.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string_view>

#include "flockbridge/protocol/bytes.hpp"
#include "flockbridge/protocol/clock.hpp"
#include "flockbridge/protocol/smr/bus.hpp"
#include "flockbridge/protocol/smr/messages.hpp"
#include "flockbridge/protocol/smr/odometry.hpp"
#include "flockbridge/protocol/smr/robot_model.hpp"
#include "flockbridge/sim/world.hpp"

namespace flockbridge::sim::smr {

using protocol::ByteView;
using protocol::SteadyTime;

struct SmrModelSettings {
  protocol::smr::Geometry geometry;
  double battery_v = 12.4;
  /// The room (World::classroom()); the robot starts at its 0, 0, facing +x, on the line.
  World world = World::classroom();
  std::uint32_t seed = 1;  ///< for the IR readings' noise
  double line_width_m = 0.02;
};

class SmrModel {
 public:
  SmrModel(SmrModelSettings settings, std::function<void(ByteView)> transmit,
           std::function<void(std::string_view)> log);

  void bytes_received(ByteView bytes, SteadyTime now);
  /// The robot moves between bus messages: nothing runs on a timer.
  void tick(SteadyTime /*now*/) {}
  [[nodiscard]] std::optional<SteadyTime> next_deadline() const { return std::nullopt; }

  /// A module (its poll address: 0x21, 0x22, 0x17, 0x88, 0x19) stops or
  /// resumes answering.
  void set_module_silent(protocol::Byte module, bool silent);
  void set_power_switch(bool on) noexcept { power_on_ = on; }

  /// The robot's true pose in the room (metres, degrees; 0, 0 is the room's middle).
  [[nodiscard]] double x_m() const noexcept { return x_m_; }
  [[nodiscard]] double y_m() const noexcept { return y_m_; }
  [[nodiscard]] double heading_deg() const noexcept;
  /// The speeds last commanded, as on the bus.
  [[nodiscard]] int left_speed() const noexcept { return left_speed_; }
  [[nodiscard]] int right_speed() const noexcept { return right_speed_; }
  [[nodiscard]] std::uint16_t left_encoder() const noexcept;
  [[nodiscard]] std::uint16_t right_encoder() const noexcept;
  /// Messages that were not polls, speeds or padding.
  [[nodiscard]] std::uint64_t other_messages() const noexcept { return other_messages_; }
  [[nodiscard]] const protocol::smr::DecoderStats& decoder_stats() const noexcept { return decoder_.stats(); }

 private:
  void on_message(std::uint8_t type, ByteView body);
  void advance(SteadyTime now);
  void answer(protocol::Byte module);
  [[nodiscard]] std::array<std::uint8_t, protocol::smr::kLineCount> line_values() const;
  [[nodiscard]] std::array<std::uint8_t, protocol::smr::kIrCount> ir_values();

  SmrModelSettings settings_;
  std::function<void(ByteView)> transmit_;
  std::function<void(std::string_view)> log_;
  protocol::smr::MessageDecoder decoder_;
  std::optional<SteadyTime> last_advance_;
  int left_speed_ = 0;   ///< positions a period, as the module counts
  int right_speed_ = 0;  ///< the same, mirrored
  double left_positions_ = 0;
  double right_positions_ = 0;
  bool blocked_ = false;
  bool power_on_ = true;
  std::array<bool, 5> silent_{};  ///< by poll, in kPolls' order
  double x_m_ = 0;
  double y_m_ = 0;
  double heading_rad_ = 0;
  std::uint64_t other_messages_ = 0;
  std::mt19937 random_;
};

}  // namespace flockbridge::sim::smr
