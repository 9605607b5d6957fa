// A hostile classmate on the class's network: every listener listens
// exactly where its setting says; a flood of stops from someone who may
// not drive takes no place from the driver's commands; JSON nested deeper
// than any command needs is refused with a clear error, whatever the line
// length allows.
#include <arpa/inet.h>
#include <dirent.h>
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "e2e/driving.hpp"
#include "e2e/rig.hpp"
#include "support/temp_dir.hpp"
#include "support/web_client.hpp"

using namespace flockbridge::testing;
using nlohmann::json;
using Stream = ChildProcess::Stream;

namespace {

/// The socket inodes among a process's open files.
std::set<std::string> socket_inodes(pid_t pid) {
  std::set<std::string> inodes;
  const std::string folder = "/proc/" + std::to_string(pid) + "/fd";
  DIR* dir = opendir(folder.c_str());
  REQUIRE(dir != nullptr);
  while (const dirent* entry = readdir(dir)) {
    std::array<char, 64> target{};
    const std::string path = folder + "/" + entry->d_name;
    const ssize_t length = readlink(path.c_str(), target.data(), target.size() - 1);
    if (length <= 0) continue;
    const std::string link(target.data(), static_cast<std::size_t>(length));
    if (link.rfind("socket:[", 0) == 0) inodes.insert(link.substr(8, link.size() - 9));
  }
  closedir(dir);
  return inodes;
}

/// An address of /proc/net/tcp or tcp6 ("0100007F:1F90"; IPv6 as four
/// 32-bit words in this machine's byte order) as "127.0.0.1:8080" or "[::1]:8080".
std::string socket_address(const std::string& field, bool ipv6) {
  const std::size_t colon = field.find(':');
  const std::string hex = field.substr(0, colon);
  const auto port = std::stoul(field.substr(colon + 1), nullptr, 16);
  std::array<unsigned char, 16> bytes{};
  for (std::size_t word = 0; word < hex.size() / 8; ++word) {
    const auto value = static_cast<std::uint32_t>(std::stoul(hex.substr(word * 8, 8), nullptr, 16));
    std::memcpy(bytes.data() + word * 4, &value, 4);
  }
  std::array<char, INET6_ADDRSTRLEN> text{};
  inet_ntop(ipv6 ? AF_INET6 : AF_INET, bytes.data(), text.data(), text.size());
  return ipv6 ? "[" + std::string(text.data()) + "]:" + std::to_string(port)
              : std::string(text.data()) + ":" + std::to_string(port);
}

/// Where a process's TCP sockets listen, as the kernel says.
std::set<std::string> listening_addresses(pid_t pid) {
  const std::set<std::string> inodes = socket_inodes(pid);
  std::set<std::string> addresses;
  for (const bool ipv6 : {false, true}) {
    std::ifstream table("/proc/" + std::to_string(pid) + "/net/" + (ipv6 ? "tcp6" : "tcp"));
    std::string line;
    std::getline(table, line);  // the heading
    while (std::getline(table, line)) {
      std::istringstream fields(line);
      std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
      fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >> timeout >> inode;
      if (state == "0A" && inodes.count(inode) != 0) addresses.insert(socket_address(local, ipv6));
    }
  }
  return addresses;
}

std::string with_port(const std::string& address, std::uint16_t port) {
  return (address.find(':') != std::string::npos ? "[" + address + "]" : address) + ":" + std::to_string(port);
}

}  // namespace

TEST_CASE("every listener listens exactly where --bind says, IPv4 and IPv6, and nowhere else") {
  for (const std::string bind : {"127.0.0.1", "::1", "0.0.0.0", "::"}) {
    CAPTURE(bind);
    RigOptions options;
    options.bind = bind;
    options.bridge_args = {"--foxglove"};
    Rig rig(options);
    REQUIRE(rig.foxglove_port() != 0);
    const std::set<std::string> expected{with_port(bind, rig.port()), with_port(bind, rig.json_port()),
                                         with_port(bind, rig.http_port()), with_port(bind, rig.foxglove_port())};
    CHECK(listening_addresses(rig.bridge().pid()) == expected);
  }
}

namespace {

constexpr const char* kPin = "[access]\ndriver_pin = \"4711\"\n";

/// The answer to the command with this id, skipping the rest.
json answer_to(TcpClient& client, const json& id) {
  for (;;) {
    auto message = client.read_json(10s);
    REQUIRE_MESSAGE(message, "no answer to " << id.dump());
    if (message->contains("id") && (*message)["id"] == id) return *message;
  }
}

}  // namespace

