// The serial side, end to end: handshake, commands reaching the Uno
// byte-exact from every client form, NAK both ways, the Uno's own packets.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "e2e/rig.hpp"

using namespace flockbridge::testing;
using Stream = ChildProcess::Stream;

TEST_CASE("handshake: the bridge sends CFG from its configuration and clients see the link up") {
  Rig rig({.bridge_args = {"--robot-id", "7", "--robot-ip", "10.1.3.4", "--gripper", "1", "--left-wheel-stop", "1490",
                           "--right-wheel-stop", "1510", "--servo-model", "2"}});
  rig.expect_sim("booted: sent ACK");
  rig.expect_sim("rx 43 46 47 01 D2 05 E6 05 02 07 03 04");
  rig.expect_sim("configured");

  TcpClient client(rig.json_port());
  auto hello = client.read_json();
  REQUIRE(hello);
  CHECK((*hello)["type"] == "hello");
  CHECK((*hello)["version"] == 2);
  CHECK((*hello)["link"] == "up");
  CHECK((*hello)["session"].get<std::string>().size() == 16);
  CHECK((*hello)["robot"] == "flockbot");
  CHECK((*hello)["model"] == "flockbot");
  const auto capabilities = (*hello)["capabilities"].get<std::vector<std::string>>();
  for (const char* command : {"move", "stop", "emergency", "lcd_write", "move_distance"}) {
    CHECK_MESSAGE(std::find(capabilities.begin(), capabilities.end(), command) != capabilities.end(),
                  std::string(command));
  }
  auto sensor = client.read_json_type("sensor");
  REQUIRE(sensor);
  CHECK((*sensor)["ir"].size() == 5);
  CHECK((*sensor)["seq"].get<long>() > 0);
}

TEST_CASE("a command from every client form reaches the Uno byte-exact") {
  Rig rig;
  auto json = rig.json_client();
  {
    auto binary = rig.binary_client();
    binary.send(bytes({4, 'D', 'M', 'S', 0x0A}));  // direct
    rig.expect_sim("rx 44 4D 53 0A");
    binary.send(bytes({7, 'R', 'T', 4, 'D', 'M', 'S', 0xF6}));  // retransmit form, speed -10
    rig.expect_sim("rx 44 4D 53 F6");
    binary.send(bytes({2, 'S', 'T'}));  // stop
    rig.expect_sim("rx 44 53 54");
    binary.send(bytes({6, 'D', 'M', 'D', 20, 0x2C, 0x01}));  // the 2014 client's 16-bit distance
    rig.expect_sim("rx 44 4D 44 14 2C 01");
  }
  // The program on port 2005 drove; it has gone, and the JSON client may drive.
  auto lease = json.read_json_type("lease");
  while (lease && !(*lease)["holder"].is_null()) lease = json.read_json_type("lease");
  REQUIRE(lease);

  json.send("{\"cmd\":\"move\",\"speed\":-67,\"id\":1}\n");  // 0xBD inside the payload
  rig.expect_sim("rx 44 4D 53 BD");
  auto ok = json.read_json_type("ok");
  REQUIRE(ok);
  CHECK((*ok)["id"] == 1);
  json.send("{\"cmd\":\"lcd_write\",\"text\":\"Hi!\"}\n");
  rig.expect_sim("rx 44 4C 53 48 69 21 00");
  json.send("{\"cmd\":\"raw\",\"payload\":[68,71,83,15]}\n");
  rig.expect_sim("rx 44 47 53 0F");
  json.send("{\"cmd\":\"arc\",\"speed\":40,\"dist\":30,\"deg\":300}\n");
  rig.expect_sim("rx 44 52 41 28 1E 2C 01");
  json.send("{\"cmd\":\"stop\",\"id\":\"last\"}\n");
  rig.expect_sim("rx 44 53 54");
  auto last = json.read_json_type("ok");
  REQUIRE(last);
  while (last && (*last)["id"] != "last") last = json.read_json_type("ok");
  REQUIRE(last);
}

