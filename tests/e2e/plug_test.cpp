// Plug and play against the real daemon: each family's simulated robot on a
// pseudo-terminal linked where the bridge searches (as udev links a USB
// serial adapter), beside devices that are no robot (one echoes, one
// babbles), with --robot auto --device auto. The robot is found and served,
// the others are left alone; a robot plugged in after start is served; a
// robot unplugged is told to every client, and another family's robot
// plugged in on the same path is served without a restart.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "e2e/driving.hpp"
#include "e2e/rig.hpp"
#include "flockbridge/bridge/families.hpp"
#include "support/listening.hpp"
#include "support/serial_stranger.hpp"

using namespace flockbridge::testing;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

/// The bridge looks at `devices` only, for whichever family answers.
RigOptions auto_rig(const fs::path& devices) {
  RigOptions options;
  options.robot = "auto";
  options.start_sim = false;
  options.wait_until_up = false;
  options.bridge_args = {"--device", "auto", "--search", (devices / "tty*").string()};
  return options;
}

/// A family's simulated robot, plugged in at `link`.
std::unique_ptr<ChildProcess> plug_in(const std::string& family, const fs::path& link) {
  auto robot = std::make_unique<ChildProcess>(
      std::vector<std::string>{FLOCKBOT_SIM_BIN, "--robot", family, "--link", link.string()});
  REQUIRE_MESSAGE(robot->wait_for(ChildProcess::Stream::Stdout, "ready "),
                  "the simulated " << family << " did not start");
  return robot;
}

/// The next hello of `client` that names `family`.
nlohmann::json hello_of(TcpClient& client, const std::string& family, std::chrono::milliseconds timeout = 20s) {
  const auto hello = flockbridge::testing::read_until(
      timeout, [&](std::chrono::milliseconds left) { return client.read_json_type("hello", left); },
      [&](const nlohmann::json& message) { return message["robot"] == family; });
  REQUIRE_MESSAGE(hello, "no hello of a " << family << " robot");
  return *hello;
}

/// Waits until `client` hears that the link is up.
void link_up(TcpClient& client, std::chrono::milliseconds timeout = 20s) {
  const auto up = flockbridge::testing::read_until(
      timeout, [&](std::chrono::milliseconds left) { return client.read_json(left); },
      [](const nlohmann::json& message) {
        return (message["type"] == "link" && message["state"] == "up") ||
               (message["type"] == "hello" && message["link"] == "up");
      });
  REQUIRE_MESSAGE(up, "the robot link did not come up");
}

/// The port of the family's own programs, from the bridge's line about it.
std::uint16_t native_port_in(Rig& rig) {
  const std::string line = rig.expect_log("listening: native clients on ", 20s);
  const auto port = port_after(line, "native clients on ");
  REQUIRE(port);
  return *port;
}

}  // namespace

TEST_CASE("plug and play: --robot auto --device auto finds each family's robot on a device nobody named") {
  for (const std::string& family : robot_families()) {
    CAPTURE(family);
    const flockbridge::bridge::RobotFamily* described = flockbridge::bridge::find_robot_family(family);
    REQUIRE(described != nullptr);
    const bool recognisable = described->make_probe != nullptr;
    REQUIRE_MESSAGE(recognisable, "the " << family
                                         << " family cannot be recognised on a serial line (its RobotFamily has no "
                                         << "make_probe): plug and play cannot find its robot");
    TempDir devices;
    const auto robot = plug_in(family, devices.path() / "ttyUSB0");
    Rig rig(auto_rig(devices.path()));
    TcpClient client(rig.json_port());
    const nlohmann::json hello = hello_of(client, family);
    CHECK(hello["found"]["device"] == (devices.path() / "ttyUSB0").string());
    CHECK(hello["found"]["baud"].get<int>() > 0);
    CHECK(hello["found"]["took_ms"].get<double>() > 0);
    CHECK(hello["found"]["usb"].is_null());  // a pseudo-terminal is on no USB
    CHECK(hello["capabilities"].size() > 0);
    link_up(client);
    const std::string found = rig.expect_log("plug and play: found a " + family + " robot");
    MESSAGE(found.substr(found.find("plug and play")));
    // The robot's own programs' port is the family's (here a free one, as --port 0 asked).
    if (described->native_port != 0) CHECK(native_port_in(rig) > 0);
    // And it takes the common model's commands.
    client.send("{\"cmd\":\"stop\",\"id\":1}\n");
    const auto stopped = flockbridge::testing::read_until(
        10s, [&](std::chrono::milliseconds left) { return client.read_json(left); },
        [](const nlohmann::json& message) { return message.contains("id") && message["id"] == 1; });
    REQUIRE(stopped);
    CHECK((*stopped)["type"] == "ok");
  }
}

