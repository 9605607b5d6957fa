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
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "e2e/rig.hpp"

using namespace flockbridge::testing;
using nlohmann::json;

namespace {

constexpr const char* kSubprotocol = "foxglove.websocket.v1";

std::uint64_t unix_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
}

template <typename T>
T little_endian(const std::string& bytes, std::size_t at) {
  T value = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    value |= static_cast<T>(static_cast<std::uint8_t>(bytes[at + i])) << (8 * i);
  }
  return value;
}

/// A Foxglove WebSocket client that takes nothing on trust: every text
/// message must be JSON with an "op" it knows, every binary one a whole
/// message-data frame on one of its subscriptions.
class Viewer {
 public:
  struct Data {
    std::uint32_t subscription;
    std::uint64_t unix_ns;
    json message;
  };

  explicit Viewer(std::uint16_t port, const std::string& origin = {}, int receive_buffer = 0)
      : ws_(port, "/", receive_buffer, origin, kSubprotocol) {}

  [[nodiscard]] bool accepted() const { return ws_.accepted(); }
  WebSocketClient& ws() { return ws_; }

  /// Reads serverInfo and advertise, in that order, as the protocol has them.
  void open() {
    auto info = ws_.read_message();
    REQUIRE(info);
    REQUIRE(info->opcode == WebSocketClient::Text);
    server_info = json::parse(info->payload);
    REQUIRE(server_info["op"] == "serverInfo");
    auto advertised = ws_.read_message();
    REQUIRE(advertised);
    REQUIRE(advertised->opcode == WebSocketClient::Text);
    const json advertise = json::parse(advertised->payload);
    REQUIRE(advertise["op"] == "advertise");
    for (const json& channel : advertise["channels"]) channels[channel["topic"].get<std::string>()] = channel;
  }

  void subscribe(std::uint32_t id, const std::string& topic) {
    REQUIRE(channels.contains(topic));
    ws_.send_json({{"op", "subscribe"}, {"subscriptions", {{{"id", id}, {"channelId", channels[topic]["id"]}}}}});
    topic_of_[id] = topic;
  }

  /// Advertises a JSON channel of the client's own, as Foxglove's Publish panel does.
  void advertise(std::uint32_t id, const std::string& topic, const std::string& encoding = "json") {
    ws_.send_json({{"op", "advertise"},
                   {"channels", {{{"id", id}, {"topic", topic}, {"encoding", encoding}, {"schemaName", "cmd"}}}}});
  }

  /// A message on one of the client's channels: opcode 1, the channel (u32 LE), the payload.
  void publish(std::uint32_t channel, const std::string& payload) {
    std::string frame(1, '\x01');
    for (int i = 0; i < 4; ++i) frame.push_back(static_cast<char>((channel >> (8 * i)) & 0xFF));
    frame += payload;
    ws_.send_frame(WebSocketClient::Binary, frame, true);
  }
  void publish(std::uint32_t channel, const json& command) { publish(channel, command.dump()); }