TEST_CASE("the Uno NAKs a command: the bridge resends it, and gives up after the retry limit") {
  Rig rig;
  auto json = rig.json_client();

  rig.sim_command("nak-next 1");
  json.send("{\"cmd\":\"claw_open\",\"id\":1}\n");
  rig.expect_sim("nak-injected 44 47 4F");
  rig.expect_sim("rx 44 47 4F");
  auto ok = json.read_json_type("ok");
  REQUIRE(ok);
  CHECK((*ok)["id"] == 1);

  rig.sim_command("nak-next 4");
  json.send("{\"cmd\":\"claw_close\",\"id\":2}\n");
  for (int i = 0; i < 4; ++i) rig.expect_sim("nak-injected 44 47 43");
  auto failed = json.read_json_type("error");
  REQUIRE(failed);
  CHECK((*failed)["id"] == 2);
  CHECK((*failed)["error"] == "the robot refused this command (4 tries); it was dropped");
  CHECK((*failed)["code"] == "refused");
  CHECK_FALSE(rig.sim().seen(Stream::Stdout, "rx 44 47 43"));

  // A binary client that sent the failed command is told with ERR.
  auto binary = rig.extended_client();
  rig.sim_command("nak-next 4");
  binary.send(bytes({3, 'D', 'G', 'G'}));
  auto error = binary.read_message_tag("ERR");
  REQUIRE(error);
  CHECK(error->find("refused this command") != std::string::npos);
}

TEST_CASE("the bridge NAKs a corrupt packet from the Uno, which resends it") {
  // A slow sensor rate, so that no newer packet can go out between the
  // corrupt one and the NAK.
  Rig rig({.rate_hz = 5});
  auto json = rig.json_client();
  rig.sim_command("corrupt-next");
  const std::string corrupt = rig.expect_sim("sent-corrupt 53 45 4E");
  rig.expect_sim("rx 4E 41 4B");
  const std::string resent = rig.expect_sim("resent 53 45 4E");
  CHECK(resent.substr(7) == corrupt.substr(13));  // the very packet, resent whole
  rig.expect_log("");                             // the bridge is still running
  CHECK(json.read_json_type("sensor"));
}

TEST_CASE("the Uno's own packets reach every client: DMC after a bounded move, EMG at once") {
  Rig rig;
  auto json = rig.json_client();
  auto binary = rig.extended_client();
  json.send("{\"cmd\":\"move_distance\",\"speed\":100,\"dist\":5}\n");
  auto done = json.read_json_type("packet");
  REQUIRE(done);
  CHECK((*done)["tag"] == "DMC");
  CHECK((*done)["payload"] == nlohmann::json::array({68, 77, 67}));
  CHECK(binary.read_message_tag("DMC"));

  rig.sim_command("emergency");
  CHECK(json.read_json_type("emergency"));
  CHECK(binary.read_message_tag("EMG"));
  rig.expect_log("the robot sent an emergency stop");
}

TEST_CASE("the Uno acknowledges commands: the ACK goes to the binary client that sent the command") {
  Rig rig({.sim_args = {"--ack-commands"}});
  auto binary = rig.binary_client();
  auto other = rig.binary_client();
  binary.send(bytes({3, 'D', 'G', 'O'}));
  auto ack = binary.read_message_tag("ACK");
  REQUIRE(ack);
  CHECK(*ack == "ACK");
  // No reboot was taken from these ACKs.
  other.send(bytes({3, 'D', 'G', 'C'}));
  rig.expect_sim("rx 44 47 43");
  CHECK_FALSE(rig.bridge().seen(Stream::Stderr, "rebooted"));
}

