// The Foxglove live view (docs/recording.md, "Watching live in Foxglove"):
// the real daemon with --foxglove against each family's simulated robot,
// and a strict client of the Foxglove WebSocket protocol written from its
// specification (github.com/foxglove/ws-protocol, docs/spec.md): the
// subprotocol foxglove.websocket.v1, serverInfo then advertise as text,
// subscriptions by the client's ids, each message a binary frame (opcode 1,
// the subscription, a u64 time in nanoseconds, the JSON). The browser test
// (tests/browser/foxglove.test.mjs) runs Foxglove's own client library.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "e2e/driving.hpp"
#include "e2e/rig.hpp"
#include "support/foxglove_client.hpp"

using namespace flockbridge::testing;
using nlohmann::json;

namespace {

std::uint64_t unix_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
}

using Viewer = FoxgloveClient;

/// The answer with this id on /answer.
json answer(Viewer& viewer, const json& id) {
  for (;;) {
    auto data = viewer.next_on("/answer");
    REQUIRE(data);
    if (data->message["id"] == id) return data->message;
  }
}

RigOptions live_rig(const std::string& robot, std::vector<std::string> more = {}) {
  RigOptions options;
  options.robot = robot;
  options.bridge_args = {"--foxglove"};
  options.bridge_args.insert(options.bridge_args.end(), more.begin(), more.end());
  return options;
}

}  // namespace

