// The robot misbehaving, end to end: it reboots, goes quiet, is unplugged
// and plugged in again, or is not there at all. Clients stay connected and
// are told what happened.
#include <doctest/doctest.h>

#include "e2e/rig.hpp"

using namespace flockbridge::testing;
using Stream = ChildProcess::Stream;

namespace {

std::vector<std::string> link_states_until(TcpClient& client, const std::string& last) {
  std::vector<std::string> states;
  while (auto message = client.read_json_type("link")) {
    states.push_back((*message)["state"]);
    if (states.back() == last) break;
  }
  return states;
}

}  // namespace

TEST_CASE("an Uno that reboots mid-stream is configured again and clients see it happen") {
  Rig rig;
  auto client = rig.json_client();
  auto binary = rig.extended_client();
  binary.send(bytes({6, 'S', 'S', 0, 0, 0, 0}));
  const auto before = client.read_json_type("sensor");
  REQUIRE(before);

  rig.sim_command("reboot");
  rig.expect_sim("booted: sent ACK");
  rig.expect_log("robot link handshaking: the robot rebooted");
  rig.expect_sim("configured");
  CHECK(link_states_until(client, "up") == std::vector<std::string>{"handshaking", "up"});
  CHECK(binary.read_message_tag("LNKhandshaking"));
  CHECK(binary.read_message_tag("LNKup"));
  const auto after = client.read_json_type("sensor");
  REQUIRE(after);
  CHECK((*after)["seq"].get<long>() > (*before)["seq"].get<long>());
  CHECK(binary.read_message_tag("SP"));
}

TEST_CASE("the device removed and recreated at the same path while clients stay connected") {
  Rig rig;
  auto client = rig.json_client();
  auto binary = rig.extended_client();

  rig.sim_command("unplug");
  rig.expect_log("reopening");
  CHECK(link_states_until(client, "down").back() == "down");
  CHECK(binary.read_message_tag("LNKdown"));

  // While it is gone, commands are refused with the reason, not queued.
  client.send("{\"cmd\":\"move\",\"speed\":20,\"id\":5}\n");
  auto refused = client.read_json_type("error");
  REQUIRE(refused);
  CHECK((*refused)["id"] == 5);
  CHECK((*refused)["error"].get<std::string>().find("the robot link is down") == 0);
  binary.send(bytes({4, 'D', 'M', 'S', 20}));
  auto error = binary.read_message_tag("ERR");
  REQUIRE(error);
  CHECK(error->find("the robot link is down") != std::string::npos);

  rig.sim_command("replug");
  rig.expect_sim("port opened by the host");
  CHECK(link_states_until(client, "up").back() == "up");
  CHECK(binary.read_message_tag("LNKup"));
  CHECK(client.read_json_type("sensor"));
  client.send("{\"cmd\":\"move\",\"speed\":20,\"id\":6}\n");
  rig.expect_sim("rx 44 4D 53 14");
  CHECK_FALSE(rig.sim().seen(Stream::Stdout, "error"));
}

TEST_CASE("an Uno that goes quiet makes the link stale and CFG brings it back when it answers") {
  Rig rig({.bridge_args = {"--stale-timeout-ms", "300", "--handshake-timeout-ms", "200"}});
  auto client = rig.json_client();
  rig.sim_command("silent on");
  CHECK(link_states_until(client, "stale").back() == "stale");
  rig.expect_log("robot link stale: nothing from the robot for 300 ms");
  client.send("{\"cmd\":\"claw_open\",\"id\":1}\n");
  auto refused = client.read_json_type("error");
  REQUIRE(refused);
  CHECK((*refused)["error"].get<std::string>().find("the robot link is stale") == 0);
  rig.sim_command("silent off");
  CHECK(link_states_until(client, "up").back() == "up");
}

TEST_CASE("no robot attached: the bridge serves clients and says why and finds the robot when it appears") {
  Rig rig({.start_sim = false});
  // At start, the log says which device was tried, why it failed and what to do.
  const std::string explained = "no robot at " + rig.device() +
                                " (no such device): check that the robot is switched on and its cable plugged in (a "
                                "Flockbot's Uno is /dev/flockbot once the package's udev rule is installed, else "
                                "/dev/ttyACM0), give its device with --device, or try --simulate";
  REQUIRE(rig.bridge().wait_seen(Stream::Stderr, "warning: robot link down: " + explained));
  auto client = rig.json_client();  // and so does hello
  TcpClient late_comer(rig.json_port());
  const auto hello = late_comer.read_json_type("hello");
  REQUIRE(hello);
  CHECK((*hello)["link"] == "down");
  CHECK((*hello)["reason"] == explained);
  client.send("{\"cmd\":\"stop\",\"id\":1}\n");
  auto refused = client.read_json_type("error");
  REQUIRE(refused);
  CHECK((*refused)["error"] == "the robot link is down (" + explained + "); command not sent");

  ChildProcess late({FLOCKBOT_SIM_BIN, "--link", rig.device()});
  REQUIRE(late.wait_for(Stream::Stdout, "ready "));
  CHECK(link_states_until(client, "up").back() == "up");
}

TEST_CASE("stopping the bridge stops the robot and exits cleanly") {
  Rig rig;
  auto client = rig.json_client();
  client.send("{\"cmd\":\"move\",\"speed\":30}\n");
  rig.expect_sim("rx 44 4D 53 1E");
  CHECK(rig.bridge().terminate() == 0);
  rig.expect_sim("rx 44 53 54");
  CHECK(client.wait_closed());
}

TEST_CASE("random reboots and unplugs for a while: clients stay connected and the link comes back each time") {
  Rig rig({.rate_hz = 50,
           .sim_args = {"--reboot-every-s", "0.7", "--unplug-every-s", "1.1", "--unplug-ms", "300", "--seed", "5"}});
  auto client = rig.json_client();
  int reboots = 0;
  int unplugs = 0;
  // Wait for a few of each, then for the link to be up again.
  while (reboots < 3 || unplugs < 3) {
    auto line = rig.sim().wait_for(Stream::Stdout, "random fault: ", 30s);
    REQUIRE(line);
    reboots += line->find("reboot") != std::string::npos;
    unplugs += line->find("unplugged") != std::string::npos;
  }
  // A reboot that falls while the device is unplugged does nothing; the
  // bridge sees one of the others sooner or later.
  const bool rebooted = rig.bridge().seen(Stream::Stderr, "the robot rebooted") ||
                        rig.bridge().wait_for(Stream::Stderr, "the robot rebooted", 60s).has_value();
  CHECK(rebooted);
  // The link ends up again, with the same client connection throughout.
  std::string state;
  while (state != "up") {
    auto message = client.read_json_type("link", 30s);
    REQUIRE(message);
    state = (*message)["state"];
  }
  CHECK(client.read_json_type("sensor"));
}
