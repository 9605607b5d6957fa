// Programs written for the original robots, unchanged, against the bridge on
// port 2005: a client that parses only SP, AC and DM, and dies on anything
// else (support/flockbot/legacy_client.hpp), must live through everything a class
// does to a robot, and the bridge's own messages reach only clients that
// asked for them with EXT.
#include <doctest/doctest.h>

#include "e2e/rig.hpp"
#include "support/flockbot/legacy_client.hpp"

using namespace flockbridge::testing;
using Stream = ChildProcess::Stream;
using nlohmann::json;

namespace {

/// The stats entry of the client whose local port is `port`.
json client_stats(TcpClient& watcher, std::uint16_t port) {
  watcher.send("{\"cmd\":\"stats\"}\n");
  auto stats = watcher.read_json_type("stats");
  REQUIRE(stats);
  for (const auto& client : (*stats)["clients"]["list"]) {
    if (client["peer"] == "127.0.0.1:" + std::to_string(port)) return client;
  }
  FAIL("no such client in stats: " << port);
  return {};
}

/// Reads until the client has parsed `count` more sensor messages.
void expect_sensors(LegacyClient& client, int count) {
  for (int i = 0; i < count; ++i) {
    REQUIRE_MESSAGE(client.read_code("SP"), "no sensor message: " << client.death());
  }
}

}  // namespace

TEST_CASE("an unchanged 2014 student program lives through a whole lesson on port 2005") {
  // A 60 s message timeout: hello must be answered because it is recognised,
  // not because the bridge gave up on a 104-byte message.
  Rig rig({.bridge_args = {"--message-timeout-ms", "60000", "--stale-timeout-ms", "300", "--handshake-timeout-ms",
                           "200", "--lease-idle-ms", "2000"}});
  auto watcher = rig.json_client();
  LegacyClient student(rig.port());

  // Connect and test the connection: "hello", then any one message.
  const auto answer = student.test_connection();
  REQUIRE_MESSAGE(answer, "hello was not answered: " << student.death());
  CHECK(answer->body == "ACK");
  student.register_sensors(0);
  expect_sensors(student, 3);

  // Every motion command, as the client packs it, reaches the Uno.
  student.move_speed(20);
  rig.expect_sim("rx 44 4D 53 14");
  student.move_wheels(10, -10);
  rig.expect_sim("rx 44 4D 57 0A F6");
  student.rotate(30, 90);
  rig.expect_sim("rx 44 52 44 1E 5A 00");
  student.rotate(30, -90);  // left: the opposite speed and the positive angle
  rig.expect_sim("rx 44 52 44 E2 5A 00");
  student.stop();
  rig.expect_sim("rx 44 53 54");
  student.move_distance(100, 5);
  rig.expect_sim("rx 44 4D 44 64 05 00");
  REQUIRE_MESSAGE(student.read_code("DM"), "no DMC: " << student.death());

  // Claw and camera.
  student.open_claw();
  rig.expect_sim("rx 44 47 4F");
  student.close_claw();
  rig.expect_sim("rx 44 47 43");
  student.retransmit("DCU");
  rig.expect_sim("rx 44 43 55");
  student.retransmit(std::string("DCS") + static_cast<char>(50));
  rig.expect_sim("rx 44 43 53 32");

  // A refused command: not answered with ERR, but counted and logged.
  student.move_speed(120);
  rig.expect_log("original dialect, not told): move: speed must be from -100 to 100, got 120");
  CHECK(client_stats(watcher, student.socket().local_port())["refused"] == 1);

  // Another program wants to drive while the student does: it is refused,
  // with ERR naming the driver, as it reads ERR. Once the student has sent
  // no command for the lease's idle time the robot is stopped and the other
  // drives; it leaves while the robot moves. The safety stops' ERRs go to
  // the clients that can read them only.
  {
    auto driver = rig.extended_client();
    student.open_claw();  // the student's lease is renewed now
    rig.expect_sim("rx 44 47 4F");
    driver.send(bytes({4, 'D', 'M', 'S', 30}));
    const auto busy = driver.read_message_tag("ERR");
    REQUIRE(busy);
    // Written to fit the length byte a 2014 program reads as signed: whole words, not cut.
    CHECK(busy->size() <= 127);
    CHECK(busy->starts_with("ERRnot sent: client "));
    CHECK(busy->ends_with(") drives the robot"));
    rig.expect_log("which drove the robot, sent no command for 2000 ms");
    CHECK(watcher.read_json_type("safety_stop"));
    driver.send(bytes({4, 'D', 'M', 'S', 30}));
    rig.expect_sim("rx 44 4D 53 1E");
  }
  CHECK(watcher.read_json_type("safety_stop"));

  // The Uno's emergency stop and a packet type the bridge does not know.
  rig.sim_command("emergency");
  CHECK(watcher.read_json_type("emergency"));
  rig.sim_command("packet XYZ12");
  CHECK(watcher.read_json_type("packet"));

  // The Uno reboots; later the link goes stale and comes back.
  // (With the short stale timeout the bridge may notice the reboot as a
  // stale link first; either way it configures the Uno again.)
  rig.sim_command("reboot");
  rig.expect_sim("booted: sent ACK");
  rig.expect_sim("configured");
  expect_sensors(student, 3);
  rig.sim_command("silent on");
  rig.expect_log("robot link stale");
  rig.sim_command("silent off");
  rig.expect_log("robot link up");
  expect_sensors(student, 3);

  // A message left incomplete is dropped after the timeout without an ERR;
  // the commands behind it work.
  CHECK_FALSE(student.dead());
  const auto mine = client_stats(watcher, student.socket().local_port());
  CHECK(mine["extensions"] == false);
  // The safety stop's ERR, EMG, the unknown packet, and two link changes at least.
  CHECK(mine["withheld"].get<int>() >= 5);
  student.drain();
  CHECK_MESSAGE(!student.dead(), student.death());
  CHECK(student.counts().at("AC") == 1);
  CHECK(student.counts().at("DM") >= 1);
}