TEST_CASE(
    "foxglove: a viewer gets each family's topics with their JSON Schemas, and on /sensor the very messages a JSON "
    "client gets") {
  for (const std::string& robot : robot_families()) {
    CAPTURE(robot);
    Rig rig(live_rig(robot));
    REQUIRE(rig.foxglove_port() != 0);
    TcpClient client = rig.json_client();
    Viewer viewer(rig.foxglove_port());
    REQUIRE(viewer.accepted());
    REQUIRE(viewer.open());
    // Who serves, and what: the robot and its family, JSON only, commands taken.
    CHECK(viewer.server_info["name"].get<std::string>().starts_with("flockbridge "));
    CHECK(viewer.server_info["metadata"]["family"] == robot);
    CHECK(viewer.server_info["supportedEncodings"] == json::array({"json"}));
    CHECK(viewer.server_info["capabilities"] == json::array({"clientPublish"}));
    for (const char* topic : {"/sensor", "/hello", "/link", "/lease", "/emergency", "/robot", "/answer", "/recording",
                              "/bridge", "/pose", "/ranges"}) {
      CAPTURE(topic);
      REQUIRE(viewer.channels.contains(topic));
      const json& channel = viewer.channels[topic];
      CHECK(channel["encoding"] == "json");
      CHECK(channel["schemaEncoding"] == "jsonschema");
      const json schema = json::parse(channel["schema"].get<std::string>());
      CHECK(schema["type"] == "object");
      CHECK(schema["properties"].is_object());
    }
    // /sensor's schema is the family's: its readings, by name.
    CHECK(viewer.channels["/sensor"]["schemaName"] == "flockbridge." + robot + ".sensor");
    const json sensor_schema = json::parse(viewer.channels["/sensor"]["schema"].get<std::string>());
    CHECK(sensor_schema["properties"].contains("pose"));
    CHECK(sensor_schema["properties"].contains("battery_v"));

    // The hello comes at once on subscribing: it was sent before the viewer asked.
    const std::uint64_t subscribed_at = unix_ns();
    viewer.subscribe(7, "/hello");
    viewer.subscribe(9, "/sensor");
    auto hello = viewer.next_on("/hello");
    REQUIRE(hello);
    CHECK(hello->subscription == 7);
    CHECK(hello->message["type"] == "hello");
    CHECK(hello->message["robot"] == robot);
    CHECK(hello->message["geometry"]["ranges"].is_array());

    // The JSON client's sensor messages, by their number.
    std::map<std::uint64_t, json> by_seq;
    std::vector<Viewer::Data> seen;
    std::uint64_t last_ns = 0;
    const int wanted = robot == "pioneer" ? 12 : 40;
    while (static_cast<int>(seen.size()) < wanted) {
      auto data = viewer.next_on("/sensor");
      REQUIRE(data);
      CHECK(data->subscription == 9);
      CHECK(data->message["type"] == "sensor");
      // Stamped when the bridge sent it: after the viewer subscribed, never going back.
      CHECK(data->unix_ns >= subscribed_at);
      CHECK(data->unix_ns <= unix_ns());
      CHECK(data->unix_ns >= last_ns);
      last_ns = data->unix_ns;
      seen.push_back(*data);
    }
    const std::uint64_t last_seq = seen.back().message["seq"].get<std::uint64_t>();
    for (;;) {
      auto message = client.read_json_type("sensor");
      REQUIRE(message);
      const auto seq = (*message)["seq"].get<std::uint64_t>();
      by_seq[seq] = *message;
      if (seq >= last_seq) break;
    }
    int compared = 0;
    for (const Viewer::Data& data : seen) {
      const auto found = by_seq.find(data.message["seq"].get<std::uint64_t>());
      if (found == by_seq.end()) continue;  // sent before the JSON client's first read
      CHECK(data.message == found->second);
      ++compared;
    }
    CHECK(compared >= wanted / 2);
    // In order, and none lost while the viewer kept up.
    for (std::size_t i = 1; i < seen.size(); ++i) {
      CHECK(seen[i].message["seq"].get<std::uint64_t>() == seen[i - 1].message["seq"].get<std::uint64_t>() + 1);
    }
    // /pose and /ranges, derived from each sensor message: the pose as
    // Foxglove's PoseInFrame (metres, a quaternion about z), the ranges as sent.
    CHECK(viewer.channels["/pose"]["schemaName"] == "foxglove.PoseInFrame");
    CHECK(viewer.channels["/ranges"]["schemaName"] == "flockbridge." + robot + ".ranges");
    viewer.subscribe(11, "/pose");
    viewer.subscribe(12, "/ranges");
    // Each sensor message is followed by its pose (when the robot knows
    // its pose: a Flockbot whose wheels are not configured does not) and
    // its ranges.
    std::optional<json> last_sensor;
    bool pose_came = false;
    int poses = 0;
    int range_sets = 0;
    for (int read = 0; range_sets < 5; ++read) {
      REQUIRE(read < 100);
      auto data = viewer.next();
      REQUIRE(data);
      const std::string on = viewer.topic_of(data->subscription);
      if (on == "/sensor") {
        last_sensor = data->message;
        pose_came = false;
      } else if (on == "/pose" && last_sensor) {
        const json& pose = data->message;
        const json& odometry = (*last_sensor)["pose"];
        REQUIRE(odometry.is_object());
        CHECK(pose["frame_id"] == "odom");
        CHECK(pose["timestamp"]["sec"].get<double>() + pose["timestamp"]["nsec"].get<double>() / 1e9 ==
              doctest::Approx((*last_sensor)["ts"].get<double>()).epsilon(1e-12));
        CHECK(pose["pose"]["position"]["x"].get<double>() == doctest::Approx(odometry["x_mm"].get<double>() / 1000));
        CHECK(pose["pose"]["position"]["y"].get<double>() == doctest::Approx(odometry["y_mm"].get<double>() / 1000));
        const double half = odometry["th_deg"].get<double>() * 3.14159265358979323846 / 360;
        CHECK(pose["pose"]["orientation"]["z"].get<double>() == doctest::Approx(std::sin(half)));
        CHECK(pose["pose"]["orientation"]["w"].get<double>() == doctest::Approx(std::cos(half)));
        pose_came = true;
        ++poses;
      } else if (on == "/ranges" && last_sensor) {
        CHECK(data->message["seq"] == (*last_sensor)["seq"]);
        CHECK(data->message["ranges"] == (*last_sensor)["ranges"]);
        CHECK(pose_came == !(*last_sensor)["pose"].is_null());
        ++range_sets;
      }
    }
    // The Pioneer and the SMR know their pose from their wheels' encoders.
    if (robot != "flockbot") CHECK(poses > 0);
    // The bridge counts the viewer as a client of its own kind.
    client.send(R"({"cmd":"stats","id":"s"})"
                "\n");
    auto stats = client.read_json_type("stats");
    REQUIRE(stats);
    bool listed = false;
    for (const json& each : (*stats)["clients"]["list"]) listed = listed || each["kind"] == "foxglove";
    CHECK(listed);
    CHECK(viewer.statuses.empty());
  }
}

