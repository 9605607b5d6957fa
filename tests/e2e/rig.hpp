// The real flockbridge against the real flockbot-sim over a pseudo-terminal,
// each in its own process, with listeners on 127.0.0.1 at free ports.
#pragma once

#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "support/process.hpp"
#include "support/tcp_client.hpp"
#include "support/temp_dir.hpp"
#include "support/test_network.hpp"
#include "support/web_client.hpp"

namespace flockbridge::testing {

struct RigOptions {
  /// The robot family: the simulator plays it and the bridge is told it.
  std::string robot = "flockbot";
  /// pioneer: the simulated robot's model (the bridge learns it from SYNC2).
  std::string model = "p3dx-sh";
  double rate_hz = 50;                   ///< flockbot: sensor packets a second
  std::vector<std::string> bridge_args;  ///< without --config or `config`, the bridge reads no configuration file
  /// TOML for a configuration file in the rig's folder, given with --config (empty: none).
  std::string config;
  std::vector<std::string> bridge_env;  ///< NAME=value, added to the bridge's environment
  std::vector<std::string> sim_args;
  bool start_sim = true;
  bool wait_until_up = true;
  /// The bridge runs on this network's robot computer, listening on every
  /// address there, and the rig's own clients connect from that computer
  /// (null: on this machine, on 127.0.0.1).
  TestNetwork* network = nullptr;
  /// Another build of the daemon (a benchmark's --bridge); empty: this build's.
  std::string bridge_binary;
  /// --bind: empty for 127.0.0.1 (0.0.0.0 on a test network).
  std::string bind;
  /// A program of this machine's that the bridge is started under (setpriv,
  /// prlimit: rights taken away), its arguments ending before the bridge's.
  std::vector<std::string> bridge_prefix;
};

/// A rig with a simulated Pioneer of this model, the bridge told --robot pioneer.
[[nodiscard]] inline RigOptions pioneer_rig(const std::string& model = "p3dx-sh") {
  RigOptions options;
  options.robot = "pioneer";
  options.model = model;
  return options;
}

/// A rig with a simulated SMR bus, the bridge told --robot smr.
[[nodiscard]] inline RigOptions smr_rig() {
  RigOptions options;
  options.robot = "smr";
  return options;
}

class Rig {
 public:
  explicit Rig(RigOptions options = {});
  Rig(const Rig&) = delete;
  Rig& operator=(const Rig&) = delete;
  ~Rig();

  ChildProcess& sim() { return *sim_; }
  ChildProcess& bridge() { return *bridge_; }
  [[nodiscard]] std::uint16_t port() const noexcept { return port_; }
  [[nodiscard]] std::uint16_t json_port() const noexcept { return json_port_; }
  [[nodiscard]] std::uint16_t http_port() const noexcept { return http_port_; }
  /// The Foxglove live view's port (given --foxglove): 0 when it is off.
  [[nodiscard]] std::uint16_t foxglove_port() const noexcept { return foxglove_port_; }
  [[nodiscard]] const std::string& device() const noexcept { return device_; }
  /// A folder of the test's own, removed with the rig.
  [[nodiscard]] const std::filesystem::path& directory() const noexcept { return directory_.path(); }
  /// The configuration file written from RigOptions::config.
  [[nodiscard]] std::filesystem::path config_path() const { return directory_ / "flockbridge.toml"; }
  /// Sends a signal to the bridge (SIGHUP: reload its configuration).
  void signal_bridge(int signal_number);
  /// Kills the bridge with SIGKILL (it stops nothing, says goodbye to
  /// nobody) and waits until it is gone.
  void kill_bridge();

  /// Runs a simulator command and waits for it to be done.
  void sim_command(const std::string& command);
  /// Waits for a simulator event line containing `needle`; fails the test if none comes.
  std::string expect_sim(std::string_view needle, std::chrono::milliseconds timeout = std::chrono::seconds(10));
  /// Waits for a bridge log line containing `needle`; fails the test if none comes.
  std::string expect_log(std::string_view needle, std::chrono::milliseconds timeout = std::chrono::seconds(10));

  /// A binary client the bridge has accepted (it sends no greeting, so its
  /// acceptance is read from the bridge's log).
  TcpClient binary_client(int receive_buffer = 0);
  /// A binary client that has asked for the bridge's own messages (EXT 1)
  /// and had the answer.
  TcpClient extended_client(int receive_buffer = 0);
  /// A JSON client whose hello has been read.
  TcpClient json_client(int receive_buffer = 0);
  /// A WebSocket client of /ws whose hello has been read.
  WebSocketClient web_client(int receive_buffer = 0);

 private:
  /// A new connection to `port`, made on the robot's computer when the rig has a network.
  [[nodiscard]] TcpClient connect(std::uint16_t port, int receive_buffer);
  [[nodiscard]] WebSocketClient connect_web(int receive_buffer);

  TempDir directory_;
  TestNetwork* network_ = nullptr;
  std::string device_;
  std::unique_ptr<ChildProcess> sim_;
  std::unique_ptr<ChildProcess> bridge_;
  std::uint16_t port_ = 0;
  std::uint16_t json_port_ = 0;
  std::uint16_t http_port_ = 0;
  std::uint16_t foxglove_port_ = 0;
  bool bridge_killed_ = false;
};

/// Reads four sensor messages from a JSON or WebSocket client that asked for
/// one every `interval_s` seconds, and checks by the bridge's timestamps that
/// they came no more often (the first two may be closer: one may have been
/// on its way before the request).
template <typename Client>
void check_throttled(Client& client, double interval_s) {
  std::vector<nlohmann::json> sensors;
  while (sensors.size() < 4) {
    auto message = client.read_json_type("sensor");
    REQUIRE(message);
    sensors.push_back(*message);
  }
  for (std::size_t i = 2; i < sensors.size(); ++i) {
    CAPTURE(i);
    CHECK(sensors[i]["ts"].template get<double>() - sensors[i - 1]["ts"].template get<double>() >= interval_s - 0.01);
    CHECK(sensors[i]["seq"].template get<long>() - sensors[i - 1]["seq"].template get<long>() > 1);
  }
}

/// The next sensor message of a JSON client for which `test` holds, within 5 s.
template <typename Test>
nlohmann::json sensor_where(TcpClient& client, Test test) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < deadline) {
    auto message = client.read_json_type("sensor");
    REQUIRE(message);
    if (test(*message)) return *message;
  }
  FAIL("no sensor message matched");
  return {};
}

/// The link's part of the bridge's counters, asked for now by a JSON client.
nlohmann::json link_stats(TcpClient& client);
/// The bridge's counters (a JSON client's stats).
nlohmann::json bridge_stats(TcpClient& client);

/// Bytes from a list of values, for binary messages.
std::string bytes(std::initializer_list<int> values);

}  // namespace flockbridge::testing
