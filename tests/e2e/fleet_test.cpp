// The fleet (issue 17): bridges of every family on a real mosquitto on
// 127.0.0.1 with the project's example ACL; mosquitto_sub and mosquitto_pub
// play the teacher's and the students' tools.
#include <doctest/doctest.h>

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "e2e/rig.hpp"
#include "support/mqtt_broker.hpp"

namespace flockbridge::testing {
namespace {

using json = nlohmann::json;
using Stream = ChildProcess::Stream;

RigOptions on_broker(RigOptions options, const MqttBroker& broker, const std::string& robot, double telemetry_hz = 5) {
  const auto args = broker.bridge_args(robot, telemetry_hz);
  options.bridge_args.insert(options.bridge_args.end(), args.begin(), args.end());
  return options;
}

/// The class hub on the teacher's machine: no robot, the teacher's secret "sesame" in its file.
RigOptions hub_on(const MqttBroker& broker) {
  RigOptions options = on_broker(RigOptions{}, broker, "hub");
  options.robot = "none";
  options.start_sim = false;
  options.bridge_args.emplace_back("--hub");
  options.config = "[access]\nteacher_secret = \"sesame\"\n";
  return options;
}

/// Signs a JSON client in with the teacher's secret "sesame".
void sign_in_teacher(TcpClient& client) {
  client.send("{\"cmd\":\"auth\",\"teacher\":\"sesame\",\"id\":\"auth\"}\n");
  const auto signed_in = client.read_json_type("ok");
  REQUIRE(signed_in);
  CHECK((*signed_in)["role"] == "teacher");
}

/// Waits until the bridge has been connected to the broker (which may come
/// before or after its robot link is up).
void expect_joined(Rig& rig, const std::string& needle = "mqtt: connected to 127.0.0.1:") {
  REQUIRE_MESSAGE(rig.bridge().wait_seen(Stream::Stderr, needle), "the bridge never logged: " << needle);
}

/// The payload of the next message a mosquitto_sub -v prints on `topic` whose line holds `needle`.
json next_on(ChildProcess& subscriber, const std::string& topic, const std::string& needle = "") {
  for (;;) {
    const auto line = subscriber.wait_for(Stream::Stdout, topic + " {");
    REQUIRE_MESSAGE(line, "nothing came on " << topic << (needle.empty() ? "" : " with " + needle));
    if (!needle.empty() && line->find(needle) == std::string::npos) continue;
    json payload = json::parse(line->substr(line->find(' ') + 1), nullptr, false);
    REQUIRE(payload.is_object());
    return payload;
  }
}

/// Whether mosquitto_sub -d said it received `topic` as a retained message.
bool came_retained(ChildProcess& subscriber, const std::string& topic) {
  for (const std::string& line : subscriber.lines(Stream::Stdout)) {
    if (line.find("received PUBLISH") != std::string::npos && line.find(" r1,") != std::string::npos &&
        line.find("'" + topic + "'") != std::string::npos) {
      return true;
    }
  }
  return false;
}

}  // namespace

TEST_CASE("fleet: a bridge's status and telemetry are retained for a new subscriber, and its events published") {
  MqttBroker broker({"smr-1"});
  Rig rig(on_broker(smr_rig(), broker, "smr-1"));
  expect_joined(rig, "mqtt: connected to 127.0.0.1:" + std::to_string(broker.port()) + " as smr-1");

  // The example ACL, with the accounts docs/fleet.md makes, loads without a word of warning.
  const std::vector<std::string> warnings = broker.warnings();
  CHECK_MESSAGE(warnings.empty(), "mosquitto said: " << (warnings.empty() ? "" : warnings.front()));
  auto viewer = broker.subscribe("class", "flockbridge/v1/smr-1/#");
  const json status = next_on(*viewer, "flockbridge/v1/smr-1/status", R"("link":{"state":"up")");
  CHECK(status["state"] == "online");
  CHECK(status["robot"] == "smr-1");
  CHECK(status["family"] == "smr");
  CHECK(status["ports"]["json"] == rig.json_port());
  CHECK(status["ports"]["native"] == rig.port());
  CHECK(status["dashboard"] == "http://127.0.0.1:" + std::to_string(rig.http_port()) + "/");
  CHECK(status["lease"].is_null());
  CHECK(status["emergency"] == false);

  // A battery reading (a period whose power module answered late has none).
  const json telemetry = next_on(*viewer, "flockbridge/v1/smr-1/telemetry", R"("battery_v":1)");
  CHECK(telemetry["battery_v"].get<double>() == doctest::Approx(12.4).epsilon(0.01));
  CHECK(telemetry["pose"].contains("x_mm"));
  CHECK(telemetry["link"] == "up");
  CHECK(telemetry["emergency"] == false);
  CHECK(telemetry["errors"].contains("bad_checksum"));
  CHECK_FALSE(telemetry.contains("line"));  // a summary, not the sensor stream

  // Someone opens a fleet view later: the broker hands it what it kept, at once.
  auto later = broker.subscribe("class", "flockbridge/v1/smr-1/#");
  CHECK(next_on(*later, "flockbridge/v1/smr-1/status")["state"] == "online");
  next_on(*later, "flockbridge/v1/smr-1/telemetry");
  CHECK(came_retained(*later, "flockbridge/v1/smr-1/status"));
  CHECK(came_retained(*later, "flockbridge/v1/smr-1/telemetry"));

  // Who drives and the emergency latch come as events and in the status.
  auto student = rig.json_client();
  student.send("{\"cmd\":\"drive\",\"v_mm_s\":100,\"w_deg_s\":0,\"id\":1}\n");
  REQUIRE(student.read_json_type("ok"));
  const json lease = next_on(*viewer, "flockbridge/v1/smr-1/events", R"("type":"lease")");
  CHECK(lease["holder"]["kind"] == "json");
  CHECK(lease["robot"] == "smr-1");
  const json driven = next_on(*viewer, "flockbridge/v1/smr-1/status", R"("lease":{)");
  CHECK(driven["lease"]["peer"].get<std::string>().starts_with("127.0.0.1:"));
  student.send("{\"cmd\":\"emergency\",\"id\":2}\n");
  const json latched = next_on(*viewer, "flockbridge/v1/smr-1/events", R"("type":"emergency")");
  CHECK(latched["latched"] == true);
  CHECK(next_on(*viewer, "flockbridge/v1/smr-1/status", R"("emergency":true)")["state"] == "online");

  // Its stats say how the connection does.
  student.send("{\"cmd\":\"stats\",\"id\":3}\n");
  const auto stats = student.read_json_type("stats");
  REQUIRE(stats);
  CHECK((*stats)["mqtt"]["connected"] == 1);
  CHECK((*stats)["mqtt"]["published"].get<int>() >= 4);
  CHECK((*stats)["mqtt"]["dropped"] == 0);

  // A bridge that stops says so, and the broker keeps it.
  REQUIRE(rig.bridge().terminate() == 0);
  CHECK(next_on(*viewer, "flockbridge/v1/smr-1/status", R"("state":"offline")")["reason"] == "the bridge stopped");
}

TEST_CASE("fleet: the broker's last will marks a killed bridge offline, and a retained command is not obeyed") {
  MqttBroker broker({"fb-9"});
  // A command left retained on the broker would stop the robot at every
  // connection, long after it was meant: the bridge ignores it.
  REQUIRE(broker.publish("teacher", "flockbridge/v1/fb-9/cmd/emergency", R"({"by":"yesterday"})", true) == 0);
  Rig rig(on_broker(RigOptions{}, broker, "fb-9"));
  expect_joined(rig);
  REQUIRE(rig.bridge().wait_seen(Stream::Stderr,
                                 "mqtt: ignored the message on flockbridge/v1/fb-9/cmd/emergency: it was retained"));
  auto driver = rig.json_client();
  driver.send("{\"cmd\":\"move\",\"speed\":20,\"id\":1}\n");
  CHECK(driver.read_json_type("ok"));  // not latched

  auto teacher = broker.subscribe("teacher", "flockbridge/v1/fb-9/status");
  next_on(*teacher, "flockbridge/v1/fb-9/status", R"("state":"online")");
  rig.kill_bridge();
  const json will = next_on(*teacher, "flockbridge/v1/fb-9/status", R"("state":"offline")");
  CHECK(will["reason"] == "the bridge's connection was lost");
  CHECK(will["robot"] == "fb-9");
  // And it stays so for whoever looks later.
  auto later = broker.subscribe("class", "flockbridge/v1/fb-9/status");
  next_on(*later, "flockbridge/v1/fb-9/status", R"("state":"offline")");
  CHECK(came_retained(*later, "flockbridge/v1/fb-9/status"));
}

TEST_CASE("fleet: the teacher's emergency stop reaches a Flockbot, a Pioneer and an SMR, and nobody else's does") {
  MqttBroker broker({"fb-1", "p3-1", "smr-1"});
  Rig flockbot(on_broker(RigOptions{}, broker, "fb-1"));
  Rig pioneer(on_broker(pioneer_rig(), broker, "p3-1"));
  Rig smr(on_broker(smr_rig(), broker, "smr-1"));
  for (Rig* rig : {&flockbot, &pioneer, &smr}) expect_joined(*rig);

  // The SMR drives (its simulator reports changes of speed only).
  auto student = smr.json_client();
  student.send("{\"cmd\":\"drive\",\"v_mm_s\":100,\"w_deg_s\":0,\"id\":1}\n");
  REQUIRE(student.read_json_type("ok"));
  smr.expect_sim("rx left speed");

  // A student's account and a robot's account may not command the fleet:
  // the broker drops what they publish there.
  CHECK(broker.publish("student", "flockbridge/v1/_fleet/cmd/emergency", R"({"by":"student"})") == 0);
  CHECK(broker.publish("class", "flockbridge/v1/_fleet/cmd/emergency", R"({"by":"class"})") == 0);
  CHECK(broker.publish("fb-1", "flockbridge/v1/_fleet/cmd/emergency", R"({"by":"fb-1"})") == 0);
  CHECK(broker.publish("student", "flockbridge/v1/p3-1/cmd/emergency", R"({"by":"student"})") == 0);

  // One robot's own topic stops that robot only.
  CHECK(broker.publish("teacher", "flockbridge/v1/p3-1/cmd/emergency", R"({"by":"teacher","reason":"p3"})") == 0);
  CHECK(pioneer.expect_log("mqtt: emergency stop from").find("(teacher)") != std::string::npos);
  pioneer.expect_sim("rx E_STOP");

  CHECK(broker.publish("teacher", "flockbridge/v1/_fleet/cmd/emergency",
                       R"({"by":"teacher","reason":"end of the lesson"})") == 0);
  flockbot.expect_sim("rx 45 4D 47");
  pioneer.expect_sim("rx E_STOP");
  smr.expect_sim("rx left speed 0");
  for (Rig* rig : {&flockbot, &pioneer, &smr}) {
    // What the broker dropped never reached a bridge: the teacher's came first.
    const std::string line = rig->expect_log("mqtt: emergency stop from the fleet (teacher)");
    CHECK(line.find("end of the lesson") != std::string::npos);
    CHECK_FALSE(rig->bridge().seen(Stream::Stderr, "(student)"));
    CHECK_FALSE(rig->bridge().seen(Stream::Stderr, "(class)"));
    CHECK_FALSE(rig->bridge().seen(Stream::Stderr, "(fb-1)"));
  }
  CHECK_FALSE(flockbot.bridge().seen(Stream::Stderr, ": p3"));
  CHECK_FALSE(smr.bridge().seen(Stream::Stderr, ": p3"));

  // Latched: no motion until someone here clears it.
  const auto latch = student.read_json_type("emergency_latch");
  REQUIRE(latch);
  CHECK((*latch)["latched"] == true);
  CHECK((*latch)["by"]["client"] == 0);
  CHECK((*latch)["by"]["peer"] == "the fleet (teacher)");
  CHECK((*latch)["reason"] == "end of the lesson");
  CHECK((*latch)["source"] == "fleet");
  CHECK((*latch)["may_clear"] == json::array({"fleet"}));  // no teacher on this robot: nobody here
  student.send("{\"cmd\":\"drive\",\"v_mm_s\":100,\"w_deg_s\":0,\"id\":2}\n");
  const auto refused = student.read_json_type("error");
  REQUIRE(refused);
  CHECK((*refused)["code"] == "latched");
}

TEST_CASE("fleet: a broker killed and started again: the bridge reconnects by itself and its clients see nothing") {
  MqttBroker broker({"fb-2"});
  RigOptions options = on_broker(RigOptions{}, broker, "fb-2", 10);
  options.rate_hz = 50;
  Rig rig(options);
  expect_joined(rig);
  auto client = rig.json_client();
  const auto first = client.read_json_type("sensor");
  REQUIRE(first);

  broker.kill();
  rig.expect_log("mqtt: lost the connection to 127.0.0.1:" + std::to_string(broker.port()));
  // The robot's clients go on: every sensor message, in order.
  long seq = (*first)["seq"].get<long>();
  for (int i = 0; i < 50; ++i) {
    const auto sensor = client.read_json_type("sensor");
    REQUIRE(sensor);
    CHECK((*sensor)["seq"].get<long>() == ++seq);
  }
  broker.start();
  rig.expect_log("mqtt: connected", std::chrono::seconds(15));
  // The new broker kept nothing: the bridge says again that it is here.
  auto viewer = broker.subscribe("class", "flockbridge/v1/fb-2/status");
  CHECK(next_on(*viewer, "flockbridge/v1/fb-2/status")["state"] == "online");
  client.send("{\"cmd\":\"stats\",\"id\":1}\n");
  const auto stats = client.read_json_type("stats");
  REQUIRE(stats);
  CHECK((*stats)["mqtt"]["connects"] == 2);
  CHECK((*stats)["mqtt"]["disconnects"] == 1);
}

TEST_CASE("fleet: a broker that stops answering holds up neither the robot's clients nor memory") {
  MqttBroker broker({"fb-3"});
  RigOptions options = on_broker(RigOptions{}, broker, "fb-3", 10);
  options.rate_hz = 50;
  options.bridge_args.insert(options.bridge_args.end(), {"--mqtt-queue-limit", "8"});
  Rig rig(options);
  expect_joined(rig);
  auto client = rig.json_client();
  REQUIRE(client.read_json_type("sensor"));

  broker.pause(true);
  // Events the broker does not acknowledge pile up: lease changes, each one
  // an event (kept, until the queue is full) and a status (the latest only).
  for (int i = 0; i < 20; ++i) {
    client.send("{\"cmd\":\"move\",\"speed\":20,\"id\":" + std::to_string(2 * i) + "}\n");
    REQUIRE(client.read_json_type("ok"));
    client.send("{\"cmd\":\"release\",\"id\":" + std::to_string(2 * i + 1) + "}\n");
    REQUIRE(client.read_json_type("ok"));
  }
  // Meanwhile every sensor message reaches the client, in order.
  auto sensor = client.read_json_type("sensor");
  REQUIRE(sensor);
  long seq = (*sensor)["seq"].get<long>();
  for (int i = 0; i < 100; ++i) {
    sensor = client.read_json_type("sensor");
    REQUIRE(sensor);
    CHECK((*sensor)["seq"].get<long>() == ++seq);
  }
  client.send("{\"cmd\":\"stats\",\"id\":\"s\"}\n");
  const auto stats = client.read_json_type("stats");
  REQUIRE(stats);
  CHECK((*stats)["mqtt"]["queued"].get<int>() <= 8);
  CHECK((*stats)["mqtt"]["dropped"].get<int>() > 0);
  CHECK((*stats)["mqtt"]["replaced"].get<int>() > 0);
  broker.pause(false);
}

}  // namespace flockbridge::testing