TEST_CASE(
    "foxglove: commands published on a channel follow the JSON port's rules - a viewer stops and latches, the PIN "
    "drives, mistakes are told") {
  RigOptions options = live_rig("flockbot");
  options.config = "[access]\ndriver_pin = \"4711\"\nteacher_secret = \"chalk-and-cheese\"\n";
  Rig rig(options);
  TcpClient watcher = rig.json_client();
  Viewer viewer(rig.foxglove_port());
  REQUIRE(viewer.accepted());
  REQUIRE(viewer.open());
  viewer.subscribe(1, "/answer");
  viewer.subscribe(2, "/emergency");
  viewer.advertise(5, "/command");

  // Without the PIN it may not drive: told on /answer, and as a status (Foxglove's problems).
  viewer.publish(5, json{{"cmd", "drive"}, {"v_mm_s", 100}, {"id", 1}});
  json refused = answer(viewer, 1);
  CHECK(refused["type"] == "error");
  CHECK(refused["code"] == "denied");
  REQUIRE_FALSE(viewer.statuses.empty());
  CHECK(viewer.statuses.back()["level"] == 2);
  CHECK(viewer.statuses.back()["message"] == refused["error"]);

  // With it, it drives: the command reaches the robot.
  viewer.publish(5, json{{"cmd", "auth"}, {"pin", "4711"}, {"id", 2}});
  CHECK(answer(viewer, 2)["role"] == "driver");
  viewer.publish(5, json{{"cmd", "drive"}, {"v_mm_s", 100}, {"id", 3}});
  CHECK(answer(viewer, 3)["type"] == "ok");

  // The emergency stop latches for everyone; the viewer cannot clear it (the teacher only).
  viewer.publish(5, json{{"cmd", "emergency"}, {"id", 4}});
  CHECK(answer(viewer, 4)["type"] == "ok");
  // (Subscribed before: it was told first that nothing was latched.)
  auto latched = viewer.next_on("/emergency");
  REQUIRE(latched);
  CHECK(latched->message["latched"] == false);
  latched = viewer.next_on("/emergency");
  REQUIRE(latched);
  CHECK(latched->message["latched"] == true);
  auto told = watcher.read_json_type("emergency_latch");
  REQUIRE(told);
  CHECK((*told)["latched"] == true);
  viewer.publish(5, json{{"cmd", "clear_emergency"}, {"id", 5}});
  CHECK(answer(viewer, 5)["code"] == "denied");
  viewer.publish(5, json{{"cmd", "drive"}, {"v_mm_s", 100}, {"id", 6}});
  CHECK(answer(viewer, 6)["type"] == "error");

  // A second viewer opened now sees the latch at once.
  Viewer late(rig.foxglove_port());
  REQUIRE(late.accepted());
  REQUIRE(late.open());
  late.subscribe(3, "/emergency");
  auto state = late.next_on("/emergency");
  REQUIRE(state);
  CHECK(state->message["latched"] == true);

  // Mistakes of the protocol are told as status messages, and the viewer is served on.
  const std::size_t before = viewer.statuses.size();
  viewer.publish(6, json{{"cmd", "stop"}});      // a channel never advertised
  viewer.advertise(8, "/pictures", "protobuf");  // not JSON
  viewer.ws().send_json({{"op", "subscribe"}, {"subscriptions", {{{"id", 11}, {"channelId", 4242}}}}});
  viewer.ws().send_text("{\"op\":\"getParameters\",\"parameterNames\":[]}");  // a capability not offered
  viewer.ws().send_text("not json");
  viewer.publish(5, std::string("{\"cmd\":"));  // a command cut short
  viewer.publish(5, json{{"cmd", "stop"}, {"id", 7}});
  CHECK(answer(viewer, 7)["type"] == "ok");
  REQUIRE(viewer.statuses.size() >= before + 6);
  for (std::size_t i = before; i < viewer.statuses.size(); ++i) {
    CHECK(viewer.statuses[i]["level"] == 2);
    CHECK_FALSE(viewer.statuses[i]["message"].get<std::string>().empty());
  }
  viewer.subscribe(12, "/sensor");
  CHECK(viewer.next_on("/sensor"));
}

TEST_CASE(
    "foxglove: off unless enabled - a page from elsewhere is refused, and each port speaks only its own "
    "subprotocol") {
  {
    Rig rig;
    CHECK(rig.foxglove_port() == 0);
    CHECK_FALSE(rig.bridge().seen(ChildProcess::Stream::Stderr, "Foxglove"));
  }
  Rig rig(live_rig("smr"));
  // A page of another site (Foxglove's web app, say) needs its host in access.allowed_origins.
  Viewer elsewhere(rig.foxglove_port(), "https://app.example.org");
  CHECK_FALSE(elsewhere.accepted());
  rig.expect_log("its page comes from https://app.example.org");
  // The robot's own pages may.
  Viewer own(rig.foxglove_port(), "http://127.0.0.1:" + std::to_string(rig.http_port()));
  CHECK(own.accepted());
  // The live view's port does not speak the dashboard's JSON, nor /ws Foxglove's.
  WebSocketClient json_on_foxglove(rig.foxglove_port(), "/", 0, {}, "flockbridge.json.v1");
  CHECK_FALSE(json_on_foxglove.accepted());
  WebSocketClient foxglove_on_ws(rig.http_port(), "/ws", 0, {}, FoxgloveClient::kSubprotocol);
  CHECK_FALSE(foxglove_on_ws.accepted());
  // And the dashboard's /ws serves on as before.
  WebSocketClient web = rig.web_client();
  CHECK(web.read_json_type("sensor"));

  Rig allowed(live_rig("smr", {"--allowed-origins", "app.example.org"}));
  Viewer welcome(allowed.foxglove_port(), "https://app.example.org");
  CHECK(welcome.accepted());
}

