// The robot as one of a fleet on an MQTT broker ([mqtt], docs/fleet.md).
//
// Topics, under mqtt.topic_prefix ("flockbridge/v1") and the robot's name:
// - <robot>/status     retained: {"state":"online",...} while the bridge runs;
//                      the broker's last will sets {"state":"offline"} when
//                      the bridge dies or its network goes;
// - <robot>/telemetry  retained: a summary at mqtt.telemetry_hz;
// - <robot>/events     link changes, safety stops, the emergency latch, who drives;
// - _fleet/cmd/emergency and <robot>/cmd/emergency: stop and latch. Who may
//   publish there is the broker's ACL's to say (deploy/mosquitto/).
//
// The fleet knows no robot family: the core (Bridge) says what the status
// and telemetry hold, and does the emergency stop.
#pragma once

#include <uv.h>

#include <map>
#include <optional>
#include <string>

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
  /// The hub's stop button: the fleet's emergency stop, or one robot's.
  [[nodiscard]] protocol::Result<protocol::Done> publish_emergency(const std::string& robot, const std::string& by);

 private:
  // MqttClient::Host
  void mqtt_connected() override;
  void mqtt_message(const MqttMessage& message) override;

  /// A robot's status, telemetry or event, for the hub's view.
  void follow(const MqttMessage& message);
  void publish_status();
  void publish_telemetry();
  void arm_telemetry_timer();
  [[nodiscard]] std::string status_payload(bool online, std::string_view reason) const;

  uv_loop_t* loop_;
  Host& host_;
  std::optional<MqttClient> client_;
  std::string prefix_;
  std::string robot_;
  std::string fleet_emergency_topic_;
  std::string robot_emergency_topic_;
  double telemetry_hz_ = 1;
  bool announce_ = true;  ///< this bridge has a robot to tell the fleet of
  bool hub_ = false;
  // NOLINTNEXTLINE(bugprone-exception-escape): nlohmann::json's moves do not throw; clang-tidy cannot tell
  struct Member {
    nlohmann::json status;
    nlohmann::json telemetry;
    nlohmann::json event;
    double seen = 0;  ///< Unix seconds of the last message from it
  };
  std::map<std::string, Member> members_;
  UvHandle<uv_timer_t> telemetry_timer_;
};

/// The robot's name when mqtt.robot_name is empty: the host name's first
/// label, in lower case ("flockbot-07").
[[nodiscard]] std::string default_robot_name();

}  // namespace flockbridge::bridge