  /// The next message on a subscription; status messages on the way are kept in `statuses`.
  std::optional<Data> next(std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return std::nullopt;
      auto message = ws_.read_message(left);
      if (!message) return std::nullopt;
      if (message->opcode == WebSocketClient::Text) {
        const json text = json::parse(message->payload);
        REQUIRE(text["op"] == "status");  // nothing else comes after advertise
        REQUIRE(text["level"].is_number_integer());
        statuses.push_back(text);
        continue;
      }
      REQUIRE(message->opcode == WebSocketClient::Binary);
      const std::string& bytes = message->payload;
      REQUIRE(bytes.size() > 13);
      REQUIRE(static_cast<std::uint8_t>(bytes[0]) == 1);  // message data
      Data data{little_endian<std::uint32_t>(bytes, 1), little_endian<std::uint64_t>(bytes, 5),
                json::parse(bytes.substr(13))};
      REQUIRE_MESSAGE(topic_of_.contains(data.subscription), "a message on a subscription never made");
      return data;
    }
  }

  /// The next message on `topic`'s subscription; those on others wait for
  /// their own turn.
  std::optional<Data> next_on(const std::string& topic, std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    for (auto it = waiting_.begin(); it != waiting_.end(); ++it) {
      if (topic_of_[it->subscription] == topic) {
        Data data = std::move(*it);
        waiting_.erase(it);
        return data;
      }
    }
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return std::nullopt;
      auto data = next(left);
      if (!data) return std::nullopt;
      if (topic_of_[data->subscription] == topic) return data;
      // A sensor message waits for nobody: at 100 a second, keeping them would only fill memory.
      if (topic_of_[data->subscription] != "/sensor") waiting_.push_back(std::move(*data));
    }
  }

  /// The answer with this id on /answer.
  json answer(const json& id) {
    for (;;) {
      auto data = next_on("/answer");
      REQUIRE(data);
      if (data->message["id"] == id) return data->message;
    }
  }

  json server_info;
  std::map<std::string, json> channels;
  std::vector<json> statuses;

 private:
  WebSocketClient ws_;
  std::map<std::uint32_t, std::string> topic_of_;
  std::deque<Data> waiting_;
};

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
  for (const std::string robot : {"flockbot", "pioneer", "smr"}) {
    CAPTURE(robot);
    Rig rig(live_rig(robot));
    REQUIRE(rig.foxglove_port() != 0);
    TcpClient client = rig.json_client();
    Viewer viewer(rig.foxglove_port());
    REQUIRE(viewer.accepted());
    viewer.open();
    // Who serves, and what: the robot and its family, JSON only, commands taken.
    CHECK(viewer.server_info["name"].get<std::string>().starts_with("flockbridge "));
    CHECK(viewer.server_info["metadata"]["family"] == robot);
    CHECK(viewer.server_info["supportedEncodings"] == json::array({"json"}));
    CHECK(viewer.server_info["capabilities"] == json::array({"clientPublish"}));
    for (const char* topic :
         {"/sensor", "/hello", "/link", "/lease", "/emergency", "/robot", "/answer", "/recording", "/bridge"}) {
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
  viewer.open();
  viewer.subscribe(1, "/answer");
  viewer.subscribe(2, "/emergency");
  viewer.advertise(5, "/command");

  // Without the PIN it may not drive: told on /answer, and as a status (Foxglove's problems).
  viewer.publish(5, json{{"cmd", "drive"}, {"v_mm_s", 100}, {"id", 1}});
  json refused = viewer.answer(1);
  CHECK(refused["type"] == "error");
  CHECK(refused["code"] == "denied");
  REQUIRE_FALSE(viewer.statuses.empty());
  CHECK(viewer.statuses.back()["level"] == 2);
  CHECK(viewer.statuses.back()["message"] == refused["error"]);

  // With it, it drives: the command reaches the robot.
  viewer.publish(5, json{{"cmd", "auth"}, {"pin", "4711"}, {"id", 2}});
  CHECK(viewer.answer(2)["role"] == "driver");
  viewer.publish(5, json{{"cmd", "drive"}, {"v_mm_s", 100}, {"id", 3}});
  CHECK(viewer.answer(3)["type"] == "ok");

  // The emergency stop latches for everyone; the viewer cannot clear it (the teacher only).
  viewer.publish(5, json{{"cmd", "emergency"}, {"id", 4}});
  CHECK(viewer.answer(4)["type"] == "ok");
  auto latched = viewer.next_on("/emergency");
  REQUIRE(latched);
  CHECK(latched->message["latched"] == true);
  auto told = watcher.read_json_type("emergency_latch");
  REQUIRE(told);
  CHECK((*told)["latched"] == true);
  viewer.publish(5, json{{"cmd", "clear_emergency"}, {"id", 5}});
  CHECK(viewer.answer(5)["code"] == "denied");
  viewer.publish(5, json{{"cmd", "drive"}, {"v_mm_s", 100}, {"id", 6}});
  CHECK(viewer.answer(6)["type"] == "error");

  // A second viewer opened now sees the latch at once.
  Viewer late(rig.foxglove_port());
  REQUIRE(late.accepted());
  late.open();
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
  CHECK(viewer.answer(7)["type"] == "ok");
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
  WebSocketClient foxglove_on_ws(rig.http_port(), "/ws", 0, {}, kSubprotocol);
  CHECK_FALSE(foxglove_on_ws.accepted());
  // And the dashboard's /ws serves on as before.
  WebSocketClient web = rig.web_client();
  CHECK(web.read_json_type("sensor"));

  Rig allowed(live_rig("smr", {"--allowed-origins", "app.example.org"}));
  Viewer welcome(allowed.foxglove_port(), "https://app.example.org");
  CHECK(welcome.accepted());
}

TEST_CASE(
    "foxglove: a viewer that stops reading is closed after the stall timeout, one that floods subscriptions as too "
    "far behind - the others carry on") {
  Rig rig(live_rig("flockbot", {"--stall-timeout-ms", "1000", "--queue-limit", "16"}));
  Viewer stalled(rig.foxglove_port(), {}, 2048);
  REQUIRE(stalled.accepted());
  stalled.open();
  stalled.subscribe(1, "/sensor");
  Viewer flooding(rig.foxglove_port());
  REQUIRE(flooding.accepted());
  flooding.open();
  Viewer reader(rig.foxglove_port());
  REQUIRE(reader.accepted());
  reader.open();
  reader.subscribe(1, "/sensor");
  // Neither reads from now on.
  rig.expect_log("(foxglove, 127.0.0.1:" + std::to_string(stalled.ws().tcp().local_port()) + ") closed: not reading",
                 std::chrono::seconds(30));
  // The hello again and again, never read: the frames made for it are bounded as any client's queue.
  for (std::uint32_t i = 0; i < 40; ++i) {
    flooding.subscribe(100 + i, "/hello");
    flooding.ws().send_json({{"op", "unsubscribe"}, {"subscriptionIds", {100 + i}}});
  }
  rig.expect_log("(foxglove, 127.0.0.1:" + std::to_string(flooding.ws().tcp().local_port()) +
                 ") closed: too far behind");
  // The reader carries on.
  for (int i = 0; i < 50; ++i) REQUIRE(reader.next_on("/sensor"));
  CHECK(reader.statuses.empty());
}
