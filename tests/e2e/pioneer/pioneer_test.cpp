// The real daemon with --robot pioneer against the simulated Pioneer or
// AmigoBot (flockbridge-sim --robot pioneer) over a pseudo-terminal: the
// AROS handshake, SIPs in SI units for two models, commands, the keepalive,
// loss and recovery, the safety stop and the stop at shutdown.
#include <doctest/doctest.h>

#include <csignal>
#include <string>

#include "e2e/rig.hpp"

using namespace flockbridge::testing;
using Stream = ChildProcess::Stream;
using nlohmann::json;

TEST_CASE("pioneer: the bridge connects to a p3dx-sh and publishes its SIPs in SI units") {
  Rig rig(pioneer_rig());
  CHECK(rig.bridge().seen(Stream::Stderr, "the robot is a Pioneer p3dx-sh called 'sim'"));
  TcpClient client(rig.json_port());
  auto hello = client.read_json_type("hello");
  REQUIRE(hello);
  CHECK((*hello)["robot"] == "pioneer");
  CHECK((*hello)["model"] == "p3dx-sh");
  CHECK((*hello)["link"] == "up");
  const auto capabilities = (*hello)["capabilities"].get<std::vector<std::string>>();
  for (const char* command : {"drive", "stop", "emergency", "move", "turn", "heading", "motors", "sonar"}) {
    CAPTURE(command);
    CHECK(std::find(capabilities.begin(), capabilities.end(), command) != capabilities.end());
  }
  auto sensor = client.read_json_type("sensor");
  REQUIRE(sensor);
  CHECK((*sensor)["battery_v"].get<double>() == doctest::Approx(12.6));
  CHECK((*sensor)["pose"]["x_mm"].get<double>() == doctest::Approx(0));
  CHECK((*sensor)["motors"] == true);               // the bridge enabled them
  CHECK((*sensor)["raw"].contains("battery_x10"));  // an -SH robot's optional field
  // The simulated robot stands in a 6 x 4 m room facing a wall 3 m ahead:
  // the sonar ranges are in millimetres, none beyond the room's diagonal.
  // A packet names the discs it read; their readings are the model's ranges.
  const json read = sensor_where(client, [](const json& m) { return !m["sonar_updated"].empty(); });
  CHECK_FALSE(read.contains("sonar"));  // each reading said once
  for (const json& disc : read["sonar_updated"]) {
    const json& mm = read["ranges"]["sonar" + std::to_string(disc.get<int>())];
    CAPTURE(disc);
    REQUIRE(mm.is_number_integer());
    CHECK(mm.get<int>() > 0);
    CHECK(mm.get<int>() < 7300);
  }
}

TEST_CASE("pioneer: an AmigoBot is known by its SYNC2 answer and converted with its own factors") {
  Rig rig(pioneer_rig("amigo-sh"));
  CHECK(rig.bridge().seen(Stream::Stderr, "the robot is a Pioneer amigo-sh"));
  auto client = rig.json_client();
  client.send("{\"cmd\":\"drive\",\"v_mm_s\":200,\"w_deg_s\":0,\"id\":1}\n");
  auto ok = client.read_json_type("ok");
  REQUIRE(ok);
  CHECK_FALSE(ok->contains("confirmed"));  // an AROS robot acknowledges nothing
  rig.expect_sim("rx VEL 200");
  // The AmigoBot's velocity and distance units differ from a P3's; the
  // converted values must still say 200 mm/s and a growing x.
  const json moving = sensor_where(client, [](const json& m) { return m["pose"]["x_mm"].get<double>() > 100; });
  CHECK(moving["v_mm_s"].get<double>() == doctest::Approx(200).epsilon(0.05));
  CHECK(moving["moving"] == true);
}

TEST_CASE("pioneer: stats give the AROS link's own counters") {
  Rig rig(pioneer_rig());
  auto client = rig.json_client();
  sensor_where(client, [](const json& m) { return m["seq"].get<long>() >= 3; });
  const json link = link_stats(client);
  CHECK(link["state"] == "up");
  CHECK(link["connects"] == 1);
  CHECK(link["sips"].get<long>() >= 3);
  CHECK(link["bad_checksum"] == 0);
  CHECK_FALSE(link.contains("naks_sent"));  // a Flockbot's counter, not an AROS robot's
}

