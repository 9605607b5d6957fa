// The daemon as a service, end to end: its configuration file and the
// command line over it, a bad file refused at start and at reload, SIGHUP
// applying new settings without dropping clients, and what it tells systemd
// through $NOTIFY_SOCKET.
#include <doctest/doctest.h>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <csignal>
#include <fstream>

#include "e2e/rig.hpp"

using namespace flockbridge::testing;
using namespace std::chrono_literals;
using Stream = ChildProcess::Stream;

namespace {

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path) << text;
}

/// A unix datagram socket standing in for systemd's notification socket.
class FakeSystemd {
 public:
  explicit FakeSystemd(std::filesystem::path path) : path_(std::move(path)) {
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    path_.string().copy(address.sun_path, sizeof(address.sun_path) - 1);
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0);
  }
  ~FakeSystemd() { ::close(fd_); }
  FakeSystemd(const FakeSystemd&) = delete;
  FakeSystemd& operator=(const FakeSystemd&) = delete;

  [[nodiscard]] std::string environment() const { return "NOTIFY_SOCKET=" + path_.string(); }

  /// Reads notifications until one contains `needle`; returns it, or "" after `timeout`.
  std::string wait_for(std::string_view needle, std::chrono::milliseconds timeout = 10s) {
    const auto end = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < end) {
      const auto left = std::chrono::duration_cast<std::chrono::microseconds>(end - std::chrono::steady_clock::now());
      timeval wait{static_cast<time_t>(left.count() / 1'000'000), static_cast<suseconds_t>(left.count() % 1'000'000)};
      ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait));
      char buffer[2048];
      const ssize_t n = ::recv(fd_, buffer, sizeof(buffer), 0);
      if (n <= 0) break;
      received.emplace_back(buffer, static_cast<std::size_t>(n));
      if (received.back().find(needle) != std::string::npos) return received.back();
    }
    return "";
  }

  std::vector<std::string> received;

 private:
  std::filesystem::path path_;
  int fd_ = -1;
};

}  // namespace

TEST_CASE("the daemon reads its file, its options override it, and --print-config shows what is in force") {
  TempDir folder;
  const auto file = folder / "flockbridge.toml";
  write_file(file, "[serial]\nbaud = 57600\n[robot]\nid = 12\n[log]\nlevel = \"debug\"\n");
  ChildProcess printer({FLOCKBRIDGE_BIN, "--config", file.string(), "--robot-id", "13", "--print-config"});
  CHECK(printer.wait_exit() == 0);
  const auto lines = printer.lines(Stream::Stdout);
  const auto has = [&](const std::string& line) { return std::find(lines.begin(), lines.end(), line) != lines.end(); };
  CHECK(has("baud = 57600"));
  CHECK(has("id = 13"));
  CHECK(has("level = 'debug'"));
  CHECK(has("[flockbot.units]"));
}

TEST_CASE("a bad file stops start-up, naming the setting, the value and what is allowed") {
  TempDir folder;
  const auto file = folder / "flockbridge.toml";
  write_file(file, "[clients]\nmax_line = 10\n");
  ChildProcess bridge({FLOCKBRIDGE_BIN, "--config", file.string()});
  CHECK(bridge.wait_seen(Stream::Stderr, file.string() +
                                             ":2: clients.max_line = 10 is not allowed: it must be a whole number "
                                             "from 256 to 1048576"));
  CHECK(bridge.wait_exit() == 78);  // EX_CONFIG: systemd does not restart it over and over
  CHECK_FALSE(bridge.seen(Stream::Stderr, "listening"));
}

