// The seam between the bridge's core and a robot family.
//
// The core (bridge/) holds the loop, the listeners and client sessions, the
// safety rules, the web server, the settings and the counters; it names no
// robot. A driver (bridge/<family>/) holds everything about one robot: its
// transport (a serial device, or a simulated robot on a pseudo-terminal),
// its link protocol (handshake, keepalive, retries, loss), the stop it sends
// when the bridge shuts down, and its counters. families.hpp lists the
// drivers.
//
// The two talk in one direction each:
// - the core calls the driver (start, submit, stop_robot, reload, ...);
// - the driver never calls the core back with news. It queues events, tells
//   its Host that it has some (Host::driver_has_events() only schedules), and
//   the core drains them with next_event() after the current callbacks. So
//   no call ever re-enters a driver that is in the middle of its own work.
//
// The driver also reads the robot's own client protocol (make_native_client:
// the programs written for the original software, on the family's port) and
// the JSON commands for the robot (command_from_json), and writes its own
// counters into the stats (add_stats). The core names no family.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "flockbridge/bridge/client_kind.hpp"
#include "flockbridge/bridge/config.hpp"
#include "flockbridge/bridge/native_client.hpp"
#include "flockbridge/bridge/output_queue.hpp"
#include "flockbridge/protocol/bytes.hpp"
#include "flockbridge/protocol/json_codec.hpp"
#include "flockbridge/protocol/robot_link.hpp"
#include "flockbridge/protocol/robot_model.hpp"
#include "flockbridge/protocol/stats.hpp"

namespace flockbridge::bridge {

/// A message from the robot for clients, in the family's own form. The core
/// decides who gets it; the message says what it looks like.
class RobotMessage {
 public:
  RobotMessage() = default;
  RobotMessage(const RobotMessage&) = delete;
  RobotMessage& operator=(const RobotMessage&) = delete;
  virtual ~RobotMessage() = default;

  /// A sensor reading: sent to subscribed clients, at most as often as each
  /// asked, numbered by the core (`seq`). Other messages go to every client.
  [[nodiscard]] virtual bool is_sensor() const noexcept = 0;
  /// The message in one encoding; null when that encoding has no such message.
  [[nodiscard]] virtual SharedBuffer encode(Encoding encoding, std::uint64_t seq, double unix_seconds) const = 0;
};

/// What a command does to the robot's motion, for the core's safety rules
/// (who set the robot moving; the stop when that client leaves; the
/// motion watchdog).
struct MotionEffect {
  bool stops = false;         ///< a stop or emergency stop
  bool motion = false;        ///< a motion command: its sender becomes the robot's driver
  bool keeps_moving = false;  ///< leaves the robot moving until told otherwise
  /// The family's emergency stop, as its programs use it for an emergency
  /// (it latches: no motion until cleared). JSON `emergency` always is one.
  bool emergency = false;
  /// A motion command's dead-man time (its JSON `deadman_ms`; 0: none):
  /// the robot is stopped this long after it unless another motion command
  /// or a stop came first. The core sets it, never a driver.
  std::chrono::milliseconds deadman{0};

  friend bool operator==(const MotionEffect&, const MotionEffect&) = default;
};

namespace driver_event {

/// The robot link changed state, or the reason for it changed.
struct LinkChanged {
  protocol::LinkState state = protocol::LinkState::Down;
  std::string reason;
};

/// A message for clients.
struct Published {
  std::shared_ptr<const RobotMessage> message;
  /// The robot reports that it has stopped (an emergency stop, a finished move).
  bool robot_stopped = false;
  /// A line for the log at warning level, when not empty.
  std::string warning;
};

/// A command submitted earlier is done: `error` is empty when it reached
/// the robot; `confirmed` says whether the robot acknowledged it, for
/// families whose robots acknowledge commands (none for the others).
struct CommandDone {
  protocol::CommandToken token = 0;
  std::optional<protocol::Error> error;
  std::optional<bool> confirmed;
};

/// A decision worth a line in a debug log.
struct Note {
  std::string text;
};

/// The driver serves another robot now (plug and play found one, or lost
/// the one it served): its family, model, geometry, commands, own port and
/// what hello says of it may all have changed. Commands sent to the robot
/// before have had their CommandDone.
struct RobotChanged {};

}  // namespace driver_event

using DriverEvent = std::variant<driver_event::LinkChanged, driver_event::Published, driver_event::CommandDone,
                                 driver_event::Note, driver_event::RobotChanged>;

/// A family's own programs on a replay of one of its recordings (the
/// families table's native_replay): the family's client of its port, fed
/// what the family's programs got when it was recorded.
class NativeReplay {
 public:
  NativeReplay() = default;
  NativeReplay(const NativeReplay&) = delete;
  NativeReplay& operator=(const NativeReplay&) = delete;
  virtual ~NativeReplay() = default;

  /// A recorded message of the family's stream, as the core takes it to
  /// send to the family's programs.
  virtual void follow(std::string_view /*native*/) {}
  [[nodiscard]] virtual std::unique_ptr<NativeClient> make_native_client() = 0;
  /// As RobotDriver::native_client_limit().
  [[nodiscard]] virtual std::size_t native_client_limit() const noexcept { return SIZE_MAX; }
};

class RobotDriver {
 public:
  /// The core, as a driver sees it.
  class Host {
   public:
    Host() = default;
    Host(const Host&) = delete;
    Host& operator=(const Host&) = delete;
    virtual ~Host() = default;
    /// Events are waiting. Only schedules the draining: it never calls the
    /// driver back from inside this call.
    virtual void driver_has_events() = 0;
  };