TEST_CASE("pioneer: drive, turn and stop reach the robot as AROS commands, and bad arguments are refused") {
  Rig rig(pioneer_rig());
  auto client = rig.json_client();
  client.send("{\"cmd\":\"drive\",\"v_mm_s\":300,\"w_deg_s\":-20}\n");
  rig.expect_sim("rx VEL 300");
  rig.expect_sim("rx RVEL -20");
  const json turning = sensor_where(client, [](const json& m) { return m["w_deg_s"].get<double>() < -19; });
  CHECK(turning["v_mm_s"].get<double>() == doctest::Approx(300).epsilon(0.05));
  client.send("{\"cmd\":\"stop\"}\n");
  rig.expect_sim("rx STOP");
  sensor_where(client, [](const json& m) { return m["moving"] == false && m["v_mm_s"].get<double>() == 0; });

  client.send("{\"cmd\":\"turn\",\"deg\":90}\n");
  rig.expect_sim("rx DHEAD 90");
  client.send("{\"cmd\":\"motors\",\"on\":false}\n");
  rig.expect_sim("rx ENABLE 0");

  client.send("{\"cmd\":\"drive\",\"v_mm_s\":5000,\"id\":\"fast\"}\n");
  auto refused = client.read_json_type("error");
  REQUIRE(refused);
  CHECK(refused->at("id") == "fast");
  CHECK(refused->at("error").get<std::string>().find("v_mm_s must be from -2200 to 2200") != std::string::npos);
  client.send("{\"cmd\":\"move_distance\",\"speed\":5,\"dist\":10,\"id\":2}\n");
  refused = client.read_json_type("error");
  REQUIRE(refused);
  CHECK(refused->at("error").get<std::string>().find("unknown command 'move_distance'; a Pioneer takes drive") !=
        std::string::npos);
}

TEST_CASE("pioneer: PULSE keeps a robot that has nothing to do from tripping its watchdog") {
  Rig rig(pioneer_rig());
  auto client = rig.json_client();
  client.send("{\"cmd\":\"drive\",\"v_mm_s\":100,\"w_deg_s\":0}\n");
  rig.expect_sim("rx VEL 100");
  // Three times the robot's 2 s watchdog without a command: it must still be driving.
  CHECK_FALSE(rig.sim().wait_for(Stream::Stdout, "watchdog:", std::chrono::seconds(6)));
  rig.sim_command("state");
  CHECK(rig.sim().seen(Stream::Stdout, "v_mm_s 100 "));
}

TEST_CASE("pioneer: the client that set the robot moving leaves: the bridge stops the robot") {
  Rig rig(pioneer_rig());
  auto watcher = rig.json_client();
  {
    auto driver = rig.json_client();
    driver.send("{\"cmd\":\"drive\",\"v_mm_s\":250,\"w_deg_s\":0}\n");
    rig.expect_sim("rx VEL 250");
  }
  rig.expect_sim("rx STOP");
  REQUIRE(watcher.read_json_type("safety_stop"));
}

TEST_CASE("pioneer: the serial device vanishes and comes back: the link comes back by itself") {
  Rig rig(pioneer_rig());
  auto client = rig.json_client();
  rig.sim_command("unplug");
  auto down = client.read_json_type("link");
  REQUIRE(down);
  CHECK((*down)["state"] != "up");
  client.send("{\"cmd\":\"drive\",\"v_mm_s\":100,\"id\":7}\n");
  auto refused = client.read_json_type("error");
  REQUIRE(refused);
  CHECK((*refused)["code"] == "link_down");
  rig.sim_command("replug");
  REQUIRE(client.read_json_type("link", std::chrono::seconds(10)));
  sensor_where(client, [](const json&) { return true; });
  CHECK(rig.bridge().seen(Stream::Stderr, "robot link up"));
}

TEST_CASE("pioneer: a robot that reboots stops sending SIPs: the bridge finds it stale and connects again") {
  Rig rig(pioneer_rig());
  auto client = rig.json_client();
  rig.sim_command("reboot");
  auto stale = client.read_json_type("link");
  REQUIRE(stale);
  CHECK((*stale)["state"] == "stale");
  rig.expect_sim("servers open");  // the bridge synchronised with the rebooted robot and opened it again
  auto again = client.read_json_type("link", std::chrono::seconds(10));
  while (again && (*again)["state"] != "up") again = client.read_json_type("link", std::chrono::seconds(10));
  REQUIRE(again);
  sensor_where(client, [](const json&) { return true; });
}

