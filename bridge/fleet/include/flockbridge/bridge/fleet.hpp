// The robot as one of a fleet on an MQTT broker ([mqtt], docs/fleet.md).
//
// Topics, under mqtt.topic_prefix ("flockbridge/v1") and the robot's name:
// - <robot>/status     retained: {"state":"online",...} while the bridge runs;
//                      the broker's last will sets {"state":"offline"} when
//                      the bridge dies or its network goes;
// - <robot>/telemetry  retained: a summary at mqtt.telemetry_hz;
// - <robot>/events     link changes, safety stops, the emergency latch, who drives;
// - _fleet/cmd/emergency and <robot>/cmd/emergency: stop and latch;
//   _fleet/cmd/clear and <robot>/cmd/clear: clear the fleet's stop. Who may
//   publish there is the broker's ACL's to say (deploy/mosquitto/). A
//   command is a JSON object; an empty message (the idiom for deleting a
//   retained one), a retained one, or anything else is logged and ignored.
//
// The fleet knows no robot family: the core (Bridge) says what the status
// and telemetry hold, and does the emergency stop.
#pragma once

#include <uv.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "flockbridge/bridge/config.hpp"
#include "flockbridge/bridge/mqtt_client.hpp"
#include "flockbridge/bridge/uv.hpp"

namespace flockbridge::bridge {

class Fleet final : public MqttClient::Host {
 public:
  class Host {
   public:
    Host() = default;
    Host(const Host&) = delete;
    Host& operator=(const Host&) = delete;
    virtual ~Host() = default;
    /// What the status topic says of the robot (family, link, who drives, ...).
    [[nodiscard]] virtual nlohmann::ordered_json fleet_status() const = 0;
    /// The telemetry summary (battery, pose, link, ...).
    [[nodiscard]] virtual nlohmann::ordered_json fleet_telemetry() const = 0;
    /// The fleet's emergency stop: stop and latch. `by` names where it came from.
    virtual void fleet_emergency(const std::string& by, const std::string& reason) = 0;
    /// The fleet clears its emergency stop (the robot's own stays).
    virtual void fleet_clear(const std::string& by, const std::string& reason) = 0;
    /// The class hub: a robot of the fleet changed (robots() has it).
    virtual void fleet_changed() = 0;
  };

  Fleet(uv_loop_t* loop, Host& host);
  Fleet(const Fleet&) = delete;
  Fleet& operator=(const Fleet&) = delete;
  ~Fleet() override;

  /// Nothing when [mqtt] is off; fails on what can never work (a password
  /// file that cannot be read, no robot name). A bridge with no robot (the
  /// hub on the teacher's machine) announces nothing.
  [[nodiscard]] protocol::Result<protocol::Done> start(const Config& config, bool has_robot = true);
  /// Publishes the offline status and disconnects. Safe to call twice.
  void stop();
  void reload(const Config& config);

  /// The status changed (the link, who drives, the latch): publish it again.
  void status_changed();
  /// Publishes an event ({"type":...}); the robot's name and the time are added.
  void event(const nlohmann::ordered_json& event);

  [[nodiscard]] bool enabled() const noexcept { return client_.has_value(); }
  [[nodiscard]] const std::string& robot_name() const noexcept { return robot_; }
  /// The connection's counters; nothing when [mqtt] is off.
  [[nodiscard]] const MqttCounters* counters() const noexcept { return client_ ? &client_->counters() : nullptr; }
  [[nodiscard]] bool connected() const noexcept { return client_ && client_->connected(); }
  /// Messages waiting for the broker.
  [[nodiscard]] std::size_t queued() const noexcept { return client_ ? client_->queued() : 0; }

  /// "flockbridge/v1/<robot>/<leaf>".
  [[nodiscard]] std::string topic(std::string_view leaf) const;

