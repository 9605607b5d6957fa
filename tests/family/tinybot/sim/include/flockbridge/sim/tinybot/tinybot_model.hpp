// The simulated tinybot (protocol/tinybot/tinybot.hpp says what it is): it
// answers PING with PONG and then sends a reading every 50 ms; it drives at
// the wheel speeds last set in the simulators' shared room (world.hpp),
// stops against a wall or the box with its bumper pressed, and sees them
// with its front range sensor. Logs "rx speeds L R" and "rx stop". No I/O,
// no clock: bytes and the time go in, lines come out through `transmit`.
#pragma once

#include <functional>
#include <optional>
#include <string_view>

#include "flockbridge/protocol/bytes.hpp"
#include "flockbridge/protocol/clock.hpp"
#include "flockbridge/protocol/tinybot/tinybot.hpp"
#include "flockbridge/sim/world.hpp"

namespace flockbridge::sim::tinybot {

struct TinybotModelSettings {
  World world = World::classroom();  ///< the robot starts at its 0, 0, facing +x
  int battery_mv = 7400;
};

class TinybotModel {
 public:
  TinybotModel(TinybotModelSettings settings, std::function<void(protocol::ByteView)> transmit,
               std::function<void(std::string_view)> log);

  void bytes_received(protocol::ByteView bytes, protocol::SteadyTime now);
  void tick(protocol::SteadyTime now);
  [[nodiscard]] std::optional<protocol::SteadyTime> next_deadline() const;

  [[nodiscard]] const protocol::tinybot::Speeds& speeds() const noexcept { return speeds_; }
  [[nodiscard]] double x_mm() const noexcept { return x_mm_; }
  [[nodiscard]] double y_mm() const noexcept { return y_mm_; }
  [[nodiscard]] double heading_deg() const noexcept;
  void set_battery_mv(int millivolts) noexcept { settings_.battery_mv = millivolts; }

 private:
  void advance(protocol::SteadyTime now);
  void on_line(std::string_view line, protocol::SteadyTime now);
  [[nodiscard]] protocol::tinybot::Reading reading() const;

  TinybotModelSettings settings_;
  std::function<void(protocol::ByteView)> transmit_;
  std::function<void(std::string_view)> log_;
  protocol::tinybot::LineReader lines_;
  protocol::tinybot::Speeds speeds_;
  std::optional<protocol::SteadyTime> last_advance_;
  std::optional<protocol::SteadyTime> next_reading_;  ///< streaming once pinged
  double x_mm_ = 0;
  double y_mm_ = 0;
  double heading_rad_ = 0;
  double left_mm_ = 0;
  double right_mm_ = 0;
  bool bumped_ = false;
};

}  // namespace flockbridge::sim::tinybot