TEST_CASE("pioneer: a noisy line: damaged SIPs are counted and dropped, the rest reach clients, the link stays up") {
  // About one SIP in six damaged on its way to the bridge (3e-4 per bit, a
  // SIP of some 60 bytes), never ten in a row: the link is never stale.
  RigOptions options = pioneer_rig();
  options.sim_args = {"--ber-to-host", "3e-4", "--seed", "5"};
  Rig rig(options);
  auto client = rig.json_client();
  long received = 0;
  long last_seq = 0;
  const json last = sensor_where(client, [&](const json& m) {
    ++received;
    last_seq = m["seq"].get<long>();
    return received >= 40;
  });
  CHECK(last["pose"].is_object());  // every message that arrives is a whole, converted SIP
  client.send("{\"cmd\":\"drive\",\"v_mm_s\":100,\"w_deg_s\":0,\"id\":3}\n");
  auto done = client.read_json_type("ok");
  REQUIRE(done);
  CHECK((*done)["id"] == 3);
  const json link = link_stats(client);
  CHECK(link["state"] == "up");
  CHECK(link["connects"] == 1);
  CHECK(link["bad_checksum"].get<long>() + link["bad_count"].get<long>() + link["incomplete"].get<long>() > 0);
  CHECK(link["discarded_bytes"].get<long>() > 0);
  CHECK_FALSE(rig.bridge().seen(Stream::Stderr, "stale"));
}

TEST_CASE("pioneer: on shutdown the bridge stops the robot and closes its connection") {
  Rig rig(pioneer_rig());
  auto client = rig.json_client();
  client.send("{\"cmd\":\"drive\",\"v_mm_s\":150,\"w_deg_s\":0}\n");
  rig.expect_sim("rx VEL 150");
  rig.signal_bridge(SIGTERM);
  CHECK(rig.bridge().wait_exit() == 0);
  rig.expect_sim("rx STOP");
  rig.expect_sim("closed: waiting for SYNC0");
  rig.sim_command("state");
  CHECK(rig.sim().seen(Stream::Stdout, "v_mm_s 0 "));
}

TEST_CASE("pioneer: a robot served over TCP (--device tcp:HOST:PORT), as MobileSim serves one, and its reconnection") {
  ChildProcess sim({FLOCKBOT_SIM_BIN, "--robot", "pioneer", "--model", "p3at-sh", "--listen", "0"});
  const auto ready = sim.wait_for(Stream::Stdout, "ready tcp:127.0.0.1:");
  REQUIRE(ready);
  std::string device = ready->substr(ready->find("tcp:"));
  device = device.substr(0, device.find(' '));  // the room it drives in follows
  RigOptions options;
  options.robot = "pioneer";
  options.start_sim = false;
  options.bridge_args = {"--device", device, "--reopen-min-ms", "50"};
  Rig rig(options);
  rig.expect_log("connected to " + device);
  rig.expect_log("robot link up");
  CHECK(rig.bridge().seen(Stream::Stderr, "the robot is a Pioneer p3at-sh"));
  auto client = rig.json_client();
  client.send("{\"cmd\":\"drive\",\"v_mm_s\":100,\"w_deg_s\":0}\n");
  REQUIRE(sim.wait_for(Stream::Stdout, "rx VEL 100"));
  sensor_where(client, [](const json& m) { return m["v_mm_s"].get<double>() > 90; });

  // The robot's side goes away and comes back at the same address.
  sim.send_line("unplug");
  REQUIRE(sim.wait_for(Stream::Stdout, "done unplug"));
  auto down = client.read_json_type("link");
  REQUIRE(down);
  CHECK((*down)["state"] == "down");
  sim.send_line("replug");
  REQUIRE(sim.wait_for(Stream::Stdout, "done replug"));
  auto up = client.read_json_type("link", std::chrono::seconds(10));
  while (up && (*up)["state"] != "up") up = client.read_json_type("link", std::chrono::seconds(10));
  REQUIRE(up);
  CHECK(sim.terminate() == 0);
}