TEST_CASE(
    "foxglove: a viewer that subscribes late gets each state at once: the link, nobody driving, not latched, not "
    "recording") {
  Rig rig(live_rig("smr"));
  TcpClient client = rig.json_client();
  REQUIRE(client.read_json_type("sensor"));  // the link is up, the robot reports
  Viewer viewer(rig.foxglove_port());
  REQUIRE(viewer.accepted());
  REQUIRE(viewer.open());
  // A panel opened after the start: only then does it subscribe.
  REQUIRE(client.read_json_type("sensor"));
  viewer.subscribe(1, "/link");
  viewer.subscribe(2, "/lease");
  viewer.subscribe(3, "/emergency");
  viewer.subscribe(4, "/recording");
  const auto link = viewer.next_on("/link");
  REQUIRE(link);
  CHECK(link->message["type"] == "link");
  CHECK(link->message["state"] == "up");
  const auto lease = viewer.next_on("/lease");
  REQUIRE(lease);
  CHECK(lease->message["type"] == "lease");
  CHECK(lease->message["holder"].is_null());  // nobody drives
  const auto latch = viewer.next_on("/emergency");
  REQUIRE(latch);
  CHECK(latch->message["type"] == "emergency_latch");
  CHECK(latch->message["latched"] == false);
  const auto recording = viewer.next_on("/recording");
  REQUIRE(recording);
  CHECK(recording->message["type"] == "recording");
  CHECK(recording->message["active"] == false);
}

TEST_CASE("foxglove: a viewer that stops reading is closed after the stall timeout - the others carry on") {
  Rig rig(live_rig("flockbot", {"--stall-timeout-ms", "1000", "--queue-limit", "16"}));
  Viewer stalled(rig.foxglove_port(), {}, 2048);
  REQUIRE(stalled.accepted());
  REQUIRE(stalled.open());
  stalled.subscribe(1, "/sensor");
  Viewer reader(rig.foxglove_port());
  REQUIRE(reader.accepted());
  REQUIRE(reader.open());
  reader.subscribe(1, "/sensor");
  // The stalled one reads nothing from now on; the reader reads on while it waits.
  const std::string closed =
      "(foxglove, 127.0.0.1:" + std::to_string(stalled.ws().tcp().local_port()) + ") closed: not reading";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  int read = 0;
  while (!rig.bridge().seen(ChildProcess::Stream::Stderr, closed)) {
    REQUIRE_MESSAGE(std::chrono::steady_clock::now() < deadline, "the bridge never logged: ", closed);
    REQUIRE(reader.next_on("/sensor"));
    ++read;
  }
  for (int i = 0; i < 50; ++i) REQUIRE(reader.next_on("/sensor"));
  CHECK(read > 0);
  CHECK(reader.statuses.empty());
  CHECK(stalled.ws().wait_closed(std::chrono::seconds(30)));
}

TEST_CASE("foxglove: a viewer that subscribes again and again and never reads is closed as too far behind") {
  Rig rig(live_rig("flockbot", {"--queue-limit", "16"}));
  // Its socket fills with the sensor messages and the hellos it never reads;
  // the hellos made for it after that are bounded as any client's queue.
  Viewer flooding(rig.foxglove_port(), {}, 2048);
  REQUIRE(flooding.accepted());
  REQUIRE(flooding.open());
  flooding.subscribe(1, "/sensor");
  try {
    for (std::uint32_t i = 0; i < 400; ++i) {
      flooding.subscribe(100 + i, "/hello");
      flooding.ws().send_json({{"op", "unsubscribe"}, {"subscriptionIds", {100 + i}}});
    }
  } catch (const std::runtime_error&) {
    // The bridge closed it before it was done: what is checked next.
  }
  rig.expect_log("(foxglove, 127.0.0.1:" + std::to_string(flooding.ws().tcp().local_port()) +
                 ") closed: too far behind");
  // The others are served on.
  Viewer reader(rig.foxglove_port());
  REQUIRE(reader.accepted());
  REQUIRE(reader.open());
  reader.subscribe(1, "/sensor");
  for (int i = 0; i < 20; ++i) REQUIRE(reader.next_on("/sensor"));
}
