#include "e2e/rig.hpp"

#include "support/listener.hpp"
#include "support/listening.hpp"

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>

namespace flockbridge::testing {

std::string bytes(std::initializer_list<int> values) {
  std::string out;
  for (int v : values) out.push_back(static_cast<char>(v));
  return out;
}

namespace {

/// What the last rig's programs said, kept for the listener below.
std::string g_transcript;

std::string tail_of(const std::vector<std::string>& lines, const char* title, std::size_t most = 80) {
  std::string text =
      std::string("---- ") + title + " (last " + std::to_string(std::min(most, lines.size())) + " lines)\n";
  for (std::size_t i = lines.size() > most ? lines.size() - most : 0; i < lines.size(); ++i) text += lines[i] + "\n";
  return text;
}

/// Prints the bridge's log and the simulator's events when an end-to-end
/// test fails, so that a failure on a CI machine explains itself.
struct TranscriptOnFailure : Listener {
  explicit TranscriptOnFailure(const doctest::ContextOptions&) {}
  void test_case_start(const doctest::TestCaseData&) override { g_transcript.clear(); }
  void test_case_end(const doctest::CurrentTestCaseStats& stats) override {
    if ((stats.failure_flags != 0 || stats.numAssertsFailedCurrentTest > 0) && !g_transcript.empty()) {
      std::fputs(g_transcript.c_str(), stderr);
    }
  }
};
REGISTER_LISTENER("transcript", 1, TranscriptOnFailure);

}  // namespace

Rig::Rig(RigOptions options) : network_(options.network) {
  device_ = (directory_ / "uno").string();

  if (options.start_sim) {
    std::vector<std::string> sim_argv{FLOCKBOT_SIM_BIN, "--robot", options.robot, "--link", device_};
    if (options.robot == "pioneer") {
      sim_argv.insert(sim_argv.end(), {"--model", options.model});
    } else if (options.robot == "flockbot") {
      sim_argv.insert(sim_argv.end(), {"--rate-hz", std::to_string(options.rate_hz)});
    }
    sim_argv.insert(sim_argv.end(), options.sim_args.begin(), options.sim_args.end());
    sim_ = std::make_unique<ChildProcess>(sim_argv);
    REQUIRE(sim_->wait_for(ChildProcess::Stream::Stdout, "ready "));
  }

  // A generous NAK window: the tests run beside other work on small machines.
  std::vector<std::string> bridge_argv{
      options.bridge_binary.empty() ? std::string(FLOCKBRIDGE_BIN) : options.bridge_binary,
      "--device",
      device_,
      "--bind",
      !options.bind.empty() ? options.bind
      : network_ != nullptr ? "0.0.0.0"
                            : "127.0.0.1",
      "--port",
      "0",
      "--json-port",
      "0",
      "--http-port",
      "0",
      "--nak-window-ms",
      "100",
      "--reopen-max-ms",
      "500",
      "--robot",
      options.robot};
  // Test bridges never touch an installed Avahi service file (a test may give one of its own).
  bridge_argv.insert(bridge_argv.end(), {"--mdns-service-file", ""});
  // The Foxglove live view, when a test turns it on, at a free port too.
  bridge_argv.insert(bridge_argv.end(), {"--foxglove-port", "0"});
  bridge_argv.insert(bridge_argv.end(), options.bridge_args.begin(), options.bridge_args.end());
  if (!options.config.empty()) {
    std::ofstream(config_path()) << options.config;
    // As an installed file with secrets must be: unreadable to others.
    std::filesystem::permissions(config_path(),
                                 std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    bridge_argv.insert(bridge_argv.end(), {"--config", config_path().string()});
  }
  // An installed /etc/flockbridge/flockbridge.toml must not change the tests.
  if (std::find(bridge_argv.begin(), bridge_argv.end(), "--config") == bridge_argv.end()) {
    bridge_argv.emplace_back("--no-config");
  }
  if (network_ != nullptr || !options.bridge_prefix.empty()) {
    // On the robot's computer: `ip netns exec` becomes the bridge (the same
    // process), under the emulator in a cross build; so do the programs of
    // bridge_prefix.
    std::vector<std::string> prefix = options.bridge_prefix;
    if (network_ != nullptr) prefix.insert(prefix.begin(), {"ip", "netns", "exec", network_->robot()});
    if (const std::string emulator = FLOCKBRIDGE_TEST_EMULATOR; !emulator.empty()) prefix.push_back(emulator);
    bridge_argv.insert(bridge_argv.begin(), prefix.begin(), prefix.end());
    bridge_ = std::make_unique<ChildProcess>(bridge_argv, options.bridge_env, ChildProcess::Program::System);
  } else {
    bridge_ = std::make_unique<ChildProcess>(bridge_argv, options.bridge_env);
  }
  const auto listening = bridge_->wait_for(ChildProcess::Stream::Stderr, "listening: ");
  REQUIRE_MESSAGE(listening, "the bridge did not start listening");
  const auto ports = listening_ports(*listening);
  REQUIRE(ports);
  port_ = ports->native;
  json_port_ = ports->json;
  http_port_ = ports->http;
  foxglove_port_ = ports->foxglove;
  if (options.start_sim && options.wait_until_up) expect_log("robot link up");
}

Rig::~Rig() {
  // Both programs must stop cleanly on SIGTERM: exit status 0, which also
  // means no sanitizer report when they are built with sanitizers.
  const int bridge_status = bridge_ ? bridge_->terminate() : 0;
  const int sim_status = sim_ ? sim_->terminate() : 0;
  if (bridge_) g_transcript += tail_of(bridge_->lines(ChildProcess::Stream::Stderr), "flockbridge log");
  if (sim_) g_transcript += tail_of(sim_->lines(ChildProcess::Stream::Stdout), "flockbot-sim events");
  if (std::uncaught_exceptions() == 0) {
    if (!bridge_killed_) CHECK_MESSAGE(bridge_status == 0, "flockbridge exited with " << bridge_status);
    if (bridge_)
      CHECK_FALSE_MESSAGE(bridge_->seen(ChildProcess::Stream::Stderr, "the loop still had handles"),
                          "flockbridge left libuv handles open at exit");
    CHECK_MESSAGE(sim_status == 0, "flockbot-sim exited with " << sim_status);
  }
}

void Rig::signal_bridge(int signal_number) {
  REQUIRE(::kill(bridge_->pid(), signal_number) == 0);
}

void Rig::kill_bridge() {
  signal_bridge(SIGKILL);
  bridge_->wait_exit();
  bridge_killed_ = true;
}

void Rig::sim_command(const std::string& command) {
  sim_->send_line(command);
  const std::string word = command.substr(0, command.find(' '));
  REQUIRE_MESSAGE(sim_->wait_for(ChildProcess::Stream::Stdout, "done " + word), "simulator did not do: " << command);
}

std::string Rig::expect_sim(std::string_view needle, std::chrono::milliseconds timeout) {
  auto line = sim_->wait_for(ChildProcess::Stream::Stdout, needle, timeout);
  REQUIRE_MESSAGE(line, "the simulated Uno never said: " << needle);
  return *line;
}

std::string Rig::expect_log(std::string_view needle, std::chrono::milliseconds timeout) {
  auto line = bridge_->wait_for(ChildProcess::Stream::Stderr, needle, timeout);
  REQUIRE_MESSAGE(line, "the bridge never logged: " << needle);
  return *line;
}

TcpClient Rig::connect(std::uint16_t port, int receive_buffer) {
  const auto make = [&] { return TcpClient(port, receive_buffer); };
  return network_ != nullptr ? network_->on_robot(make) : make();
}

WebSocketClient Rig::connect_web(int receive_buffer) {
  const auto make = [&] { return WebSocketClient(http_port_, "/ws", receive_buffer); };
  return network_ != nullptr ? network_->on_robot(make) : make();
}

TcpClient Rig::binary_client(int receive_buffer) {
  TcpClient client = connect(port_, receive_buffer);
  const std::string accepted = "(binary, 127.0.0.1:" + std::to_string(client.local_port()) + ") connected";
  REQUIRE_MESSAGE(bridge_->wait_seen(ChildProcess::Stream::Stderr, accepted), "the bridge did not accept the client");
  return client;
}

TcpClient Rig::extended_client(int receive_buffer) {
  TcpClient client = connect(port_, receive_buffer);
  client.send(bytes({4, 'E', 'X', 'T', 1}));
  const auto answer = client.read_message_tag("EXT");
  REQUIRE_MESSAGE(answer, "the bridge did not answer EXT");
  REQUIRE(*answer == std::string("EXT\x01"));
  return client;
}

TcpClient Rig::json_client(int receive_buffer) {
  TcpClient client = connect(json_port_, receive_buffer);
  auto hello = client.read_json();
  REQUIRE(hello);
  REQUIRE((*hello)["type"] == "hello");
  return client;
}

WebSocketClient Rig::web_client(int receive_buffer) {
  WebSocketClient client = connect_web(receive_buffer);
  REQUIRE_MESSAGE(client.accepted(), "the WebSocket upgrade was refused: " << client.handshake_response());
  auto hello = client.read_json();
  REQUIRE(hello);
  REQUIRE((*hello)["type"] == "hello");
  return client;
}

nlohmann::json bridge_stats(TcpClient& client) {
  client.send("{\"cmd\":\"stats\",\"id\":\"stats\"}\n");
  auto stats = client.read_json_type("stats");
  REQUIRE(stats);
  return *stats;
}

nlohmann::json link_stats(TcpClient& client) {
  return bridge_stats(client)["link"];
}

}  // namespace flockbridge::testing
