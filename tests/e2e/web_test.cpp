// The web server end to end: the dashboard's files over HTTP, and the
// WebSocket feed at /ws with the same messages and per-client rules as port
// 2006, against the real bridge and the real simulated Uno.
#include <doctest/doctest.h>

#include <set>

#include "e2e/rig.hpp"

using namespace flockbridge::testing;
using Stream = ChildProcess::Stream;
using nlohmann::json;

TEST_CASE("the dashboard's page and files are served over HTTP") {
  Rig rig({.start_sim = false});
  REQUIRE(rig.http_port() != 0);

  auto page = http_get(rig.http_port(), "/");
  REQUIRE(page);
  CHECK(page->status == 200);
  CHECK(page->headers["content-type"].find("text/html") == 0);
  CHECK(page->body.find("<title>flockbridge") != std::string::npos);
  // No script or style from anywhere but the bridge itself.
  CHECK(page->headers["content-security-policy"].find("script-src 'self'") != std::string::npos);

  for (const auto& [path, type] : std::map<std::string, std::string>{{"/dashboard.js", "text/javascript"},
                                                                     {"/family-smr.js", "text/javascript"},
                                                                     {"/dashboard.css", "text/css"}}) {
    const std::string& asked = path;  // clang 14 cannot capture a structured binding
    CAPTURE(asked);
    auto file = http_get(rig.http_port(), path);
    REQUIRE(file);
    CHECK(file->status == 200);
    CHECK(file->headers["content-type"].find(type) == 0);
    CHECK_FALSE(file->body.empty());
  }
  auto missing = http_get(rig.http_port(), "/no-such-file.html");
  REQUIRE(missing);
  CHECK(missing->status == 404);
}

TEST_CASE("a WebSocket client gets hello, numbered sensor messages, and answers to its commands") {
  Rig rig({.rate_hz = 50});
  TcpClient tcp(rig.json_port());
  auto tcp_hello = tcp.read_json();
  REQUIRE(tcp_hello);
  WebSocketClient client(rig.http_port());
  REQUIRE(client.accepted());
  auto hello = client.read_json();
  REQUIRE(hello);
  CHECK((*hello)["type"] == "hello");
  CHECK((*hello)["version"] == 2);
  CHECK((*hello)["link"] == "up");
  CHECK((*hello)["role"] == "driver");  // no PIN set: everyone may drive
  // The same bridge session as port 2006's.
  CHECK((*hello)["session"] == (*tcp_hello)["session"]);

  std::vector<long> seqs;
  while (seqs.size() < 20) {
    auto sensor = client.read_json_type("sensor");
    REQUIRE(sensor);
    CHECK(sensor->contains("ts"));
    CHECK((*sensor)["ir"].size() == 5);
    seqs.push_back((*sensor)["seq"].get<long>());
  }
  for (std::size_t i = 1; i < seqs.size(); ++i) CHECK(seqs[i] == seqs[i - 1] + 1);

  client.send_json({{"cmd", "move"}, {"speed", 25}, {"id", 7}});
  auto ok = client.read_json_type("ok");
  REQUIRE(ok);
  CHECK((*ok)["id"] == 7);
  rig.expect_sim("rx 44 4D 53 19");

  client.send_json({{"cmd", "move"}, {"speed", 150}, {"id", 8}});
  auto error = client.read_json_type("error");
  REQUIRE(error);
  CHECK((*error)["id"] == 8);
  CHECK((*error)["code"] == "invalid");
  CHECK((*error)["error"] == "move: speed must be from -100 to 100, got 150");

  client.send_json({{"cmd", "stats"}, {"id", 9}});
  auto stats = client.read_json_type("stats");
  REQUIRE(stats);
  std::set<std::string> kinds;
  for (const auto& c : (*stats)["clients"]["list"]) kinds.insert(c["kind"].get<std::string>());
  CHECK(kinds == std::set<std::string>{"json", "websocket"});
}

