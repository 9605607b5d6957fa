// Port 8101 (the bridge's native port for a Pioneer): programs written for
// ARIA, played by support/pioneer/aria_client (the connect sequence, the 500 ms
// resends and PULSEs, the leaving sequence), share the simulated robot:
// every program gets the SIPs, one drives at a time.
#include <doctest/doctest.h>

#include <string>

#include "e2e/rig.hpp"
#include "support/pioneer/aria_client.hpp"

using namespace flockbridge::testing;
using Stream = ChildProcess::Stream;
using nlohmann::json;

namespace {

json stats_of(TcpClient& client) {
  client.send("{\"cmd\":\"stats\",\"id\":\"s\"}\n");
  auto stats = client.read_json_type("stats");
  REQUIRE(stats);
  return *stats;
}

/// Asks for the counters until `test` holds of them (the bridge counts
/// asynchronously from the client's send), at most 5 s.
template <typename Test>
json stats_when(TcpClient& client, Test test) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  json stats = stats_of(client);
  while (!test(stats) && std::chrono::steady_clock::now() < deadline) {
    client.read_json_type("sensor");  // one SIP period
    stats = stats_of(client);
  }
  return stats;
}

AriaClient connected(Rig& rig) {
  AriaClient program(rig.port());
  const auto identity = program.connect();
  REQUIRE(identity);
  return program;
}

}  // namespace

TEST_CASE("port 8101: an ARIA program connects as to the robot and gets its SIPs at the robot's rate") {
  Rig rig(pioneer_rig());
  AriaClient program(rig.port());
  const auto identity = program.connect();
  REQUIRE(identity);
  CHECK(identity->name == "sim");
  CHECK(identity->type == "Pioneer");
  CHECK(identity->subtype == "p3dx-sh");  // ARIA loads params/p3dx-sh.p from this
  CHECK(program.has_config());
  const auto sips = program.run_for(std::chrono::milliseconds(2000));
  // 10 a second, as the robot sends them: about 20, with room for a slow
  // machine's scheduling (none may come twice, so never many more).
  CHECK(sips.size() >= 14);
  CHECK(sips.size() <= 22);
  CHECK(program.violations().empty());
  // A program that only watches never reaches the robot: its limits and
  // ENABLE are not forwarded, and it does not take control.
  auto watcher = rig.json_client();
  const json stats = stats_of(watcher);
  CHECK(stats["control"]["holder"].is_null());
  CHECK(stats["control"]["ignored"].get<int>() >= 5);  // SETV, SETA, SETRV, SETRA, ENABLE
}

TEST_CASE("port 8101: an AmigoBot's programs are told it is an amigo-sh") {
  Rig rig(pioneer_rig("amigo-sh"));
  AriaClient program(rig.port());
  const auto identity = program.connect();
  REQUIRE(identity);
  CHECK(identity->subtype == "amigo-sh");
  CHECK(program.run_for(std::chrono::milliseconds(500)).size() >= 3);
  CHECK(program.violations().empty());
}

TEST_CASE("port 8101: two programs at once: both get the SIPs, the first to move drives, the other is refused") {
  Rig rig(pioneer_rig());
  auto watcher = rig.json_client();
  AriaClient first = connected(rig);
  AriaClient second = connected(rig);
  first.set_velocity(200, 0);
  rig.expect_sim("rx VEL 200");
  // The second program sees the robot move in its own SIPs.
  REQUIRE(second.run_until([](const AriaClient::Packet& sip) { return AriaClient::left_velocity(sip) > 150; }));
  second.set_velocity(-300, 0);
  const json stats = stats_when(watcher, [](const json& s) { return s["control"]["refused"].get<int>() >= 1; });
  CHECK(stats["control"]["refused"].get<int>() >= 1);
  CHECK(stats["control"]["holder"].is_number());
  CHECK_FALSE(rig.sim().seen(Stream::Stdout, "rx VEL -300"));
  // Its refused commands are counted against it, for the dashboard and stats.
  bool found = false;
  for (const json& client : stats["clients"]["list"]) {
    if (client["kind"] == "binary" && client["refused"].get<int>() >= 1) found = true;
  }
  CHECK(found);
  first.run_for(std::chrono::milliseconds(300));
  CHECK(first.violations().empty());
  CHECK(second.violations().empty());
}