TEST_CASE("a flood of stops from a viewer takes no place from the driver's commands, and no stop is refused") {
  for (const std::string& family : robot_families()) {
    CAPTURE(family);
    RigOptions options;
    options.robot = family;
    options.config = kPin;
    Rig rig(options);
    TcpClient driver(rig.json_port());
    driver.send(R"({"cmd":"unsubscribe","id":"quiet"})" "\n");
    CHECK(answer_to(driver, "quiet")["type"] == "ok");
    driver.send(R"({"cmd":"auth","pin":"4711","id":"pin"})" "\n");
    REQUIRE(answer_to(driver, "pin")["type"] == "ok");
    TcpClient viewer(rig.json_port());
    viewer.send(R"({"cmd":"unsubscribe","id":"quiet"})" "\n");
    CHECK(answer_to(viewer, "quiet")["type"] == "ok");

    // Between each of the driver's commands, 200 stops from the viewer,
    // written at once: thousands of stops a second, none waited for.
    constexpr int kRounds = 20;
    constexpr int kStopsEach = 200;
    int sent = 0;
    int moves_taken = 0;
    for (int round = 0; round < kRounds; ++round) {
      std::string flood;
      for (int i = 0; i < kStopsEach; ++i) flood += R"({"cmd":"stop","id":)" + std::to_string(sent++) + "}\n";
      viewer.send(flood);
      json move = common_drive();
      move["id"] = "move " + std::to_string(round);
      driver.send(move.dump() + "\n");
      // Answered, and never for want of room: a move may still meet a stop
      // that came first in its bus period (an SMR's), which wins it.
      const json moved = answer_to(driver, move["id"]);
      if (moved["type"] == "ok") {
        ++moves_taken;
      } else {
        CHECK_MESSAGE(moved["code"] != "queue_full", moved.dump());
        CHECK_MESSAGE(moved["code"] != "rate_limited", moved.dump());
      }
    }
    MESSAGE(family << ": " << moves_taken << " of " << kRounds << " moves taken, between floods of stops");
    driver.send(R"({"cmd":"stop","id":"own stop"})" "\n");
    const json stopped = answer_to(driver, "own stop");
    CHECK_MESSAGE(stopped["type"] == "ok", stopped.dump());
    // Every one of the viewer's stops is answered, and none refused.
    int answered = 0;
    int refused = 0;
    while (answered < sent) {
      auto message = viewer.read_json(10s);
      REQUIRE_MESSAGE(message, answered << " of " << sent << " stops answered");
      if (!message->contains("id") || !(*message)["id"].is_number()) continue;
      ++answered;
      if ((*message)["type"] != "ok") {
        if (++refused == 1) MESSAGE("refused: " << message->dump());
      }
    }
    CHECK(refused == 0);
    // A stop to a robot that has taken the last one: answered at once.
    viewer.send(R"({"cmd":"stop","id":"standing"})" "\n");
    CHECK(answer_to(viewer, "standing")["type"] == "ok");
  }
}

TEST_CASE("JSON nested 80,000 deep is refused with a clear error, whatever --max-line allows, and the bridge serves on") {
  RigOptions options;
  options.bridge_args = {"--max-line", "1048576"};
  Rig rig(options);
  TcpClient client(rig.json_port());
  client.send(R"({"cmd":"unsubscribe","id":"quiet"})" "\n");
  CHECK(answer_to(client, "quiet")["type"] == "ok");
  client.send(R"({"cmd":"stop","id":)" + std::string(80000, '[') + std::string(80000, ']') + "}\n");
  auto refused = client.read_json(10s);
  REQUIRE(refused);
  CHECK((*refused)["type"] == "error");
  CHECK((*refused)["id"].is_null());
  CHECK((*refused)["error"].get<std::string>().find("nested deeper than 32") != std::string::npos);
  // The same client, and everyone else, goes on.
  client.send(R"({"cmd":"stop","id":[[["deep enough"]]]})" "\n");
  CHECK(answer_to(client, json::parse(R"([[["deep enough"]]])"))["type"] == "ok");
  TcpClient other(rig.json_port());
  other.send(R"({"cmd":"stats","id":"alive"})" "\n");
  CHECK(answer_to(other, "alive")["type"] == "stats");
}

namespace {

/// Lines of the bridge's log that contain `needle`.
std::size_t log_lines_with(Rig& rig, std::string_view needle) {
  const auto lines = rig.bridge().lines(Stream::Stderr);
  return static_cast<std::size_t>(
      std::count_if(lines.begin(), lines.end(), [&](const std::string& l) { return l.find(needle) != std::string::npos; }));
}

}  // namespace

