// The bridge on a real loop in this process, against its built-in simulated
// Uno, with a real TCP client: the loop must run the handshake, serve the
// client, and, once stopped, leave no handle behind (uv_loop_close succeeds).
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>

#include <string>

#include "flockbridge/bridge/bridge.hpp"
#include "flockbridge/bridge/families.hpp"
#include "flockbridge/bridge/log.hpp"
#include "support/run_until.hpp"

using namespace flockbridge;
using namespace std::chrono_literals;

namespace {

using flockbridge::testing::run_until;

/// A non-blocking client socket on 127.0.0.1:port, read between loop turns.
struct LoopClient {
  explicit LoopClient(std::uint16_t port) : fd(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    (void)::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  }
  LoopClient(const LoopClient&) = delete;
  LoopClient& operator=(const LoopClient&) = delete;
  ~LoopClient() { close(); }
  void close() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
  bool write(const std::string& bytes) const {
    return ::write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size());
  }
  void read_some() {
    char buffer[4096];
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n > 0) received.append(buffer, static_cast<std::size_t>(n));
  }
  int fd;
  std::string received;
};

bridge::DriverFactory flockbot_driver() {
  return bridge::find_robot_family("flockbot")->make_driver;
}

bridge::Config test_config() {
  // --simulate starts the simulator beside the daemon; a cross-built one
  // runs under the emulator that runs this test.
  if (const std::string emulator = FLOCKBRIDGE_TEST_EMULATOR; !emulator.empty()) {
    ::setenv("FLOCKBRIDGE_SIMULATOR", (emulator + " " + FLOCKBRIDGE_SIM_BIN).c_str(), 1);
  }
  bridge::Config config = bridge::settings_table().defaults();
  config.simulate = true;
  config.bind = "127.0.0.1";
  config.native_port = 0;
  config.json_port = 0;
  config.http_port = 0;
  config.reopen_min = 20ms;          // the simulator makes its device a moment after it starts
  config.mdns_service_file.clear();  // never an installed one
  return config;
}

}  // namespace