TEST_CASE("port 8101: the driving program is killed mid-drive: the robot is stopped and another program can drive") {
  Rig rig(pioneer_rig());
  auto watcher = rig.json_client();
  AriaClient driver = connected(rig);
  AriaClient next = connected(rig);
  driver.set_velocity(300, 10);
  rig.expect_sim("rx VEL 300");
  driver.kill();
  rig.expect_sim("rx STOP");
  auto notice = watcher.read_json_type("safety_stop");
  REQUIRE(notice);
  CHECK((*notice)["reason"].get<std::string>().find("drove the robot, is gone") != std::string::npos);
  next.set_velocity(120, 0);
  rig.expect_sim("rx VEL 120");
  REQUIRE(next.run_until([](const AriaClient::Packet& sip) { return AriaClient::left_velocity(sip) > 100; }));
}

TEST_CASE("port 8101: a driving program that goes silent loses control after 1 s and the robot is stopped") {
  Rig rig(pioneer_rig());
  auto watcher = rig.json_client();
  AriaClient driver = connected(rig);
  driver.set_velocity(250, 0);
  rig.expect_sim("rx VEL 250");
  driver.listen_for(std::chrono::milliseconds(1500));  // hangs: reads, sends nothing
  rig.expect_sim("rx STOP");
  auto notice = watcher.read_json_type("safety_stop");
  REQUIRE(notice);
  CHECK((*notice)["reason"].get<std::string>().find("sent nothing for 1000 ms") != std::string::npos);
  // The robot's own watchdog was never needed.
  CHECK_FALSE(rig.sim().seen(Stream::Stdout, "watchdog:"));
}

TEST_CASE("port 8101: a program's leaving sequence ends its control but never closes or disables the robot") {
  Rig rig(pioneer_rig());
  AriaClient watcher_program = connected(rig);
  AriaClient driver = connected(rig);
  driver.set_velocity(150, 0);
  rig.expect_sim("rx VEL 150");
  driver.disconnect();  // ENABLE 0, CLOSE
  rig.expect_sim("rx STOP");
  watcher_program.disconnect();
  // Both programs' ENABLE 0 and CLOSE were absorbed: the robot link stays
  // open and the next program drives at once.
  AriaClient next = connected(rig);
  next.set_velocity(100, 0);
  rig.expect_sim("rx VEL 100");
  CHECK_FALSE(rig.sim().seen(Stream::Stdout, "rx ENABLE 0"));
  CHECK_FALSE(rig.sim().seen(Stream::Stdout, "closed: waiting for SYNC0"));
  CHECK(rig.sim().seen(Stream::Stdout, "servers open"));
  REQUIRE(next.run_until([](const AriaClient::Packet& sip) { return AriaClient::left_velocity(sip) > 50; }));
}

TEST_CASE("port 8101: garbage from one client does not disturb the others' SIPs") {
  Rig rig(pioneer_rig());
  AriaClient program = connected(rig);
  TcpClient noise(rig.port());
  std::string garbage;
  for (int i = 0; i < 2000; ++i) garbage.push_back(static_cast<char>((i * 7919) % 251));
  garbage += std::string("\xFA\xFB\x05\x0B\x3B\x64", 6);  // a VEL packet cut short
  noise.send(garbage);
  CHECK(program.run_for(std::chrono::milliseconds(1000)).size() >= 8);
  CHECK(program.violations().empty());
  CHECK_FALSE(rig.sim().seen(Stream::Stdout, "rx VEL"));
  CHECK(rig.bridge().seen(Stream::Stderr, "robot link up"));
}