TEST_CASE("churning connections and refused WebSockets from one address or hundreds cannot flood the log") {
  Rig rig(RigOptions{});
  const auto started = std::chrono::steady_clock::now();
  TcpClient watcher = rig.json_client();
  // The watcher's own line is in the log before the count starts.
  rig.expect_log("(json, 127.0.0.1:");
  const std::size_t before = rig.bridge().lines(Stream::Stderr).size();
  // One address: 300 connections opened and closed at once.
  for (int i = 0; i < 300; ++i) TcpClient churn(rig.json_port());
  // Another: 200 WebSockets from a page of elsewhere, each refused.
  {
    const ConnectFrom other("127.0.0.2");
    for (int i = 0; i < 200; ++i) CHECK_FALSE(WebSocketClient(rig.http_port(), "/ws", 0, "http://evil.example").accepted());
  }
  // Hundreds of addresses: a connection from each.
  for (int i = 0; i < 400; ++i) {
    const ConnectFrom each("127.0." + std::to_string(10 + i / 250) + "." + std::to_string(1 + i % 250));
    TcpClient churn(rig.json_port());
  }
  // The bridge has seen them all (its answer to the watcher comes after
  // their connections in its loop), and serves on.
  watcher.send(R"({"cmd":"stop","id":"after"})" "\n");
  for (;;) {
    auto message = watcher.read_json(10s);
    REQUIRE_MESSAGE(message, "the watcher's stop was answered");
    if (message->contains("id") && (*message)["id"] == "after") {
      CHECK((*message)["type"] == "ok");
      break;
    }
  }
  REQUIRE(read_until(10s, [&](auto left) { return watcher.read_json(left); },
                     [](const json& m) { return m["type"] == "sensor"; }));

  // Ten lines of a cause a minute: the rest is summarised when it is over.
  CHECK(log_lines_with(rig, "(json, 127.0.0.1:") <= 10);
  CHECK(log_lines_with(rig, "refused a WebSocket from 127.0.0.2") <= 10);
  // And every client together, whatever its address: a budget of 120 lines
  // at once, two a second after.
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const std::size_t written = rig.bridge().lines(Stream::Stderr).size() - before;
  MESSAGE(written << " log lines about 900 connections in " << seconds << " s");
  CHECK(static_cast<double>(written) <= 120 + 2 * seconds + 2);
  // Nothing else speaks for them: libwebsockets' own line about each
  // refusal is not in the log (it would be a second line a refusal).
  CHECK(log_lines_with(rig, "User code denied") == 0);
}

namespace {

/// A client's first message: its hello, or the refusal that comes instead.
json first_message(TcpClient& client) {
  auto message = client.read_json(10s);
  REQUIRE_MESSAGE(message, "nothing came to a new client");
  return *message;
}

/// Whether the server ends a connection that has sent `bytes` (maybe
/// nothing) within `within`.
bool closed_within(std::uint16_t port, const std::string& bytes, std::chrono::seconds within) {
  TcpClient client(port);
  if (!bytes.empty()) client.send(bytes);
  return client.wait_closed(within);
}

}  // namespace

TEST_CASE("one computer cannot take every client slot: each has a share, and the robot's own programs have room") {
  Rig rig(RigOptions{});  // 32 clients a port; 16 connections a computer
  std::vector<TcpClient> first;
  {
    const ConnectFrom from("127.0.5.5");
    for (int i = 0; i < 16; ++i) {
      first.emplace_back(rig.json_port());
      REQUIRE(first_message(first.back())["type"] == "hello");
    }
    TcpClient one_more(rig.json_port());
    const json refused = first_message(one_more);
    CHECK(refused["type"] == "error");
    CHECK(refused["error"].get<std::string>().starts_with("too many connections from 127.0.5.5: 16 already"));
    CHECK(one_more.wait_closed());
    // Its share is over every port together: the web server hangs up on it.
    CHECK(closed_within(rig.http_port(), "", 5s));
  }
  rig.expect_log("refused a connection from 127.0.5.5:");
  std::vector<TcpClient> second;
  {
    // Another computer fills the port, but for the robot's own four slots.
    const ConnectFrom from("127.0.5.6");
    for (int i = 0; i < 12; ++i) {
      second.emplace_back(rig.json_port());
      REQUIRE(first_message(second.back())["type"] == "hello");
    }
    TcpClient one_more(rig.json_port());
    const json refused = first_message(one_more);
    CHECK(refused["type"] == "error");
    CHECK(refused["error"].get<std::string>().find("4 more for the robot's own programs") != std::string::npos);
  }
  // A program on the robot still connects, and the dashboard is served.
  TcpClient local = rig.json_client();
  const auto page = http_get(rig.http_port(), "/");
  REQUIRE(page);
  CHECK(page->status == 200);
  // The first computer's slots come back as its connections close.
  first.clear();
  const ConnectFrom from("127.0.5.5");
  bool served = false;
  for (int attempt = 0; attempt < 50 && !served; ++attempt) {
    TcpClient again(rig.json_port());
    served = first_message(again)["type"] == "hello";
  }
  CHECK(served);
}

