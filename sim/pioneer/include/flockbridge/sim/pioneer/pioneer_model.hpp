// A simulated Pioneer or AmigoBot: the AROS firmware's side of the serial
// protocol and a simple model of the robot's motion in the simulators'
// shared room (world.hpp), whose walls and box its sonar sees and its bumper
// rings touch.
// Like the codecs it does no I/O and reads no clock: bytes and the time go
// in, packets come out through `transmit`.
//
// What it plays, after the robots' manuals and what ARIA expects:
// - before a client connects it answers SYNC0, SYNC1 and SYNC2 in turn
//   (SYNC2 with its name, class and subclass); a SYNC out of turn starts the
//   sequence again;
// - OPEN starts the servers: a SIP every sip_period (0x33 while moving,
//   0x32 otherwise) with sonar readings of the room; CLOSE stops them and
//   the motors, and the robot waits for a new SYNC0;
// - the motors move only once enabled (ENABLE 1); VEL, RVEL, VEL2, MOVE,
//   ROTATE, HEAD, DHEAD, STOP and E_STOP drive it, SETO resets its origin,
//   SETV and SETRV its speed limits, SONAR 0/1 its sonar, CONFIG 1 asks for
//   the configuration packet; PULSE keeps it alive;
// - its watchdog stops the motors when no packet has come from the client
//   for `watchdog` (2 s by default) while the servers are open; a new
//   motion command moves it again.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <utility>

#include "flockbridge/protocol/pioneer/commands.hpp"
#include "flockbridge/protocol/pioneer/models.hpp"
#include "flockbridge/protocol/pioneer/packet.hpp"
#include "flockbridge/protocol/pioneer/sip.hpp"
#include "flockbridge/protocol/bytes.hpp"
#include "flockbridge/protocol/clock.hpp"
#include "flockbridge/sim/world.hpp"

namespace flockbridge::sim::pioneer {

using protocol::ByteView;
using protocol::SteadyTime;

struct PioneerModelSettings {
  std::string model = "p3dx-sh";  ///< a subclass of the model table
  std::string name = "sim";       ///< what SYNC2 names the robot
  std::chrono::milliseconds sip_period{100};
  std::chrono::milliseconds watchdog{2000};
  double battery_v = 12.6;
  /// The room (World::classroom()); the robot starts at its 0, 0, facing +x.
  World world = World::classroom();
  unsigned sonar_per_sip = 4;  ///< readings in each SIP, cycling through the discs
  std::uint32_t seed = 1;      ///< for the sonar's noise
};

class PioneerModel {
 public:
  enum class Phase { AwaitSync0, AwaitSync1, AwaitSync2, AwaitOpen, Open };

  /// Fails (throws std::invalid_argument) for a model that is not in the table.
  PioneerModel(PioneerModelSettings settings, std::function<void(ByteView)> transmit,
               std::function<void(std::string_view)> log);

  void bytes_received(ByteView bytes, SteadyTime now);
  void tick(SteadyTime now);
  [[nodiscard]] std::optional<SteadyTime> next_deadline() const;

  [[nodiscard]] Phase phase() const noexcept { return phase_; }
  [[nodiscard]] const protocol::pioneer::RobotModel& model() const noexcept { return *model_; }
  /// The robot's true pose in the room, mm and degrees (the SIP carries it
  /// in the robot's units, from its own origin).
  [[nodiscard]] double x_mm() const noexcept { return x_mm_; }
  [[nodiscard]] double y_mm() const noexcept { return y_mm_; }
  [[nodiscard]] double heading_deg() const noexcept { return heading_deg_; }
  [[nodiscard]] double velocity_mm_s() const noexcept { return velocity_; }
  [[nodiscard]] double rot_velocity_deg_s() const noexcept { return rot_velocity_; }
  [[nodiscard]] bool motors_enabled() const noexcept { return motors_enabled_; }
  /// Times the watchdog stopped the robot.
  [[nodiscard]] unsigned watchdog_stops() const noexcept { return watchdog_stops_; }
  /// Presses bumpers: bit 0 is the first of each ring (STALL_AND_BUMPERS bit 1 or 9).
  void set_bumpers(unsigned front, unsigned rear) noexcept {
    front_bumpers_ = front;
    rear_bumpers_ = rear;
  }
  /// Bad packets received (checksum or count).
  [[nodiscard]] std::uint64_t bad_packets() const noexcept;

 private:
  enum class Goal { None, Distance, Heading };

  void on_packet(protocol::Byte type, ByteView payload, SteadyTime now);
  void on_command(const protocol::pioneer::Command& command, SteadyTime now);
  void send(const protocol::Bytes& packet);
  void stop_motion();
  void advance(SteadyTime now);
  void send_sip();
  /// The distance from a sonar disc to the room's wall along its heading.
  [[nodiscard]] double sonar_range_mm(const protocol::pioneer::SonarPose& disc);
  /// The bumpers the walls or the box press: bit 0 of each ring is its
  /// leftmost bumper (seen from behind the robot), five to a ring.
  [[nodiscard]] std::pair<unsigned, unsigned> touched_bumpers() const;
  void log(const std::string& line) const { log_(line); }

  PioneerModelSettings settings_;
  const protocol::pioneer::RobotModel* model_;
  std::function<void(ByteView)> transmit_;
  std::function<void(std::string_view)> log_;
  protocol::pioneer::PacketDecoder decoder_;

  Phase phase_ = Phase::AwaitSync0;
  SteadyTime next_sip_{};
  SteadyTime last_advance_{};
  SteadyTime last_client_packet_{};
  bool watchdog_tripped_ = false;
  std::mt19937 random_;
  unsigned front_bumpers_ = 0;
  unsigned rear_bumpers_ = 0;
  unsigned watchdog_stops_ = 0;

  bool motors_enabled_ = false;
  bool sonar_enabled_ = true;
  double max_velocity_ = 0;      ///< mm/s, SETV
  double max_rot_velocity_ = 0;  ///< deg/s, SETRV
  double velocity_ = 0;          ///< mm/s
  double rot_velocity_ = 0;      ///< deg/s
  Goal goal_ = Goal::None;
  double goal_remaining_mm_ = 0;
  double goal_heading_deg_ = 0;
  double x_mm_ = 0;
  double y_mm_ = 0;
  double heading_deg_ = 0;
  double origin_x_mm_ = 0;
  double origin_y_mm_ = 0;
  double origin_heading_deg_ = 0;
  unsigned next_disc_ = 0;
};

}  // namespace flockbridge::sim::pioneer
