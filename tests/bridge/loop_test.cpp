// The bridge on a real loop in this process, against its built-in simulated
// Uno, with a real TCP client: the loop must run the handshake, serve the
// client, and, once stopped, leave no handle behind (uv_loop_close succeeds).
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "flockbridge/bridge/bridge.hpp"
#include "flockbridge/bridge/log.hpp"

using namespace flockbridge;
using namespace std::chrono_literals;

namespace {

/// Runs the loop until `done` holds, or fails after `limit` of loop time.
template <typename Done>
bool run_until(uv_loop_t* loop, Done done, std::chrono::milliseconds limit = 10s) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > end) return false;
    uv_run(loop, UV_RUN_ONCE);
  }
  return true;
}

bridge::Config test_config() {
  bridge::Config config;
  config.simulate = true;
  config.bind = "127.0.0.1";
  config.port = 0;
  config.json_port = 0;
  config.http_port = 0;
  config.sim.boot_delay = 20ms;
  return config;
}

}  // namespace

TEST_CASE("the bridge reaches the simulated Uno, serves a client, and closes every handle") {
  bridge::set_log_level(bridge::LogLevel::Warning);
  uv_loop_t loop;
  REQUIRE(uv_loop_init(&loop) == 0);
  {
    bridge::Bridge daemon(&loop, test_config());
    REQUIRE(daemon.start());
    REQUIRE(run_until(&loop, [&] { return daemon.link().state() == protocol::LinkState::Up; }));

    // A JSON client, with a plain blocking socket driven between loop turns.
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(daemon.json_port());
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    (void)::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
    std::string received;
    const auto read_some = [&] {
      char buffer[4096];
      const ssize_t n = ::read(fd, buffer, sizeof(buffer));
      if (n > 0) received.append(buffer, static_cast<std::size_t>(n));
    };
    REQUIRE(run_until(&loop, [&] {
      read_some();
      return received.find("\"type\":\"sensor\"") != std::string::npos;
    }));
    CHECK(received.rfind(R"({"type":"hello","version":1,"session":")" + daemon.session_id(), 0) == 0);
    CHECK(daemon.client_count() == 1);

    const std::string command = "{\"cmd\":\"move\",\"speed\":30,\"id\":1}\n";
    REQUIRE(::write(fd, command.data(), command.size()) == static_cast<ssize_t>(command.size()));
    REQUIRE(run_until(&loop, [&] {
      read_some();
      return received.find(R"({"type":"ok","id":1})") != std::string::npos;
    }));
    CHECK(daemon.link().stats().commands_delivered == 1);

    ::close(fd);
    REQUIRE(run_until(&loop, [&] { return daemon.client_count() == 0; }));
    daemon.stop();
    uv_run(&loop, UV_RUN_DEFAULT);
  }
  uv_run(&loop, UV_RUN_DEFAULT);
  CHECK(uv_loop_close(&loop) == 0);
}

TEST_CASE("a bridge whose port is taken fails to start with a clear reason") {
  bridge::set_log_level(bridge::LogLevel::Error);
  uv_loop_t loop;
  REQUIRE(uv_loop_init(&loop) == 0);
  {
    bridge::Bridge first(&loop, test_config());
    REQUIRE(first.start());
    auto config = test_config();
    config.port = first.port();
    bridge::Bridge second(&loop, config);
    auto started = second.start();
    REQUIRE_FALSE(started);
    CHECK(started.error().message.find("cannot listen on 127.0.0.1:" + std::to_string(first.port())) == 0);
    CHECK(started.error().message.find("EADDRINUSE") != std::string::npos);
  }
  uv_run(&loop, UV_RUN_DEFAULT);
  CHECK(uv_loop_close(&loop) == 0);
}