TEST_CASE("a connection that says nothing, or leaves its request or TLS handshake half done, is closed within seconds") {
  TempDir folder;
  const std::string cert = (folder / "cert.pem").string();
  const std::string key = (folder / "key.pem").string();
  ChildProcess openssl({"openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                        "-nodes", "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=127.0.0.1"},
                       {}, ChildProcess::Program::System);
  REQUIRE(openssl.wait_exit() == 0);
  RigOptions plain_options;
  plain_options.start_sim = false;
  RigOptions tls_options = plain_options;
  tls_options.bridge_args = {"--http-tls-cert", cert, "--http-tls-key", key};
  Rig plain(plain_options);
  Rig tls(tls_options);
  // All at once: each has 5 s to say what it wants, and lws's timers go by whole seconds.
  TcpClient plain_silent(plain.http_port());
  TcpClient plain_unfinished(plain.http_port());
  plain_unfinished.send("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n");  // no end of headers
  TcpClient tls_silent(tls.http_port());
  TcpClient tls_unfinished(tls.http_port());
  tls_unfinished.send(std::string("\x16\x03\x01\x02\x00", 5));  // a ClientHello begun
  CHECK(plain_silent.wait_closed(8s));
  CHECK(plain_unfinished.wait_closed(8s));
  CHECK(tls_silent.wait_closed(8s));
  CHECK(tls_unfinished.wait_closed(8s));
}

TEST_CASE("only what the bridge serves is served: the Foxglove port wants its subprotocol, and no upgrade but WebSocket") {
  RigOptions options;
  options.start_sim = false;
  options.bridge_args = {"--foxglove"};
  Rig rig(options);
  CHECK_FALSE(WebSocketClient(rig.foxglove_port(), "/").accepted());
  CHECK_FALSE(WebSocketClient(rig.foxglove_port(), "/", 0, {}, "something.else").accepted());
  const WebSocketClient viewer(rig.foxglove_port(), "/", 0, {}, "foxglove.websocket.v1");
  CHECK(viewer.accepted());
  // The dashboard's browsers name no subprotocol, and need none.
  CHECK(WebSocketClient(rig.http_port()).accepted());

  // An upgrade to cleartext HTTP/2 (RFC 7540 3.2) is not taken.
  TcpClient h2c(rig.http_port());
  h2c.send("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n"
           "HTTP2-Settings: AAMAAABkAAQAAP__\r\n\r\n");
  CHECK(h2c.wait_closed(10s));
  CHECK_MESSAGE(h2c.buffer().find("101") == std::string::npos, h2c.buffer());
}

TEST_CASE("a full port keeps room for the teacher: a newcomer waits 10 s for the teacher's secret, and a stop is taken") {
  RigOptions options;
  options.config = "[access]\nteacher_secret = \"chalk-and-cheese-42\"\n";
  options.bridge_args = {"--max-clients", "2"};
  Rig rig(options);
  TcpClient first = rig.json_client();
  TcpClient second = rig.json_client();
  // The port is full: the teacher's room takes two more, for 10 s each.
  TcpClient teacher(rig.json_port());
  CHECK(first_message(teacher)["type"] == "hello");
  const json full = first_message(teacher);
  CHECK(full["type"] == "error");
  CHECK(full["error"].get<std::string>().find("only the teacher may come in now") != std::string::npos);
  TcpClient waiting(rig.json_port());
  CHECK(first_message(waiting)["type"] == "hello");
  TcpClient refused(rig.json_port());
  const json beyond = first_message(refused);
  CHECK(beyond["type"] == "error");
  CHECK(beyond["error"].get<std::string>().find("try again later") != std::string::npos);
  CHECK(refused.wait_closed());

  // In the room: nothing of the robot's, only the secret lets it in, and a stop is never refused.
  teacher.send(R"({"cmd":"subscribe","id":"sub"})" "\n");
  CHECK(answer_to(teacher, "sub")["code"] == "denied");
  teacher.send(R"({"cmd":"stop","id":"stop"})" "\n");
  CHECK(answer_to(teacher, "stop")["type"] == "ok");
  teacher.send(R"({"cmd":"auth","teacher":"chalk-and-cheese-42","id":"in"})" "\n");
  CHECK(answer_to(teacher, "in")["role"] == "teacher");
  REQUIRE(read_until(10s, [&](auto left) { return teacher.read_json(left); },
                     [](const json& m) { return m["type"] == "sensor"; }));
  // Who did not give it is closed once its 10 s are over.
  CHECK(waiting.wait_closed(15s));
  rig.expect_log("the teacher's secret did not come");
}