TEST_CASE("SIGHUP applies new settings without dropping a client, and sends the robot its new CFG") {
  // Written with the name robot.id had before other families came: read as before, with a warning.
  Rig rig({.config = "[robot]\nid = 3\n"});
  CHECK(rig.bridge().seen(Stream::Stderr,
                          "uses the Flockbot's settings under their old names: robot.id (now flockbot.id)"));
  auto client = rig.json_client();
  auto before = client.read_json_type("sensor");
  REQUIRE(before);
  CHECK(before->at("battery_v").is_null());  // not known: the common model says so

  write_file(rig.config_path(),
             "[flockbot]\nid = 9\n[flockbot.units]\nbattery_volts_per_count = 0.01\n[listen]\nmax_clients = 5\n");
  rig.signal_bridge(SIGHUP);
  rig.expect_log("reloaded flockbot.id: 3 -> 9");
  rig.expect_log("reloaded flockbot.units.battery_volts_per_count: 0.0 -> 0.01");
  rig.expect_log("not reloaded, needs a restart: listen.max_clients: 32 -> 5");
  // CFG: gripper 0, both stop points 1500 (DC 05), servo model 0, id 9.
  rig.expect_sim("rx 43 46 47 00 DC 05 DC 05 00 09");
  rig.expect_log("robot link up");

  // The same connection goes on, now with volts.
  std::optional<nlohmann::json> after;
  for (int i = 0; i < 50 && !(after && !after->at("battery_v").is_null()); ++i) after = client.read_json_type("sensor");
  REQUIRE(after);
  REQUIRE(after->at("battery_v").is_number());
  CHECK((*after)["battery_v"].get<double>() == doctest::Approx((*after)["battery"].get<double>() * 0.01));
  CHECK_FALSE(rig.bridge().seen(Stream::Stderr, "closed"));
}

TEST_CASE("a bad file at SIGHUP is reported and the bridge runs on as it was") {
  Rig rig({.config = "[log]\nlevel = \"info\"\n"});
  auto client = rig.json_client();

  write_file(rig.config_path(), "[log]\nlevel = \"chatty\"\n");
  rig.signal_bridge(SIGHUP);
  rig.expect_log("the configuration was not reloaded");
  rig.expect_log(":2: log.level = 'chatty' is not allowed");
  CHECK(client.read_json_type("sensor"));
  client.send("{\"cmd\":\"claw_open\",\"id\":1}\n");
  auto answer = client.read_json_type("ok");
  CHECK(answer);
}

TEST_CASE("systemd hears READY once the ports are bound, the link's state, watchdog pings, reloads and the stop") {
  TempDir folder;
  FakeSystemd systemd(folder / "notify");
  Rig rig({.bridge_env = {systemd.environment(), "WATCHDOG_USEC=200000"}});
  const std::string ready = systemd.wait_for("READY=1");
  REQUIRE_FALSE(ready.empty());
  CHECK(systemd.received.size() == 1);  // nothing before READY
  CHECK(ready.find("STATUS=robot link ") != std::string::npos);
  CHECK_FALSE(systemd.wait_for("STATUS=robot link up; 0 clients").empty());
  {
    auto client = rig.json_client();
    CHECK_FALSE(systemd.wait_for("STATUS=robot link up; 1 client").empty());
  }
  // The watchdog is fed from the loop every 100 ms (half of WATCHDOG_USEC).
  for (int i = 0; i < 3; ++i) CHECK_FALSE(systemd.wait_for("WATCHDOG=1", 2s).empty());

  rig.signal_bridge(SIGHUP);
  CHECK_FALSE(systemd.wait_for("RELOADING=1").empty());
  CHECK_FALSE(systemd.wait_for("READY=1").empty());

  REQUIRE(rig.bridge().terminate() == 0);
  CHECK_FALSE(systemd.wait_for("STOPPING=1").empty());
}

TEST_CASE("a TLS certificate without its key, or a key that cannot be read, stops start-up with the reason") {
  TempDir folder;
  const auto cert = folder / "cert.pem";
  write_file(cert, "not a certificate\n");
  ChildProcess alone({FLOCKBRIDGE_BIN, "--no-config", "--simulate", "--port", "0", "--json-port", "0", "--http-port",
                      "0", "--http-tls-cert", cert.string()});
  CHECK(alone.wait_seen(Stream::Stderr, "http.tls_cert and http.tls_key go together"));
  CHECK(alone.wait_exit() != 0);
  ChildProcess unreadable({FLOCKBRIDGE_BIN, "--no-config", "--simulate", "--port", "0", "--json-port", "0",
                           "--http-port", "0", "--http-tls-cert", cert.string(), "--http-tls-key",
                           (folder / "missing.pem").string()});
  CHECK(unreadable.wait_seen(Stream::Stderr, "missing.pem' for the dashboard's TLS: No such file or directory"));
  CHECK(unreadable.wait_exit() != 0);
  CHECK_FALSE(unreadable.seen(Stream::Stderr, "listening"));
}
