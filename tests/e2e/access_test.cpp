// Who may drive, with [access] set: a JSON or WebSocket client watches and
// stops until it gives the driver PIN; wrong secrets make their address
// wait longer each time; the teacher takes control from anyone; a driver
// asks the driver to hand over; a read-only port lets a 2014 program watch
// and stop only.
#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <string>
#include <thread>

#include "e2e/rig.hpp"
#include "support/pioneer/aria_client.hpp"
#include "support/flockbot/legacy_client.hpp"
#include "support/smr/smr_client.hpp"
#include "support/web_client.hpp"

using namespace flockbridge::testing;
using nlohmann::json;
using Stream = ChildProcess::Stream;

namespace {

constexpr const char* kAccess = "[access]\ndriver_pin = \"4711\"\nteacher_secret = \"chalk-and-cheese\"\n";

/// Sends auth with `field` = `secret` and returns the answer (ok or error).
json auth(TcpClient& client, const std::string& field, const std::string& secret) {
  client.send(json{{"cmd", "auth"}, {field, secret}, {"id", "auth"}}.dump() + "\n");
  for (;;) {
    auto message = client.read_json();
    REQUIRE(message);
    if ((*message)["id"] == "auth") return *message;
  }
}

/// Gives a secret again and again until the login backoff takes it, and
/// returns the answer; `waited` is how many tries were turned away first.
json auth_when_allowed(TcpClient& client, const std::string& field, const std::string& secret, int& waited) {
  for (waited = 0; waited < 100; ++waited) {
    json answer = auth(client, field, secret);
    const std::string error = answer.value("error", "");
    if (error.find("too many wrong secrets from 127.0.0.1: try again in ") != 0) return answer;
    // Nothing announces the end of the wait: look again a little later.
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  FAIL("the backoff never ended");
  return {};
}

/// The first message of `type` for which `wanted` holds, skipping the others.
template <typename Wanted>
std::optional<json> read_until(TcpClient& client, const std::string& type, Wanted wanted) {
  auto message = client.read_json_type(type);
  while (message && !wanted(*message)) message = client.read_json_type(type);
  return message;
}

/// The lease message that names `client` as the driver.
std::optional<json> lease_to(TcpClient& client, int holder) {
  return read_until(client, "lease",
                    [&](const json& m) { return !m["holder"].is_null() && m["holder"]["client"] == holder; });
}

}  // namespace

TEST_CASE("with a driver PIN a JSON client watches and stops until it gives it, and wrong PINs wait longer each time") {
  Rig rig({.config = kAccess});
  TcpClient client(rig.json_port());
  const auto hello = client.read_json_type("hello");
  REQUIRE(hello);
  CHECK((*hello)["role"] == "viewer");  // so a page knows to ask for the PIN
  client.send("{\"cmd\":\"move\",\"speed\":20,\"id\":1}\n");
  const auto refused = client.read_json_type("error");
  REQUIRE(refused);
  CHECK((*refused)["code"] == "denied");
  CHECK((*refused)["error"].get<std::string>().find("give the robot's PIN first") != std::string::npos);
  client.send("{\"cmd\":\"stop\",\"id\":2}\n");  // stopping is anyone's
  rig.expect_sim("rx 44 53 54");

  // A mistyped PIN or two: the quick retry is taken.
  json wrong = auth(client, "pin", "0000");
  CHECK(wrong["code"] == "denied");
  CHECK(wrong["error"] == "wrong driver PIN; try again");
  rig.expect_log("gave a wrong driver PIN");
  CHECK(rig.bridge().seen(Stream::Stderr, "0000") == false);  // what was typed is never logged
  CHECK(auth(client, "pin", "0001")["error"] == "wrong driver PIN; try again");
  CHECK(auth(client, "pin", "0002")["error"] == "wrong driver PIN; try again");
  // Then each wrong one makes the address wait, longer each time.
  CHECK(auth(client, "pin", "0003")["error"] == "wrong driver PIN; the next try is taken in 1 s");
  rig.expect_log("gave a wrong driver PIN; its address waits 1000 ms");
  // Even the right PIN waits for the delay; then it is taken.
  int waited = 0;
  wrong = auth_when_allowed(client, "pin", "0004", waited);
  CHECK(waited > 0);
  CHECK(wrong["error"] == "wrong driver PIN; the next try is taken in 2 s");
  const json right = auth_when_allowed(client, "pin", "4711", waited);
  CHECK(waited > 0);
  CHECK(right["role"] == "driver");
  rig.expect_log("is now driver");
  client.send("{\"cmd\":\"move\",\"speed\":20}\n");
  rig.expect_sim("rx 44 4D 53 14");
  // A right PIN clears the address: the next wrong one is free again.
  auto other = rig.json_client();
  CHECK(auth(other, "pin", "1")["error"] == "wrong driver PIN; try again");
}

namespace {

/// Gives `field` = `secret` from a connection whose source is `source`
/// (one of loopback's many addresses: 127.0.x.y), and returns the answer.
json auth_from(const std::string& source, std::uint16_t port, const std::string& field, const std::string& secret) {
  const ConnectFrom from(source);
  TcpClient client(port);
  client.send(json{{"cmd", "auth"}, {field, secret}, {"id", "auth"}}.dump() + "\n");
  for (;;) {
    auto message = client.read_json();
    REQUIRE_MESSAGE(message, "no answer to auth from " << source);
    if (message->contains("id") && (*message)["id"] == "auth") return *message;
  }
}

}  // namespace

TEST_CASE("wrong PINs from hundreds of addresses draw on one budget for everyone - the teacher always gets in") {
  Rig rig({.config = kAccess});
  // A classmate with a new address for every guess: the first 20 wrong
  // ones are evaluated, then none (the right one neither) but one every 6 s.
  int evaluated = 0;
  json paused;
  for (int i = 0; i < 60; ++i) {
    const std::string source = "127.0." + std::to_string(1 + i / 200) + "." + std::to_string(1 + i % 200);
    const json answer = auth_from(source, rig.json_port(), "pin", std::to_string(1000 + i));
    REQUIRE(answer["code"] == "denied");
    const std::string error = answer["error"];
    if (error.rfind("wrong driver PIN", 0) == 0) {
      ++evaluated;
    } else {
      paused = answer;
    }
  }
  CHECK(evaluated >= 20);
  CHECK(evaluated <= 21);  // one more if the test took 6 s
  CHECK(paused["error"].get<std::string>().find("too many wrong PINs on this robot, from everyone together") == 0);
  CHECK(auth_from("127.0.9.9", rig.json_port(), "pin", "4711")["code"] == "denied");
  // The teacher, from any address (one of the guessing ones too), at once.
  CHECK(auth_from("127.0.1.1", rig.json_port(), "teacher", "chalk-and-cheese")["role"] == "teacher");
  CHECK(auth_from("127.0.8.8", rig.json_port(), "teacher", "chalk-and-cheese")["role"] == "teacher");
}

TEST_CASE("the teacher takes control from the driver at once, a driver asks the driver to hand over") {
  Rig rig({.config = kAccess});
  auto first = rig.json_client();
  auto second = rig.json_client();
  auto teacher = rig.json_client();
  CHECK(auth(first, "pin", "4711")["role"] == "driver");
  CHECK(auth(second, "pin", "4711")["role"] == "driver");
  first.send("{\"cmd\":\"move\",\"speed\":20}\n");
  rig.expect_sim("rx 44 4D 53 14");

  // The second asks; the first hears who asks, and hands over.
  second.send("{\"cmd\":\"take\",\"id\":\"take\"}\n");
  const auto asked = first.read_json_type("lease_request");
  REQUIRE(asked);
  CHECK((*asked)["client"] == 2);
  first.send("{\"cmd\":\"release\"}\n");
  rig.expect_sim("rx 44 53 54");
  second.send("{\"cmd\":\"take\"}\n");
  REQUIRE(lease_to(teacher, 2));
  second.send("{\"cmd\":\"rotate\",\"speed\":15}\n");
  rig.expect_sim("rx 44 52 43 0F");

  // The teacher needs no one's leave: the robot is stopped and the teacher drives.
  json answer = auth(teacher, "teacher", "chalk-and-cheese");
  CHECK(answer["type"] == "ok");
  CHECK(answer["role"] == "teacher");
  teacher.send("{\"cmd\":\"take\",\"id\":\"take\"}\n");
  const auto stop = read_until(second, "safety_stop",
                               [](const json& m) { return m["reason"].get<std::string>().find("client 2 ") == 0; });
  REQUIRE(stop);
  CHECK((*stop)["reason"].get<std::string>().find("was taken over by the teacher, client 3") != std::string::npos);
  REQUIRE(lease_to(second, 3));
  second.send("{\"cmd\":\"rotate\",\"speed\":30,\"id\":9}\n");
  const auto busy = second.read_json_type("error");
  REQUIRE(busy);
  CHECK((*busy)["code"] == "busy");
  CHECK(rig.bridge().seen(Stream::Stderr, "chalk") == false);
}

TEST_CASE("a WebSocket client gives the PIN the same way") {
  Rig rig({.config = kAccess});
  auto web = rig.web_client();
  web.send_json({{"cmd", "move"}, {"speed", 20}, {"id", 1}});
  const auto refused = web.read_json_type("error");
  REQUIRE(refused);
  CHECK((*refused)["code"] == "denied");
  web.send_json({{"cmd", "auth"}, {"pin", "4711"}, {"id", 2}});
  const auto ok = web.read_json_type("ok");
  REQUIRE(ok);
  CHECK((*ok)["role"] == "driver");
  web.send_json({{"cmd", "move"}, {"speed", 20}});
  rig.expect_sim("rx 44 4D 53 14");
}

TEST_CASE("on a read-only port a 2014 program watches and stops, and its other commands go nowhere") {
  Rig rig({.bridge_args = {"--native-port-mode", "readonly"}});
  auto watcher = rig.json_client();
  LegacyClient student(rig.port());
  student.register_sensors(0);
  REQUIRE(student.read_code("SP"));
  student.move_speed(20);
  student.stop();
  rig.expect_sim("rx 44 53 54");
  rig.expect_log("this port is read-only");
  CHECK_FALSE(rig.sim().seen(Stream::Stdout, "rx 44 4D 53"));
  REQUIRE(student.read_code("SP"));  // it reads on, told nothing it could not parse
  CHECK(student.death().empty());
}

TEST_CASE("an emergency stop from anyone latches: no motion goes to the robot until the teacher clears it") {
  Rig rig({.config = kAccess});
  auto driver = rig.json_client();
  auto viewer = rig.json_client();
  CHECK(auth(driver, "pin", "4711")["role"] == "driver");
  driver.send("{\"cmd\":\"move\",\"speed\":20}\n");
  rig.expect_sim("rx 44 4D 53 14");

  viewer.send("{\"cmd\":\"emergency\",\"id\":\"e\"}\n");  // a viewer may: stopping is anyone's
  rig.expect_sim("rx 45 4D 47");
  const auto latched = driver.read_json_type("emergency_latch");
  REQUIRE(latched);
  CHECK((*latched)["latched"] == true);
  CHECK((*latched)["by"]["client"] == 2);
  rig.expect_log("sent an emergency stop: no motion command goes to the robot until the teacher clears it");

  driver.send("{\"cmd\":\"move\",\"speed\":22,\"id\":\"m\"}\n");
  auto refused = driver.read_json_type("error");
  REQUIRE(refused);
  CHECK((*refused)["code"] == "latched");
  CHECK((*refused)["error"].get<std::string>().find("the teacher clears it") != std::string::npos);
  driver.send("{\"cmd\":\"clear_emergency\",\"id\":\"c\"}\n");
  refused = driver.read_json_type("error");
  REQUIRE(refused);
  CHECK((*refused)["code"] == "denied");
  driver.send("{\"cmd\":\"claw_open\"}\n");  // not motion: the claw still works
  rig.expect_sim("rx 44 47 4F");

  // Whoever comes later hears of the latch at once.
  auto teacher = rig.json_client();
  const auto told = teacher.read_json_type("emergency_latch");
  REQUIRE(told);
  CHECK((*told)["latched"] == true);
  CHECK(auth(teacher, "teacher", "chalk-and-cheese")["role"] == "teacher");
  teacher.send("{\"cmd\":\"clear_emergency\",\"id\":\"c\"}\n");
  const auto cleared = driver.read_json_type("emergency_latch");
  REQUIRE(cleared);
  CHECK((*cleared)["latched"] == false);
  CHECK((*cleared)["by"]["client"] == 3);
  driver.send("{\"cmd\":\"move\",\"speed\":25}\n");
  rig.expect_sim("rx 44 4D 53 19");
  CHECK_FALSE(rig.sim().seen(Stream::Stdout, "rx 44 4D 53 16"));
}

TEST_CASE("with no teacher set a driver clears the latch, and a 2014 program held by it reads on") {
  Rig rig;
  auto web = rig.web_client();
  LegacyClient student(rig.port());
  student.register_sensors(0);
  REQUIRE(student.read_code("SP"));
  web.send_json({{"cmd", "emergency"}});
  rig.expect_sim("rx 45 4D 47");
  REQUIRE(web.read_json_type("emergency_latch"));
  student.move_speed(20);  // refused, and the 2014 program is not sent what it could not parse
  rig.expect_log("emergency stop is latched");
  REQUIRE(student.read_code("SP"));
  CHECK(student.death().empty());
  web.send_json({{"cmd", "clear_emergency"}, {"id", 1}});
  const auto cleared = web.read_json_type("emergency_latch");
  REQUIRE(cleared);
  CHECK((*cleared)["latched"] == false);
  student.move_speed(21);
  rig.expect_sim("rx 44 4D 53 15");
  CHECK_FALSE(rig.sim().seen(Stream::Stdout, "rx 44 4D 53 14"));
  REQUIRE(student.read_code("SP"));
  CHECK(student.death().empty());
}

TEST_CASE("a WebSocket opened by a page from elsewhere is refused, but not the robot's own pages or allowed ones") {
  Rig rig({.bridge_args = {"--allowed-origins", "dash.school.lan"}, .start_sim = false});
  const std::string here = "http://127.0.0.1:" + std::to_string(rig.http_port());
  WebSocketClient foreign(rig.http_port(), "/ws", 0, "http://evil.example");
  CHECK_FALSE(foreign.accepted());
  rig.expect_log("its page comes from http://evil.example, not from this robot");
  WebSocketClient sandboxed(rig.http_port(), "/ws", 0, "null");
  CHECK_FALSE(sandboxed.accepted());
  CHECK(WebSocketClient(rig.http_port(), "/ws", 0, here).accepted());
  CHECK(WebSocketClient(rig.http_port(), "/ws", 0, "http://localhost:1234").accepted());
  CHECK(WebSocketClient(rig.http_port(), "/ws", 0, "https://Dash.School.lan").accepted());
  CHECK(WebSocketClient(rig.http_port()).accepted());  // a program sends no Origin
}

TEST_CASE("with a PIN a 2014 program waits until someone with the PIN approves it, then drives until it leaves") {
  Rig rig({.config = kAccess});  // native_port_mode auto: paired, as a PIN is set
  auto viewer = rig.json_client();
  auto driver = rig.json_client();
  CHECK(auth(driver, "pin", "4711")["role"] == "driver");
  LegacyClient student(rig.port());
  student.register_sensors(0);
  REQUIRE(student.read_code("SP"));
  const auto waiting = read_until(viewer, "pairing", [](const json& m) { return !m["waiting"].empty(); });
  REQUIRE(waiting);
  REQUIRE((*waiting)["waiting"].size() == 1);
  const int client = (*waiting)["waiting"][0]["client"];
  CHECK((*waiting)["waiting"][0]["peer"].get<std::string>().rfind("127.0.0.1:", 0) == 0);
  rig.expect_log("waits to be approved on the dashboard before it may drive");

  student.move_speed(20);
  rig.expect_log("this connection waits to be approved on the robot's dashboard");
  student.stop();  // stopping is anyone's
  rig.expect_sim("rx 44 53 54");
  viewer.send(json{{"cmd", "approve"}, {"client", client}, {"id", "a"}}.dump() + "\n");
  const auto denied = viewer.read_json_type("error");
  REQUIRE(denied);
  CHECK((*denied)["code"] == "denied");

  driver.send(json{{"cmd", "approve"}, {"client", client}, {"id", "a"}}.dump() + "\n");
  const auto approved = read_until(viewer, "pairing", [](const json& m) { return m["waiting"].empty(); });
  REQUIRE(approved);
  rig.expect_log("was approved by client");
  student.move_speed(21);
  rig.expect_sim("rx 44 4D 53 15");
  CHECK_FALSE(rig.sim().seen(Stream::Stdout, "rx 44 4D 53 14"));
  REQUIRE(student.read_code("SP"));
  CHECK(student.death().empty());

  // The approval was for that connection: the program connecting again waits again.
  LegacyClient again(rig.port());
  const auto new_wait = read_until(viewer, "pairing", [](const json& m) { return !m["waiting"].empty(); });
  REQUIRE(new_wait);
  CHECK((*new_wait)["waiting"][0]["client"] != client);
  driver.send(json{{"cmd", "approve"}, {"client", client}, {"id", "b"}}.dump() + "\n");
  const auto twice = driver.read_json_type("error");
  REQUIRE(twice);
  CHECK((*twice)["error"].get<std::string>().find("is not waiting to be approved") != std::string::npos);
}

TEST_CASE("the teacher changes live settings and sees every client, others see how many") {
  Rig rig({.config = kAccess});
  auto teacher = rig.json_client();
  auto driver = rig.json_client();
  CHECK(auth(teacher, "teacher", "chalk-and-cheese")["role"] == "teacher");
  CHECK(auth(driver, "pin", "4711")["role"] == "driver");

  driver.send(R"({"cmd":"set","key":"access.lease_idle_ms","value":2000,"id":"s"})"
              "\n");
  auto refused = driver.read_json_type("error");
  REQUIRE(refused);
  CHECK((*refused)["code"] == "denied");
  teacher.send(R"({"cmd":"set","key":"access.lease_idle_ms","value":2000,"id":"s"})"
               "\n");
  REQUIRE(teacher.read_json_type("ok"));
  rig.expect_log("reloaded access.lease_idle_ms: 10000 -> 2000");
  teacher.send(R"({"cmd":"set","key":"access.driver_pin","value":"1","id":"p"})"
               "\n");
  refused = teacher.read_json_type("error");
  REQUIRE(refused);
  CHECK((*refused)["error"] == "access.driver_pin is a secret: only the configuration file sets it");

  // The driver's lease now lasts 2 s without a command.
  driver.send("{\"cmd\":\"move\",\"speed\":20}\n");
  rig.expect_sim("rx 44 4D 53 14");
  const auto ended = read_until(teacher, "lease", [](const json& m) { return m["holder"].is_null(); });
  REQUIRE(ended);
  CHECK((*ended)["reason"].get<std::string>().find("sent no command for 2000 ms") != std::string::npos);

  const json all = bridge_stats(teacher);
  CHECK(all["clients"]["list"].size() == 2);
  const json counted = bridge_stats(driver);
  CHECK(counted["clients"]["connected"] == 2);
  CHECK_FALSE(counted["clients"].contains("list"));
}

namespace {

/// The client number of the one connection waiting to be approved, as `watcher` hears it.
int waiting_client(TcpClient& watcher) {
  const auto waiting = read_until(watcher, "pairing", [](const json& m) { return !m["waiting"].empty(); });
  REQUIRE(waiting);
  return (*waiting)["waiting"][0]["client"];
}

/// The refusals counted against `client` so far, as the teacher's stats list them.
int refused_of(TcpClient& teacher, int client) {
  const json stats = bridge_stats(teacher);
  for (const json& each : stats["clients"]["list"]) {
    if (each["id"] == client) return each["refused"];
  }
  return -1;
}

void approve(TcpClient& teacher, int client) {
  teacher.send(json{{"cmd", "approve"}, {"client", client}, {"id", "approve"}}.dump() + "\n");
  REQUIRE(read_until(teacher, "ok", [](const json& m) { return m["id"] == "approve"; }));
}

}  // namespace

TEST_CASE("with a PIN an ARIA program on port 8101 watches until it is approved, then drives") {
  RigOptions options = pioneer_rig();
  options.config = kAccess;
  Rig rig(options);
  auto teacher = rig.json_client();
  CHECK(auth(teacher, "teacher", "chalk-and-cheese")["role"] == "teacher");
  AriaClient program(rig.port());
  REQUIRE(program.connect());
  const int client = waiting_client(teacher);
  program.set_velocity(200, 0);
  // Nothing announces a refusal to an ARIA program: its count does.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (refused_of(teacher, client) < 1 && std::chrono::steady_clock::now() < deadline) program.run_for(50ms);
  CHECK(refused_of(teacher, client) >= 1);
  approve(teacher, client);
  program.set_velocity(210, 0);
  rig.expect_sim("rx VEL 210");  // (a VEL 200 ARIA sent again just before the approval may go too)
  CHECK(program.violations().empty());
}

TEST_CASE("with a PIN an SMR program on port 24901 reads every period until it is approved, then drives") {
  RigOptions options = smr_rig();
  options.config = kAccess;
  Rig rig(options);
  auto teacher = rig.json_client();
  CHECK(auth(teacher, "teacher", "chalk-and-cheese")["role"] == "teacher");
  SmrClient program(rig.port());
  REQUIRE(program.read());
  const int client = waiting_client(teacher);
  const std::string left_12 = bytes({0x02, 0x11, 0x0C});
  const auto echoed = [&](const std::string& message) {
    return std::ranges::find(program.last_other(), message) != program.last_other().end();
  };
  program.write(12, 12);
  for (int i = 0; i < 5; ++i) {
    REQUIRE(program.read());
    CHECK_FALSE(echoed(left_12));  // refused: never on the bus, so never echoed
  }
  approve(teacher, client);
  program.write(12, 12);
  bool on_the_bus = false;
  for (int i = 0; i < 20 && !on_the_bus; ++i) {
    REQUIRE(program.read());
    on_the_bus = echoed(left_12);
  }
  CHECK(on_the_bus);
  CHECK(program.violations().empty());
}