namespace flockbridge::testing {
namespace {

/// The next fleet message on the hub's JSON client for which `test` holds.
template <typename Test>
json fleet_where(TcpClient& client, Test test) {
  for (int i = 0; i < 200; ++i) {
    const auto message = client.read_json_type("fleet");
    REQUIRE(message);
    if (test((*message)["robots"])) return *message;
  }
  FAIL("no fleet message matched");
  return {};
}

json robot_in(const json& robots, const std::string& name) {
  for (const json& robot : robots) {
    if (robot["robot"] == name) return robot;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("fleet: the class hub follows every robot, keeps one that went offline, and its teacher stops the class") {
  MqttBroker broker({"fb-4", "smr-4"});
  Rig flockbot(on_broker(RigOptions{}, broker, "fb-4", 2));
  Rig smr(on_broker(smr_rig(), broker, "smr-4", 2));
  Rig hub(hub_on(broker));
  expect_joined(hub);
  CHECK(hub.port() == 0);  // no port for a robot's own programs

  auto teacher = hub.json_client();
  teacher.send("{\"cmd\":\"fleet\",\"id\":1}\n");
  REQUIRE(teacher.read_json_type("ok"));
  const json both = fleet_where(teacher, [](const json& robots) {
    const json fb = robot_in(robots, "fb-4");
    const json sm = robot_in(robots, "smr-4");
    return fb.is_object() && sm.is_object() && fb["online"] == true && sm["online"] == true &&
           sm["telemetry"].is_object() && sm["telemetry"].contains("battery_v") &&
           sm["telemetry"]["battery_v"].is_number() && sm["status"]["link"]["state"] == "up";
  });
  const json seen_smr = robot_in(both["robots"], "smr-4");
  CHECK(seen_smr["status"]["family"] == "smr");
  CHECK(seen_smr["telemetry"]["battery_v"].get<double>() == doctest::Approx(12.4).epsilon(0.01));
  CHECK(robot_in(both["robots"], "hub").is_null());  // a hub with no robot is not one of the class

  // A student at the hub may watch, not stop the class.
  auto student = hub.json_client();
  student.send("{\"cmd\":\"fleet_emergency\",\"id\":\"s\"}\n");
  const auto denied = student.read_json_type("error");
  REQUIRE(denied);
  CHECK((*denied)["code"] == "denied");
  // A robot's own bridge is not the hub.
  auto elsewhere = smr.json_client();
  elsewhere.send("{\"cmd\":\"fleet\",\"id\":\"f\"}\n");
  const auto not_hub = elsewhere.read_json_type("error");
  REQUIRE(not_hub);
  CHECK((*not_hub)["error"].get<std::string>().find("not the class hub") != std::string::npos);

  // One robot dies: the hub keeps it, offline, since when the broker said so.
  flockbot.kill_bridge();
  const json gone = fleet_where(teacher, [](const json& robots) {
    const json fb = robot_in(robots, "fb-4");
    return fb.is_object() && fb["online"] == false;
  });
  CHECK(robot_in(gone["robots"], "fb-4")["status"]["reason"] == "the bridge's connection was lost");
  CHECK(robot_in(gone["robots"], "fb-4")["since"].is_number());
  CHECK(robot_in(gone["robots"], "fb-4")["status"]["family"] == "flockbot");  // what it was
  CHECK(robot_in(gone["robots"], "smr-4")["online"] == true);

  // The teacher stops the class: every robot still there stops and latches.
  student.send("{\"cmd\":\"drive\",\"v_mm_s\":100,\"id\":\"d\"}\n");  // the hub has no robot to drive
  CHECK(student.read_json_type("error"));
  auto driver = smr.json_client();
  driver.send("{\"cmd\":\"drive\",\"v_mm_s\":100,\"w_deg_s\":0,\"id\":1}\n");
  REQUIRE(driver.read_json_type("ok"));
  smr.expect_sim("rx left speed");
  sign_in_teacher(teacher);
  teacher.send("{\"cmd\":\"fleet_emergency\",\"id\":3}\n");
  const auto sent = teacher.read_json_type("ok");
  REQUIRE(sent);
  CHECK((*sent)["id"] == 3);
  smr.expect_sim("rx left speed 0");
  CHECK(smr.expect_log("mqtt: emergency stop from the fleet (the teacher at 127.0.0.1:").find("stop all") !=
        std::string::npos);
  fleet_where(teacher, [](const json& robots) {
    const json sm = robot_in(robots, "smr-4");
    return sm.is_object() && sm["status"]["emergency"] == true;
  });
  // One robot by name.
  teacher.send("{\"cmd\":\"fleet_emergency\",\"robot\":\"nobody\",\"id\":4}\n");
  const auto unknown = teacher.read_json_type("error");
  REQUIRE(unknown);
  CHECK((*unknown)["error"] == "there is no robot 'nobody' in the fleet");
}

}  // namespace flockbridge::testing

namespace flockbridge::testing {

TEST_CASE("fleet: an empty, retained or malformed command stops nobody, and a retained one is warned of once") {
  MqttBroker broker({"fb-6"});
  RigOptions options = on_broker(RigOptions{}, broker, "fb-6");
  options.bridge_args.insert(options.bridge_args.end(), {"--log-level", "debug"});
  Rig rig(options);
  expect_joined(rig);
  auto driver = rig.json_client();
  driver.send("{\"cmd\":\"move\",\"speed\":20,\"id\":1}\n");
  REQUIRE(driver.read_json_type("ok"));
  const std::string topic = "flockbridge/v1/fb-6/cmd/emergency";

  // The teacher deletes a retained command the way docs/fleet.md says: an
  // empty retained message, which the broker passes on to subscribers.
  REQUIRE(broker.publish("teacher", topic, "", true) == 0);
  rig.expect_log("mqtt: ignored the message on " + topic + ": it is empty");
  // Anything but a JSON object, and a JSON object with the wrong types, is not a stop either.
  REQUIRE(broker.publish("teacher", topic, "stop") == 0);
  rig.expect_log("mqtt: ignored the message on " + topic + ": a command is a JSON object");
  REQUIRE(broker.publish("teacher", "flockbridge/v1/_fleet/cmd/emergency", R"({"by":7})") == 0);
  rig.expect_log(R"("by" must be text)");
  // A retained command published while the bridge listens reaches it live
  // (MQTT 5's retain as published says so): ignored too, and said once.
  REQUIRE(broker.publish("teacher", topic, R"({"by":"teacher","reason":"kept by mistake"})", true) == 0);
  rig.expect_log("warning: mqtt: ignored the message on " + topic + ": it was retained");
  REQUIRE(broker.publish("teacher", topic, R"({"by":"teacher","reason":"again"})", true) == 0);
  rig.expect_log("debug: mqtt: ignored the message on " + topic + ": it was retained");
  // Deleted, then retained anew: a warning again.
  REQUIRE(broker.publish("teacher", topic, "", true) == 0);
  rig.expect_log("debug: mqtt: ignored the message on " + topic + ": it is empty");
  REQUIRE(broker.publish("teacher", topic, R"({"by":"teacher","reason":"third"})", true) == 0);
  rig.expect_log("warning: mqtt: ignored the message on " + topic + ": it was retained");

  // None of it stopped or latched the robot.
  CHECK_FALSE(rig.sim().seen(Stream::Stdout, "rx 45 4D 47"));
  CHECK_FALSE(rig.bridge().seen(Stream::Stderr, "mqtt: emergency stop from"));
  driver.send("{\"cmd\":\"move\",\"speed\":22,\"id\":2}\n");
  CHECK(driver.read_json_type("ok"));
  rig.expect_sim("rx 44 4D 53 16");

  // A proper one does.
  REQUIRE(broker.publish("teacher", topic, "{}") == 0);
  rig.expect_sim("rx 45 4D 47");
}

}  // namespace flockbridge::testing

namespace flockbridge::testing {

TEST_CASE("fleet: the class's stop is cleared by the fleet or the robot's teacher only - the robot's own stop stays") {
  MqttBroker broker({"smr-7", "fb-7"});
  // No secrets at all on this robot: everyone drives, and still nobody here clears the class's stop.
  Rig smr(on_broker(smr_rig(), broker, "smr-7"));
  // A teacher secret on this one: the teacher may.
  RigOptions with_teacher = on_broker(RigOptions{}, broker, "fb-7");
  with_teacher.config = "[access]\nteacher_secret = \"sesame\"\n";
  Rig flockbot(with_teacher);
  expect_joined(smr);
  expect_joined(flockbot);

  auto student = smr.json_client();
  student.send("{\"cmd\":\"drive\",\"v_mm_s\":100,\"w_deg_s\":0,\"id\":1}\n");
  REQUIRE(student.read_json_type("ok"));
  // The student's own emergency stop first, then the teacher's for the class.
  student.send("{\"cmd\":\"emergency\",\"id\":2}\n");
  REQUIRE(student.read_json_type("emergency_latch"));
  REQUIRE(broker.publish("teacher", "flockbridge/v1/_fleet/cmd/emergency", R"({"by":"teacher","reason":"lunch"})") ==
          0);
  const auto both = student.read_json_type("emergency_latch");
  REQUIRE(both);
  CHECK((*both)["source"] == "fleet");
  CHECK((*both)["holds"].size() == 2);
  CHECK((*both)["may_clear"] == json::array());  // nobody alone: the class's, then the robot's own
  CHECK((*both)["clear_by"].get<std::string>().find("then a driver") != std::string::npos);

  // The student (a driver: no PIN is set) may not clear the class's stop.
  student.send("{\"cmd\":\"clear_emergency\",\"id\":3}\n");
  const auto denied = student.read_json_type("error");
  REQUIRE(denied);
  CHECK((*denied)["code"] == "denied");
  CHECK((*denied)["error"].get<std::string>().find("class hub") != std::string::npos);
  student.send("{\"cmd\":\"drive\",\"v_mm_s\":100,\"w_deg_s\":0,\"id\":4}\n");
  const auto latched = student.read_json_type("error");
  REQUIRE(latched);
  CHECK((*latched)["code"] == "latched");
  CHECK((*latched)["error"].get<std::string>().find("lunch") != std::string::npos);

  // The fleet clears its own stop: the student's stays, and the student clears that.
  REQUIRE(broker.publish("teacher", "flockbridge/v1/smr-7/cmd/clear", R"({"by":"teacher"})") == 0);
  const auto left = student.read_json_type("emergency_latch");
  REQUIRE(left);
  CHECK((*left)["latched"] == true);
  CHECK((*left)["source"] == "local");
  CHECK((*left)["may_clear"] == json::array({"driver"}));
  smr.expect_log("the robot's own emergency stop (client");
  student.send("{\"cmd\":\"clear_emergency\",\"id\":5}\n");
  REQUIRE(student.read_json_type("ok"));
  student.send("{\"cmd\":\"drive\",\"v_mm_s\":100,\"w_deg_s\":0,\"id\":6}\n");
  CHECK(student.read_json_type("ok"));

  // On the robot with a teacher: a driver (no PIN set) may not; the teacher may.
  auto driver = flockbot.json_client();
  auto teacher = flockbot.json_client();
  sign_in_teacher(teacher);
  const auto stopped = driver.read_json_type("emergency_latch");  // the class's stop, still latched here
  REQUIRE(stopped);
  CHECK((*stopped)["may_clear"] == json::array({"fleet", "teacher"}));
  driver.send("{\"cmd\":\"clear_emergency\",\"id\":2}\n");
  const auto refused = driver.read_json_type("error");
  REQUIRE(refused);
  CHECK((*refused)["code"] == "denied");
  teacher.send("{\"cmd\":\"clear_emergency\",\"id\":3}\n");
  const auto cleared = driver.read_json_type("emergency_latch");
  REQUIRE(cleared);
  CHECK((*cleared)["latched"] == false);
  // A clear for a robot with nothing latched by the fleet changes nothing.
  REQUIRE(broker.publish("teacher", "flockbridge/v1/fb-7/cmd/clear", "{}") == 0);
  flockbot.expect_log("this robot had none");
}

TEST_CASE("fleet: the hub's stop for an offline robot waits and reaches it when it is back - the hub's Clear clears") {
  MqttBroker broker({"fb-8", "smr-8"});
  std::optional<Rig> flockbot(std::in_place, on_broker(RigOptions{}, broker, "fb-8", 2));
  Rig smr(on_broker(smr_rig(), broker, "smr-8", 2));
  Rig hub(hub_on(broker));
  expect_joined(hub);
  // It says which account it really used.
  CHECK(hub.bridge().seen(Stream::Stderr, "mqtt: the class hub, following flockbridge/v1/+/ on 127.0.0.1:" +
                                              std::to_string(broker.port()) + " as user hub"));
  auto teacher = hub.json_client();
  teacher.send("{\"cmd\":\"fleet\",\"id\":1}\n");
  REQUIRE(teacher.read_json_type("ok"));
  fleet_where(teacher, [](const json& robots) {
    const json fb = robot_in(robots, "fb-8");
    const json sm = robot_in(robots, "smr-8");
    return fb.is_object() && sm.is_object() && fb["online"] == true && sm["online"] == true;
  });
  flockbot->kill_bridge();
  fleet_where(teacher, [](const json& robots) { return robot_in(robots, "fb-8")["online"] == false; });

  sign_in_teacher(teacher);
  teacher.send("{\"cmd\":\"fleet_emergency\",\"robot\":\"fb-8\",\"id\":3}\n");
  const auto answer = teacher.read_json_type("ok");
  REQUIRE(answer);
  CHECK((*answer)["id"] == 3);
  CHECK((*answer)["offline"] == json::array({"fb-8"}));
  CHECK((*answer)["note"].get<std::string>().find("fb-8 is offline") != std::string::npos);
  CHECK((*answer)["note"].get<std::string>().find("the moment it is back") != std::string::npos);
  fleet_where(teacher, [](const json& robots) {
    const json fb = robot_in(robots, "fb-8");
    return fb["pending"].is_object() && fb["pending"]["command"] == "emergency";
  });

  // The robot's bridge comes back (the Pi rebooted): it stops and latches at once.
  flockbot.reset();
  flockbot.emplace(on_broker(RigOptions{}, broker, "fb-8", 2));
  REQUIRE(flockbot->bridge().wait_seen(Stream::Stderr, "while the robot was offline"));
  flockbot->expect_sim("rx 45 4D 47");
  auto student = flockbot->json_client();
  const auto latch = student.read_json_type("emergency_latch");
  REQUIRE(latch);
  CHECK((*latch)["source"] == "fleet");
  CHECK((*latch)["reason"].get<std::string>().find("offline") != std::string::npos);
  fleet_where(teacher, [](const json& robots) {
    const json fb = robot_in(robots, "fb-8");
    return fb["online"] == true && fb["pending"].is_null() && fb["status"]["latch"].is_object() &&
           fb["status"]["latch"]["source"] == "fleet";
  });

  // The teacher clears the class from the hub: every robot may drive again.
  teacher.send("{\"cmd\":\"fleet_emergency\",\"id\":4}\n");
  REQUIRE(teacher.read_json_type("ok"));
  smr.expect_log("mqtt: emergency stop from the fleet");
  teacher.send("{\"cmd\":\"fleet_clear\",\"id\":5}\n");
  const auto cleared = teacher.read_json_type("ok");
  REQUIRE(cleared);
  CHECK_FALSE(cleared->contains("offline"));
  for (Rig* rig : {&*flockbot, &smr}) rig->expect_log("cleared the class's emergency stop: the robot may drive again");
  student.send("{\"cmd\":\"move\",\"speed\":20,\"id\":6}\n");
  CHECK(student.read_json_type("ok"));
}

}  // namespace flockbridge::testing