  RobotDriver() = default;
  RobotDriver(const RobotDriver&) = delete;
  RobotDriver& operator=(const RobotDriver&) = delete;
  virtual ~RobotDriver() = default;

  /// The family's name in the families table.
  [[nodiscard]] virtual std::string_view family() const noexcept = 0;
  /// The family's model of this robot (the family's name when it has one model).
  [[nodiscard]] virtual std::string_view model() const noexcept = 0;
  /// Whether there is a robot at all: false for a bridge that only serves
  /// the fleet (the class hub), which announces no robot of its own.
  [[nodiscard]] virtual bool has_robot() const noexcept { return true; }
  /// The JSON commands this robot takes, as clients name them.
  [[nodiscard]] virtual std::span<const std::string> commands() const noexcept = 0;
  /// Where the family's robot is usually found, for someone looking for a
  /// missing one ("... is usually on a USB serial adapter, /dev/ttyUSB0").
  [[nodiscard]] virtual std::string_view device_hint() const noexcept { return {}; }
  /// Who connects to the family's own port, for a person ("the robot's own programs"); "": no such port.
  [[nodiscard]] virtual std::string_view native_programs() const noexcept { return {}; }
  /// Whether the robot is a simulated one (--simulate).
  [[nodiscard]] virtual bool simulated() const noexcept { return false; }
  /// The room a simulated robot drives in, as its simulator says (mm, in the
  /// odometry's frame: min x, min y, max x, max y); nothing otherwise.
  [[nodiscard]] virtual std::optional<std::array<double, 4>> simulated_room() const { return std::nullopt; }
  /// The boxes in that room, in the same form.
  [[nodiscard]] virtual std::vector<std::array<double, 4>> simulated_boxes() const { return {}; }
  /// The recording a replay serves, for hello; nothing for a robot.
  [[nodiscard]] virtual const protocol::json::ReplayDescription* replay() const noexcept { return nullptr; }
  /// How plug and play found the robot, for hello; nothing for a robot that was named.
  [[nodiscard]] virtual const protocol::json::FoundDescription* found() const noexcept { return nullptr; }
  /// The port the robot's own programs connect to, given native.port's
  /// value (`configured`): that value, unless the driver serves whichever
  /// family it finds and the configuration left the port to the family.
  [[nodiscard]] virtual std::uint16_t native_port(std::uint16_t configured) const noexcept { return configured; }

  /// Starts reaching the robot (and the simulated robot when the
  /// configuration asks for one). A device that is missing is not fatal:
  /// the driver keeps trying; what fails is only what can never work.
  [[nodiscard]] virtual protocol::Result<protocol::Done> start() = 0;
  /// Sends the family's stop when the link is up, then closes everything.
  /// Safe to call twice. No events follow.
  virtual void stop() = 0;

  /// A client connected (after its hello): a replay that waits for its
  /// first client begins.
  virtual void client_arrived() {}

  /// The next event, or nothing. The core calls it until it says nothing.
  [[nodiscard]] virtual std::optional<DriverEvent> next_event() = 0;

  /// Reads one client of the family's own port (native.port).
  [[nodiscard]] virtual std::unique_ptr<NativeClient> make_native_client() = 0;
  /// The most clients the family's own port serves at once (as the original software did);
  /// the listener's max_clients applies as well. A client beyond it is
  /// accepted and closed, as the original software did.
  [[nodiscard]] virtual std::size_t native_client_limit() const noexcept { return SIZE_MAX; }
  /// A JSON command for the robot (`cmd` is its name, `object` the whole
  /// command) in the family's form, or why it cannot be sent. Every family
  /// takes "stop" and "emergency", and "drive" where it can.
  [[nodiscard]] virtual protocol::Result<protocol::Bytes> command_from_json(std::string_view cmd,
                                                                            const nlohmann::json& object) const = 0;
  /// What a command in the family's form (as its client codecs produce it)
  /// does to the robot's motion.
  [[nodiscard]] virtual MotionEffect motion_effect(protocol::ByteView command) const = 0;
  /// Queues a command for the robot. Refused at once (the error says why)
  /// when the link cannot take it; otherwise a CommandDone event follows.
  [[nodiscard]] virtual protocol::Result<protocol::Done> submit(protocol::CommandToken token,
                                                                protocol::ByteView command) = 0;
  /// Starts the robot's pose again at 0, 0, 0 (JSON reset_pose): the driver
  /// resets the pose it adds up, and tells the robot where the robot keeps
  /// the pose itself. A CommandDone event follows, as for submit().
  [[nodiscard]] virtual protocol::Result<protocol::Done> reset_pose(protocol::CommandToken token) = 0;
  /// What the robot is, for hello (the same geometry its sensor messages' ranges use).
  [[nodiscard]] virtual const protocol::RobotGeometry& geometry() const = 0;
  /// The family's own fields of its sensor message, as JSON Schema
  /// properties (the robot model's are everyone's: json::sensor_schema).
  [[nodiscard]] virtual nlohmann::ordered_json sensor_properties() const = 0;
  /// The family's own stop, on the bridge's account (the safety stop).
  [[nodiscard]] virtual protocol::Result<protocol::Done> stop_robot(protocol::CommandToken token) = 0;

  [[nodiscard]] virtual protocol::LinkState link_state() const noexcept = 0;
  /// Why the link is in its state; empty when there is nothing to say.
  [[nodiscard]] virtual const std::string& link_reason() const noexcept = 0;
  /// Fills in the link's part of the counters.
  virtual void add_stats(protocol::StatsSnapshot& snapshot) const = 0;

  /// New settings (SIGHUP): applies what it can at once.
  virtual void reload(const Config& config) = 0;
};

}  // namespace flockbridge::bridge
