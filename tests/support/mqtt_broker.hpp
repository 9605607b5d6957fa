// A real mosquitto on 127.0.0.1 for the fleet's tests, set up as
// docs/fleet.md says: the project's example ACL (deploy/mosquitto/), the
// accounts made with its flockbridge-mqtt-account (the teacher, the hub, the
// class, each robot), a student's account with no rights, and no anonymous
// access; plus mosquitto_sub and mosquitto_pub as the fleet's other members.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "support/process.hpp"
#include "support/temp_dir.hpp"

namespace flockbridge::testing {

class MqttBroker {
 public:
  /// Starts mosquitto with accounts for `robots` (user = robot name), the
  /// teacher, the hub, the class and a student.
  explicit MqttBroker(const std::vector<std::string>& robots);
  MqttBroker(const MqttBroker&) = delete;
  MqttBroker& operator=(const MqttBroker&) = delete;
  ~MqttBroker();

  [[nodiscard]] std::uint16_t port() const noexcept { return port_; }
  /// A file holding `user`'s password, for mqtt.password_file.
  [[nodiscard]] std::filesystem::path password_file(const std::string& user) const;
  [[nodiscard]] static std::string password(const std::string& user) { return user + "-secret"; }

  /// The ACL the broker reads: the project's example, with a paragraph per robot.
  [[nodiscard]] std::filesystem::path acl_file() const;
  /// What the broker has logged as a warning or an error so far.
  [[nodiscard]] std::vector<std::string> warnings();

  /// The bridge's command-line options to join this broker as `robot`.
  [[nodiscard]] std::vector<std::string> bridge_args(const std::string& robot, double telemetry_hz = 5) const;

  /// A subscriber (mosquitto_sub -v: "topic payload" lines) as `user`.
  [[nodiscard]] std::unique_ptr<ChildProcess> subscribe(const std::string& user, const std::string& topic) const;
  /// Publishes one message as `user` and waits until mosquitto_pub is done
  /// (the broker has it: QoS 1). Returns mosquitto_pub's exit status.
  int publish(const std::string& user, const std::string& topic, const std::string& payload, bool retain = false) const;

  /// Kills the broker (SIGKILL) and waits for it to be gone.
  void kill();
  /// Starts it again on the same port.
  void start();
  /// Holds it (SIGSTOP) or lets it go on (SIGCONT): a broker that no longer answers.
  void pause(bool paused);

 private:
  TempDir directory_;
  std::uint16_t port_ = 0;
  std::unique_ptr<ChildProcess> process_;
};

}  // namespace flockbridge::testing