TEST_CASE("hello with a subscription right behind it, in one write: both are taken") {
  Rig rig;
  LegacyClient student(rig.port());
  student.socket().send(std::string("hello\x06SS\0\0\0\0", 12));
  const auto answer = student.read();
  REQUIRE_MESSAGE(answer, student.death());
  CHECK(answer->body == "ACK");
  expect_sensors(student, 2);
}

TEST_CASE("a 2014 client that reads slowly loses old sensor messages, and is never sent DRP") {
  Rig rig({.rate_hz = 250, .bridge_args = {"--stall-timeout-ms", "120000"}});
  auto watcher = rig.json_client();
  LegacyClient slow(rig.port(), 2048);
  slow.register_sensors(0);
  expect_sensors(slow, 1);
  // Not reading until the bridge has had to drop messages for it.
  for (int round = 0; round < 100; ++round) {
    if (client_stats(watcher, slow.socket().local_port())["sensor_dropped"].get<int>() > 0) break;
    for (int i = 0; i < 100; ++i) REQUIRE(watcher.read_json_type("sensor"));
  }
  CHECK(client_stats(watcher, slow.socket().local_port())["sensor_dropped"].get<int>() > 0);
  // Now it reads what is there, and goes on reading.
  slow.drain();
  expect_sensors(slow, 20);
  CHECK_MESSAGE(!slow.dead(), slow.death());
}

TEST_CASE("EXT 1 turns on the bridge's own messages for one client - EXT 0 turns them off again") {
  Rig rig;
  auto client = rig.binary_client();
  client.send(bytes({4, 'E', 'X', 'T', 1}));
  CHECK(client.read_message_tag("EXT") == std::string("EXT\x01"));
  client.send(bytes({3, 'D', 'X', 'Y'}));
  CHECK(client.read_message_tag("ERR") == std::string("ERRunknown command 'DXY'"));
  rig.sim_command("packet XYZ12");
  CHECK(client.read_message_tag("XYZ") == std::string("XYZ12"));

  client.send(bytes({4, 'E', 'X', 'T', 0}));
  CHECK(client.read_message_tag("EXT") == std::string("EXT\x00", 4));
  client.send(bytes({3, 'D', 'X', 'Y'}));
  rig.expect_log("original dialect, not told): unknown command 'DXY'");
  rig.sim_command("packet XYZ13");
  // What arrives now is only what the original dialect has.
  client.send(bytes({6, 'S', 'S', 0, 0, 0, 0}));
  for (int i = 0; i < 5; ++i) {
    const auto message = client.read_message();
    REQUIRE(message);
    CHECK(message->rfind("SP", 0) == 0);
  }
}