TEST_CASE("subscribe throttles a WebSocket client, unsubscribe stops its sensor messages") {
  Rig rig({.rate_hz = 50});
  auto client = rig.web_client();
  client.send_json({{"cmd", "subscribe"}, {"interval_ms", 300}, {"id", 1}});
  REQUIRE(client.read_json_type("ok"));
  check_throttled(client, 0.3);
  client.send_json({{"cmd", "unsubscribe"}, {"id", 2}});
  // Everything after the ok is not a sensor message: a stats request's
  // answer comes next.
  auto ok = client.read_json_type("ok");
  REQUIRE(ok);
  CHECK((*ok)["id"] == 2);
  client.send_json({{"cmd", "stats"}, {"id", 3}});
  auto next = client.read_json();
  REQUIRE(next);
  CHECK((*next)["type"] == "stats");
}

TEST_CASE("a dashboard that reconnects after its network dropped gets a fresh hello and carries on") {
  Rig rig({.rate_hz = 50});
  std::string session;
  {
    WebSocketClient first(rig.http_port());
    REQUIRE(first.accepted());
    auto hello = first.read_json();
    REQUIRE(hello);
    session = (*hello)["session"].get<std::string>();
    REQUIRE(first.read_json_type("sensor"));
    // Gone without a WebSocket close, as when Wi-Fi drops and the socket is reset.
  }
  rig.expect_log("closed: connection closed without a WebSocket close");
  WebSocketClient again(rig.http_port());
  REQUIRE(again.accepted());
  auto hello = again.read_json();
  REQUIRE(hello);
  CHECK((*hello)["type"] == "hello");
  CHECK((*hello)["session"] == session);
  REQUIRE(again.read_json_type("sensor"));
  again.send_json({{"cmd", "claw_open"}, {"id", 1}});
  REQUIRE(again.read_json_type("ok"));
  rig.expect_sim("rx 44 47 4F");
}

TEST_CASE("a WebSocket client that never reads can still stop the robot, and is told what it lost") {
  Rig rig({.rate_hz = 400, .bridge_args = {"--stall-timeout-ms", "60000"}});
  auto stalled = rig.web_client(2048);
  // The watcher asks for the counters only: 400 sensor messages a second
  // that it did not read while the machine held it up would close it as
  // too far behind, which is what the bridge promises (faults_test.cpp).
  auto reader = rig.json_client();
  reader.send("{\"cmd\":\"unsubscribe\",\"id\":\"quiet\"}\n");
  REQUIRE(reader.read_json_type("ok"));
  // Let its buffers fill: the bridge starts dropping its sensor messages.
  json websocket;
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (std::chrono::steady_clock::now() < deadline) {
    reader.send("{\"cmd\":\"stats\"}\n");
    auto stats = reader.read_json_type("stats");
    REQUIRE(stats);
    websocket = nullptr;
    for (const auto& c : (*stats)["clients"]["list"]) {
      if (c["kind"] == "websocket") websocket = c;
    }
    REQUIRE_MESSAGE(!websocket.is_null(), "the bridge no longer lists the WebSocket client");
    if (websocket["sensor_dropped"].get<long>() > 50) break;
  }
  CAPTURE(websocket.dump());
  REQUIRE(websocket["sensor_dropped"].get<long>() > 50);
  // Telemetry piling up on its way out does not hold back its commands.
  stalled.send_json({{"cmd", "stop"}, {"id", 42}});
  rig.expect_sim("rx 44 53 54");
  auto dropped = stalled.read_json_type("dropped", 10s);
  REQUIRE(dropped);
  CHECK((*dropped)["count"].get<long>() > 0);
  auto ok = stalled.read_json_type("ok", 10s);
  REQUIRE(ok);
  CHECK((*ok)["id"] == 42);
  reader.send("{\"cmd\":\"subscribe\"}\n");
  CHECK(reader.read_json_type("sensor"));
}

TEST_CASE("bad input on /ws gets a reason and the connection stays open") {
  Rig rig;
  auto client = rig.web_client();

  client.send_text("{\"cmd\":");
  auto error = client.read_json_type("error");
  REQUIRE(error);
  CHECK((*error)["code"] == "invalid");

  client.send_frame(WebSocketClient::Binary,
                    "\x03"
                    "DGO",
                    true);
  error = client.read_json_type("error");
  REQUIRE(error);
  CHECK((*error)["error"].get<std::string>().find("binary WebSocket messages are not understood") == 0);

  client.send_text(std::string(5000, ' '));
  error = client.read_json_type("error");
  REQUIRE(error);
  CHECK((*error)["error"] == "message longer than 4096 bytes; discarded");

  // A command in three fragments is one message.
  client.send_frame(WebSocketClient::Text, "{\"cmd\":\"cl", false);
  client.send_frame(WebSocketClient::Continuation, "aw_close\",", false);
  client.send_frame(WebSocketClient::Continuation, "\"id\":5}", true);
  auto ok = client.read_json_type("ok");
  REQUIRE(ok);
  CHECK((*ok)["id"] == 5);
  rig.expect_sim("rx 44 47 43");
}

