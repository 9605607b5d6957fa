#include "e2e/rig.hpp"

#include "support/listening.hpp"

#include <unistd.h>

#include <cstdlib>
#include <exception>

namespace flockbridge::testing {

std::string bytes(std::initializer_list<int> values) {
  std::string out;
  for (int v : values) out.push_back(static_cast<char>(v));
  return out;
}

Rig::Rig(RigOptions options) {
  std::string pattern = (std::filesystem::temp_directory_path() / "flockbridge-test-XXXXXX").string();
  REQUIRE(::mkdtemp(pattern.data()) != nullptr);
  directory_ = pattern;
  device_ = (directory_ / "uno").string();

  if (options.start_sim) {
    std::vector<std::string> sim_argv{FLOCKBOT_SIM_BIN, "--link", device_, "--rate-hz",
                                      std::to_string(options.rate_hz)};
    sim_argv.insert(sim_argv.end(), options.sim_args.begin(), options.sim_args.end());
    sim_ = std::make_unique<ChildProcess>(sim_argv);
    REQUIRE(sim_->wait_for(ChildProcess::Stream::Stdout, "ready "));
  }

  // A generous NAK window: the tests run beside other work on small machines.
  std::vector<std::string> bridge_argv{
      FLOCKBRIDGE_BIN, "--device", device_,           "--bind", "127.0.0.1",       "--port", "0",
      "--json-port",   "0",        "--nak-window-ms", "100",    "--reopen-max-ms", "500"};
  bridge_argv.insert(bridge_argv.end(), options.bridge_args.begin(), options.bridge_args.end());
  bridge_ = std::make_unique<ChildProcess>(bridge_argv);
  const auto listening = bridge_->wait_for(ChildProcess::Stream::Stderr, "listening: ");
  REQUIRE_MESSAGE(listening, "the bridge did not start listening");
  const auto ports = listening_ports(*listening);
  REQUIRE(ports);
  port_ = ports->binary;
  json_port_ = ports->json;
  if (options.start_sim && options.wait_until_up) expect_log("robot link up");
}

Rig::~Rig() {
  // Both programs must stop cleanly on SIGTERM: exit status 0, which also
  // means no sanitizer report when they are built with sanitizers.
  const int bridge_status = bridge_ ? bridge_->terminate() : 0;
  const int sim_status = sim_ ? sim_->terminate() : 0;
  if (std::uncaught_exceptions() == 0) {
    CHECK_MESSAGE(bridge_status == 0, "flockbridge exited with " << bridge_status);
    CHECK_MESSAGE(sim_status == 0, "flockbot-sim exited with " << sim_status);
  }
  std::error_code ignored;
  std::filesystem::remove_all(directory_, ignored);
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

TcpClient Rig::json_client(int receive_buffer) {
  TcpClient client(json_port_, receive_buffer);
  auto hello = client.read_json();
  REQUIRE(hello);
  REQUIRE((*hello)["type"] == "hello");
  return client;
}

}  // namespace flockbridge::testing