namespace {

/// Sends claw_open and returns its ok and then the stats' "commands".
std::pair<nlohmann::json, nlohmann::json> claw_open_and_stats(TcpClient& json) {
  json.send("{\"cmd\":\"claw_open\",\"id\":1}\n");
  auto ok = json.read_json_type("ok");
  REQUIRE(ok);
  json.send("{\"cmd\":\"stats\"}\n");
  const auto stats = json.read_json_type("stats");
  REQUIRE(stats);
  return {*ok, (*stats)["commands"]};
}

}  // namespace

TEST_CASE("an answer says whether the Uno confirmed the command or it was only sent - stats count both") {
  SUBCASE("firmware that acknowledges commands") {
    Rig rig({.bridge_args = {"--command-ack"}, .sim_args = {"--ack-commands"}});
    auto json = rig.json_client();
    const auto [ok, commands] = claw_open_and_stats(json);
    CHECK(ok["confirmed"] == true);
    CHECK(commands["confirmed"] == 1);
    CHECK(commands["unconfirmed"] == 0);
  }
  SUBCASE("firmware that does not") {
    Rig rig;
    auto json = rig.json_client();
    const auto [ok, commands] = claw_open_and_stats(json);
    CHECK(ok["confirmed"] == false);
    CHECK(commands["confirmed"] == 0);
    CHECK(commands["unconfirmed"] == 1);
    // Answers to requests that do not go to the robot say nothing of it.
    json.send("{\"cmd\":\"subscribe\",\"interval_ms\":0,\"id\":2}\n");
    const auto subscribed = json.read_json_type("ok");
    REQUIRE(subscribed);
    CHECK_FALSE(subscribed->contains("confirmed"));
  }
}

TEST_CASE("a healthy device stays open: sensor packets and commands flow without the Uno being reset") {
  // The rig's pseudo-terminal reads as a real device does (VMIN 0, VTIME 0):
  // every drain of the line ends in a read of 0 bytes, which is no loss.
  Rig rig({.bridge_args = {"--log-level", "debug"}});
  std::string terminal;
  for (const auto& line : rig.bridge().lines(Stream::Stderr)) {
    if (line.find("terminal settings of") != std::string::npos) terminal = line;
  }
  CHECK(terminal.find("115200 baud, 8N1") != std::string::npos);
  CHECK(terminal.find("min 0 time 0") != std::string::npos);
  auto json = rig.json_client();
  for (int i = 0; i < 100; ++i) {
    REQUIRE(json.read_json_type("sensor"));
    if (i % 10 == 0) json.send("{\"cmd\":\"move\",\"speed\":" + std::to_string(i / 10) + "}\n");
  }
  json.send("{\"cmd\":\"stop\",\"id\":\"end\"}\n");
  rig.expect_sim("rx 44 53 54");
  CHECK_FALSE(rig.sim().seen(Stream::Stdout, "port closed by the host"));
  CHECK_FALSE(rig.bridge().seen(Stream::Stderr, "reopening"));
  std::size_t opens = 0;
  for (const auto& line : rig.bridge().lines(Stream::Stderr)) opens += line.find("opened ") != std::string::npos;
  CHECK(opens == 1);
}

TEST_CASE("a second bridge started on the same device is kept off it, and the first serves on") {
  Rig rig;
  ChildProcess second({FLOCKBRIDGE_BIN, "--no-config", "--device", rig.device(), "--bind", "127.0.0.1", "--port", "0",
                       "--json-port", "0", "--no-http"});
  CHECK(second.wait_seen(Stream::Stderr, rig.device() + " is in use: another flockbridge"));
  // The robot heard from one bridge only: one CFG, and sensors flow to the first's clients.
  auto client = rig.json_client();
  CHECK(client.read_json_type("sensor"));
  const auto sim_lines = rig.sim().lines(Stream::Stdout);
  CHECK(std::count_if(sim_lines.begin(), sim_lines.end(),
                      [](const std::string& line) { return line.find("rx 43 46 47") != std::string::npos; }) == 1);
}