TEST_CASE("WebSocket upgrades are for /ws only") {
  Rig rig({.start_sim = false});
  WebSocketClient elsewhere(rig.http_port(), "/feed");
  CHECK_FALSE(elsewhere.accepted());
  WebSocketClient feed(rig.http_port(), "/ws");
  CHECK(feed.accepted());
}

TEST_CASE("a WebSocket message left incomplete ends the connection with the reason") {
  Rig rig({.bridge_args = {"--message-timeout-ms", "300"}, .start_sim = false});
  auto client = rig.web_client();
  client.send_frame(WebSocketClient::Text, "{\"cmd\":\"st", false);
  CHECK(client.wait_closed(10s));
  CHECK(client.close_code() == 1008);
  CHECK(client.close_reason() == "incomplete message: not finished within 300 ms");
}

TEST_CASE("WebSocket clients beyond the limit are told so and closed with 'try again later'") {
  Rig rig({.bridge_args = {"--max-clients", "2"}});
  auto first = rig.web_client();
  auto second = rig.web_client();
  WebSocketClient third(rig.http_port());
  REQUIRE(third.accepted());
  auto refusal = third.read_json();
  REQUIRE(refusal);
  CHECK((*refusal)["type"] == "error");
  CHECK((*refusal)["error"].get<std::string>().find("too many clients: 2 already connected to port") == 0);
  CHECK(third.wait_closed());
  CHECK(third.close_code() == 1013);
  CHECK(first.read_json_type("sensor"));
  CHECK(second.read_json_type("sensor"));
}

TEST_CASE("the dashboard that set the robot moving goes away: the bridge stops the robot and tells the others") {
  Rig rig;
  auto watcher = rig.web_client();
  {
    auto driver = rig.web_client();
    driver.send_json({{"cmd", "move"}, {"speed", 30}, {"id", 1}});
    REQUIRE(driver.read_json_type("ok"));
    rig.expect_sim("rx 44 4D 53 1E");
    driver.close(1001);
    CHECK(driver.wait_closed());
  }
  rig.expect_sim("rx 44 53 54");
  auto stop = watcher.read_json_type("safety_stop");
  REQUIRE(stop);
  CHECK((*stop)["reason"].get<std::string>().find("which drove the robot, is gone") != std::string::npos);
  rig.expect_log("closed: disconnected (WebSocket close 1001)");
}

TEST_CASE("stopping the bridge closes its dashboards with 'going away'") {
  auto rig = std::make_unique<Rig>(RigOptions{.start_sim = false});
  auto client = rig->web_client();
  REQUIRE(rig->bridge().terminate() == 0);
  CHECK(client.wait_closed());
  CHECK(client.close_code() == 1001);
}

TEST_CASE("a WebSocket client stuck for longer than the stall timeout is closed - the others carry on") {
  Rig rig({.rate_hz = 250, .bridge_args = {"--stall-timeout-ms", "1000", "--queue-limit", "16"}});
  auto stalled = rig.web_client(2048);
  auto reader = rig.web_client();
  rig.expect_log("(websocket, 127.0.0.1:" + std::to_string(stalled.tcp().local_port()) + ") closed: not reading", 30s);
  // Once it reads again it finds the end of the connection behind its old data.
  CHECK(stalled.wait_closed(30s));
  // The reader carries on, and the bridge counted one client closed for stalling.
  for (int i = 0; i < 50; ++i) REQUIRE(reader.read_json_type("sensor"));
  reader.send_json({{"cmd", "stats"}, {"id", 1}});
  auto stats = reader.read_json_type("stats");
  REQUIRE(stats);
  CHECK((*stats)["clients"]["closed_stalled"] == 1);
  CHECK((*stats)["clients"]["connected"] == 1);
}