TEST_CASE("the bridge reaches the simulated Uno, serves a client, and closes every handle") {
  bridge::set_log_level(bridge::LogLevel::Warning);
  uv_loop_t loop;
  REQUIRE(uv_loop_init(&loop) == 0);
  {
    bridge::Bridge daemon(&loop, test_config(), flockbot_driver(), bridge::settings_table());
    REQUIRE(daemon.start());
    REQUIRE(run_until(&loop, [&] { return daemon.driver().link_state() == protocol::LinkState::Up; }));

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
    CHECK(received.rfind(R"({"type":"hello","version":2,"session":")" + daemon.session_id(), 0) == 0);
    CHECK(daemon.client_count() == 1);

    const std::string command = "{\"cmd\":\"move\",\"speed\":30,\"id\":1}\n";
    REQUIRE(::write(fd, command.data(), command.size()) == static_cast<ssize_t>(command.size()));
    REQUIRE(run_until(&loop, [&] {
      read_some();
      return received.find(R"({"type":"ok","id":1,"confirmed":false})") != std::string::npos;
    }));
    CHECK(daemon.snapshot().commands.delivered == 1);

    ::close(fd);
    REQUIRE(run_until(&loop, [&] { return daemon.client_count() == 0; }));
    daemon.stop();
    uv_run(&loop, UV_RUN_DEFAULT);
  }
  uv_run(&loop, UV_RUN_DEFAULT);
  CHECK(uv_loop_close(&loop) == 0);
}

/// Starts a bridge, then a second one on the same loop with `change` applied
/// to its configuration (given the first bridge); the second must fail with
/// a message that begins with `expected(first)`.
template <typename Change, typename Expected>
void expect_second_bridge_fails(Change change, Expected expected) {
  bridge::set_log_level(bridge::LogLevel::Error);
  uv_loop_t loop;
  REQUIRE(uv_loop_init(&loop) == 0);
  {
    bridge::Bridge first(&loop, test_config(), flockbot_driver(), bridge::settings_table());
    REQUIRE(first.start());
    auto config = test_config();
    change(config, first);
    bridge::Bridge second(&loop, config, flockbot_driver(), bridge::settings_table());
    auto started = second.start();
    REQUIRE_FALSE(started);
    CHECK(started.error().message.find(expected(first)) == 0);
  }
  uv_run(&loop, UV_RUN_DEFAULT);
  CHECK(uv_loop_close(&loop) == 0);
}

TEST_CASE("a bridge whose port is taken fails to start with a clear reason") {
  expect_second_bridge_fails(
      [](bridge::Config& config, const bridge::Bridge& first) { config.native_port = first.native_port(); },
      [](const bridge::Bridge& first) {
        return "cannot listen on 127.0.0.1:" + std::to_string(first.native_port()) +
               " for the robot's own programs: the port is in use (another flockbridge, or "
               "another server); choose another with --port (0: any free port)";
      });
}

TEST_CASE("the web server serves the page and a WebSocket on the bridge's loop, and closes every handle") {
  bridge::set_log_level(bridge::LogLevel::Warning);
  uv_loop_t loop;
  REQUIRE(uv_loop_init(&loop) == 0);
  {
    bridge::Bridge daemon(&loop, test_config(), flockbot_driver(), bridge::settings_table());
    REQUIRE(daemon.start());
    REQUIRE(daemon.http_port() != 0);

    LoopClient page(daemon.http_port());
    // The connect completes on a loop turn; the request is written once it has.
    REQUIRE(
        run_until(&loop, [&] { return page.write("GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"); }));
    REQUIRE(run_until(&loop, [&] {
      page.read_some();
      return page.received.find("</html>") != std::string::npos;
    }));
    CHECK(page.received.rfind("HTTP/1.1 200", 0) == 0);

    LoopClient feed(daemon.http_port());
    REQUIRE(run_until(&loop, [&] {
      return feed.write(
          "GET /ws HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
          "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n");
    }));
    REQUIRE(run_until(&loop, [&] {
      feed.read_some();
      return feed.received.find(R"({"type":"hello")") != std::string::npos;
    }));
    CHECK(feed.received.rfind("HTTP/1.1 101", 0) == 0);
    CHECK(daemon.client_count() == 1);

    feed.close();
    REQUIRE(run_until(&loop, [&] { return daemon.client_count() == 0; }));
    daemon.stop();
    uv_run(&loop, UV_RUN_DEFAULT);
  }
  uv_run(&loop, UV_RUN_DEFAULT);
  CHECK(uv_loop_close(&loop) == 0);
}

TEST_CASE("a bridge whose dashboard folder is missing fails to start and says which setting to change") {
  bridge::set_log_level(bridge::LogLevel::Error);
  uv_loop_t loop;
  REQUIRE(uv_loop_init(&loop) == 0);
  {
    auto config = test_config();
    config.http_root = "/nonexistent/www";
    bridge::Bridge daemon(&loop, config, flockbot_driver(), bridge::settings_table());
    auto started = daemon.start();
    REQUIRE_FALSE(started);
    CHECK(started.error().message.find("'/nonexistent/www'") != std::string::npos);
    CHECK(started.error().message.find("--http-root") != std::string::npos);
  }
  uv_run(&loop, UV_RUN_DEFAULT);
  CHECK(uv_loop_close(&loop) == 0);
}

TEST_CASE("a bridge whose web server port is taken fails to start with a clear reason") {
  expect_second_bridge_fails(
      [](bridge::Config& config, const bridge::Bridge& first) { config.http_port = first.http_port(); },
      [](const bridge::Bridge& first) {
        return "cannot listen on 127.0.0.1:" + std::to_string(first.http_port()) + " for the web server";
      });
}