  /// The class hub (fleet.hub).
  [[nodiscard]] bool hub() const noexcept { return client_ && hub_; }
  /// The hub's view: every robot the broker told of, by name, each
  /// {"robot","online","since","status","telemetry","event","seen"}.
  [[nodiscard]] nlohmann::ordered_json robots() const;
  /// What the hub's stop or clear did.
  struct Sent {
    /// Robots of the fleet that are offline now: a stop waits at the hub
    /// for them and goes out when each is back; a clear drops it.
    std::vector<std::string> offline;
  };
  /// The hub's stop buttons: the fleet's emergency stop, or one robot's.
  [[nodiscard]] protocol::Result<Sent> publish_emergency(const std::string& robot, const std::string& by);
  /// The hub's clear buttons: the fleet's stop cleared on every robot, or on one.
  [[nodiscard]] protocol::Result<Sent> publish_clear(const std::string& robot, const std::string& by);

 private:
  // MqttClient::Host
  void mqtt_connected() override;
  void mqtt_message(const MqttMessage& message) override;

  /// A robot's status, telemetry or event, for the hub's view.
  void follow(const MqttMessage& message);
  /// A message on one of this robot's command topics (`leaf`: "emergency", "clear", ...).
  void command(const MqttMessage& message, std::string_view leaf, bool fleet_wide);
  /// Publishes a command (`leaf`) to a robot, or to every robot (empty name), from the hub.
  void publish_command(const std::string& robot, std::string_view leaf, const std::string& by,
                       const std::string& reason);
  [[nodiscard]] protocol::Result<Sent> send_from_hub(const std::string& robot, std::string_view command,
                                                     const std::string& by);
  /// A robot the hub follows came back online: the stop that waited for it goes out.
  void deliver_pending_stop(const std::string& robot);
  void publish_status();
  void publish_telemetry();
  void arm_telemetry_timer();
  [[nodiscard]] std::string status_payload(bool online, std::string_view reason) const;

  uv_loop_t* loop_;
  Host& host_;
  std::optional<MqttClient> client_;
  std::string prefix_;
  std::string robot_;
  std::string fleet_commands_;  ///< "<prefix>/_fleet/cmd/"
  std::string robot_commands_;  ///< "<prefix>/<robot>/cmd/"
  /// Command topics whose retained message was logged as a warning (then at debug level).
  std::set<std::string> warned_retained_;
  double telemetry_hz_ = 1;
  bool announce_ = true;  ///< this bridge has a robot to tell the fleet of
  bool hub_ = false;
  // NOLINTNEXTLINE(bugprone-exception-escape): nlohmann::json's moves do not throw; clang-tidy cannot tell
  struct Member {
    nlohmann::json status;
    nlohmann::json telemetry;
    nlohmann::json event;
    double seen = 0;  ///< Unix seconds of the last message from it
    [[nodiscard]] bool online() const;
  };
  std::map<std::string, Member> members_;
  /// The hub's stops (and clearings) for robots that were offline, by
  /// robot, the latest only: each goes out when its robot is back.
  struct PendingStop {
    std::string command;  ///< "emergency" or "clear"
    std::string by;
    std::string reason;
    double since = 0;  ///< Unix seconds
  };
  std::map<std::string, PendingStop> pending_stops_;
  UvHandle<uv_timer_t> telemetry_timer_;
};

/// The robot's name when mqtt.robot_name is empty: the host name's first
/// label, in lower case ("robot-07").
[[nodiscard]] std::string default_robot_name();

/// The broker's password, from mqtt.password_file's first line.
[[nodiscard]] protocol::Result<std::string> read_password(const std::string& path);

/// What a message on a command topic asks: a JSON object, with optional
/// "by" (who sent it) and "reason" strings, both made fit for a log line.
struct FleetCommand {
  std::string by;
  std::string reason;
};
/// Why a message on a command topic is not obeyed.
struct IgnoredCommand {
  std::string why;
  bool quiet = false;  ///< nothing anyone needs to hear of (logged at debug level)
};
/// Reads a command's payload. Empty (how MQTT deletes a retained message),
/// retained, not a JSON object, or with "by" or "reason" not text: ignored,
/// whole, never half-obeyed.
[[nodiscard]] std::variant<FleetCommand, IgnoredCommand> read_fleet_command(std::string_view payload, bool retained);

}  // namespace flockbridge::bridge