TEST_CASE("plug and play: a device that echoes and one that babbles are left alone, and said so") {
  TempDir devices;
  SerialStranger echo(SerialStranger::Kind::Echo, devices.path() / "ttyUSB0");
  SerialStranger babble(SerialStranger::Kind::Babble, devices.path() / "ttyUSB1");
  const std::string family = robot_families().front();
  const auto robot = plug_in(family, devices.path() / "ttyUSB2");
  Rig rig(auto_rig(devices.path()));
  rig.expect_log((devices.path() / "ttyUSB0").string() + " talks, but as no robot does: left alone", 60s);
  rig.expect_log((devices.path() / "ttyUSB1").string() + " talks, but as no robot does: left alone", 60s);
  rig.expect_log("plug and play: found a " + family + " robot on " + (devices.path() / "ttyUSB2").string(), 60s);
  TcpClient client(rig.json_port());
  link_up(client);
  // Left alone: once the robot is served, neither is sent anything more.
  const auto echoed = echo.received();
  const auto babbled = babble.received();
  const nlohmann::json stats = bridge_stats(client);  // a round trip: the bridge has been at work meanwhile
  CHECK(stats.is_object());
  CHECK(echo.received() == echoed);
  CHECK(babble.received() == babbled);
}

TEST_CASE("plug and play: a robot plugged in after start is served, and every client gets its hello") {
  TempDir devices;
  Rig rig(auto_rig(devices.path()));
  TcpClient client(rig.json_port());
  const auto waiting = client.read_json_type("hello");
  REQUIRE(waiting);
  CHECK(waiting->value("link", "") == "down");
  CHECK(waiting->value("reason", "").find("no robot found") != std::string::npos);
  CHECK_FALSE(waiting->contains("found"));

  const std::string family = robot_families().front();
  const auto plugged = std::chrono::steady_clock::now();
  const auto robot = plug_in(family, devices.path() / "ttyACM0");
  const nlohmann::json hello = hello_of(client, family);
  const auto served = std::chrono::steady_clock::now();
  link_up(client);
  const auto up = std::chrono::steady_clock::now();
  CHECK(hello["found"]["device"] == (devices.path() / "ttyACM0").string());
  // A robot that resets at each opening of its port (its probe only listens: an Arduino) is served on the
  // device as the probe left it, not opened again to start over.
  const flockbridge::bridge::RobotFamily* described = flockbridge::bridge::find_robot_family(family);
  REQUIRE(described != nullptr);
  const bool listens_only = described->make_probe != nullptr && described->make_probe()->listens_only();
  // The log line comes before the hello, but its pipe may be read after the hello's socket: waited for.
  const std::string took_over = "took over " + (devices.path() / "ttyACM0").string();
  if (listens_only) {
    CHECK(rig.bridge().wait_seen(ChildProcess::Stream::Stderr, took_over));
  } else {
    CHECK_FALSE(rig.bridge().seen(ChildProcess::Stream::Stderr, took_over));
  }
  MESSAGE("a " << family << " robot plugged in after start: its hello after "
               << std::chrono::duration<double>(served - plugged).count() << " s, its link up after "
               << std::chrono::duration<double>(up - plugged).count() << " s");
}

TEST_CASE("plug and play: a robot unplugged is told to everyone, and another family's robot on its path is served") {
  const std::vector<std::string> families = robot_families();
  REQUIRE(families.size() >= 2);
  TempDir devices;
  const fs::path path = devices.path() / "ttyUSB0";
  auto first = plug_in(families[0], path);
  Rig rig(auto_rig(devices.path()));
  TcpClient client(rig.json_port());
  hello_of(client, families[0]);
  link_up(client);
  const std::uint16_t first_port = native_port_in(rig);
  TcpClient program(first_port);  // one of the first family's own programs

  first->terminate();  // the simulator unplugs its device as it ends
  first.reset();
  const auto gone = flockbridge::testing::read_until(
      20s, [&](std::chrono::milliseconds left) { return client.read_json(left); },
      [](const nlohmann::json& message) {
        return message["type"] == "link" && message["state"] == "down" &&
               message.value("reason", "").find("unplugged") != std::string::npos;
      });
  REQUIRE_MESSAGE(gone, "no client was told that the robot was unplugged");
  const nlohmann::json searching = hello_of(client, "auto");
  CHECK_FALSE(searching.contains("found"));
  CHECK(program.wait_closed(10s));  // the first family's programs are let go

  const auto second = plug_in(families[1], path);
  const nlohmann::json hello = hello_of(client, families[1]);
  CHECK(hello["found"]["device"] == path.string());
  link_up(client);
  CHECK(rig.bridge().seen(ChildProcess::Stream::Stderr, "plug and play: found a " + families[1] + " robot"));
}
