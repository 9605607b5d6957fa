// The client side, end to end: fan-out to many clients on both ports, bad
// and incomplete messages, throttling, clients that never read, and the
// limit on clients.
#include <doctest/doctest.h>

#include <poll.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "e2e/rig.hpp"

using namespace flockbridge::testing;
using Stream = ChildProcess::Stream;
using nlohmann::json;

namespace {

/// A sensor message's "seq", read from its line as the bridge writes it
/// ("type" first, then "seq") without parsing the rest: these readers take
/// every message of 100 clients, and must keep up with the bridge even in
/// the sanitizers' slow build, or the bridge rightly drops for them.
std::optional<long> sensor_seq(const std::string& line) {
  static constexpr std::string_view kHead = R"({"type":"sensor","seq":)";
  if (!line.starts_with(kHead)) return std::nullopt;
  return std::strtol(line.c_str() + kHead.size(), nullptr, 10);
}

/// Whether the sequence numbers follow one another, none missing.
bool contiguous(const std::vector<long>& seqs) {
  for (std::size_t i = 1; i < seqs.size(); ++i) {
    if (seqs[i] != seqs[i - 1] + 1) return false;
  }
  return true;
}

/// What one JSON client was sent: the sequence numbers of its sensor
/// messages, and before each, how many messages the bridge said it dropped
/// for the client since the one before (its `dropped` notices).
struct SensorRun {
  std::vector<long> seqs;
  std::vector<long> told;
  long pending_told = 0;

  [[nodiscard]] std::size_t size() const { return seqs.size(); }
  [[nodiscard]] bool empty() const { return seqs.empty(); }
  [[nodiscard]] long front() const { return seqs.front(); }
  [[nodiscard]] long back() const { return seqs.back(); }

  void take(const std::string& line) {
    if (const auto seq = sensor_seq(line)) {
      seqs.push_back(*seq);
      told.push_back(std::exchange(pending_told, 0));
    } else if (line.starts_with(R"({"type":"dropped")")) {
      pending_told += json::parse(line)["count"].get<long>();
    }
  }
  /// Whether every message was received, none dropped.
  [[nodiscard]] bool contiguous() const { return ::contiguous(seqs); }
  /// The bridge's promise to a client that falls behind (a machine too busy
  /// to let it read): a message is only ever missing when the client was
  /// told, before the next one, how many it lost. Never out of order.
  [[nodiscard]] bool every_gap_told() const {
    for (std::size_t i = 1; i < seqs.size(); ++i) {
      const long missing = seqs[i] - seqs[i - 1] - 1;
      if (missing < 0 || missing > told[i]) return false;
    }
    return true;
  }
};

/// Reads from every client into `runs` until `done` says each has enough, or
/// `limit` has passed.
template <typename Done>
void read_sensors(std::vector<TcpClient>& clients, std::vector<SensorRun>& runs, Done done,
                  std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  std::vector<pollfd> fds;
  fds.reserve(clients.size());
  for (auto& c : clients) fds.push_back({c.fd(), POLLIN, 0});
  for (;;) {
    bool all = true;
    for (std::size_t i = 0; i < clients.size(); ++i) {
      while (auto line = clients[i].read_line(0ms)) runs[i].take(*line);
      all = all && done(runs[i]);
    }
    if (all || std::chrono::steady_clock::now() > deadline) return;
    ::poll(fds.data(), fds.size(), 100);
  }
}

/// Reads from every client until each has `want` sensor messages, returning
/// what each JSON client saw.
std::vector<SensorRun> collect_json_sensors(std::vector<TcpClient>& clients, std::size_t want,
                                            std::chrono::seconds limit = 30s) {
  std::vector<SensorRun> runs(clients.size());
  read_sensors(
      clients, runs, [&](const SensorRun& run) { return run.size() >= want; }, limit);
  return runs;
}

/// Each client got at least `want` sensor messages, and every one, or was
/// told what it lost (SensorRun::every_gap_told); says how many fell behind.
void check_every_gap_told(const std::vector<SensorRun>& runs, std::size_t want) {
  int with_gaps = 0;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    CAPTURE(i);
    REQUIRE(runs[i].size() >= want);
    CHECK(runs[i].every_gap_told());
    if (!runs[i].contiguous()) ++with_gaps;
  }
  MESSAGE(with_gaps << " of " << runs.size() << " JSON clients fell behind and were told what they lost");
}

/// The clients' writes go through both of the bridge's paths: several a
/// system call (io_uring, where the kernel allows) and one send() each.
/// Returns the value of --client-io-uring for this run of the test.
std::string write_path() {
  std::string io_uring = "true";
  SUBCASE("several clients' writes a system call") {}
  SUBCASE("one send() a client") {
    io_uring = "false";
  }
  return io_uring;
}

/// The bridge said at start which path its writes take.
void check_write_path(Rig& rig, const std::string& io_uring) {
  REQUIRE(rig.bridge().wait_seen(Stream::Stderr, "client writes: "));
  std::string said;
  for (const auto& line : rig.bridge().lines(Stream::Stderr)) {
    if (line.find("client writes: ") != std::string::npos) said = line;
  }
  CAPTURE(said);
  if (io_uring == "false") {
    CHECK(said.find("one send() a client (io_uring is turned off") != std::string::npos);
  } else {
    CHECK((said.find("io_uring, up to 8 clients") != std::string::npos ||
           said.find("(io_uring refused: ") != std::string::npos));
  }
}

}  // namespace

TEST_CASE("sensor fan-out to 100 clients on each port: every one gets every packet, or is told what it lost") {
  const std::string io_uring = write_path();
  Rig rig({.rate_hz = 50, .bridge_args = {"--max-clients", "100", "--client-io-uring=" + io_uring}});
  check_write_path(rig, io_uring);
  std::vector<TcpClient> binary;
  std::vector<TcpClient> jsons;
  for (int i = 0; i < 100; ++i) {
    binary.emplace_back(rig.port());
    binary.back().send(bytes({6, 'S', 'S', 0, 0, 0, 0}));
    jsons.push_back(rig.json_client());
  }
  // On a quiet machine every client gets every packet. On a busy one (this
  // test's own readers starved of the processor) the bridge keeps the
  // latest for a client that is behind, and says how many it dropped: what
  // it promises, and what is checked.
  const auto runs = collect_json_sensors(jsons, 20);
  check_every_gap_told(runs, 20);
  // And every client gets every packet from its first on: each reads on to
  // the latest any of them has had (a busy machine's bridge may be writing
  // some clients a second behind others, without dropping anything).
  long latest = 0;
  for (const auto& run : runs) latest = std::max(latest, run.back());
  auto caught_up = runs;
  read_sensors(
      jsons, caught_up, [&](const SensorRun& run) { return run.back() >= latest; }, 30s);
  for (std::size_t i = 0; i < caught_up.size(); ++i) {
    CAPTURE(i);
    CHECK(caught_up[i].back() >= latest);
    CHECK(caught_up[i].every_gap_told());
  }

  for (std::size_t i = 0; i < binary.size(); ++i) {
    CAPTURE(i);
    for (int k = 0; k < 20; ++k) {
      auto message = binary[i].read_message_tag("SP");
      REQUIRE(message);
      CHECK(message->size() == 28);
    }
  }
  // 200 connections from one address in less than a minute: the first ten
  // are logged, the rest are summarised when the minute is over.
  const auto log = rig.bridge().lines(Stream::Stderr);
  const auto connected = std::count_if(log.begin(), log.end(),
                                       [](const std::string& l) { return l.find(") connected") != std::string::npos; });
  CHECK(connected >= 1);
  CHECK(connected <= 10);
  CHECK_FALSE(rig.bridge().seen(Stream::Stderr, "refused"));
}

namespace {

/// A class of 300 JSON clients and 50 programs on the native port, all
/// connecting at once, the JSON clients greeted.
struct ClassAtOnce {
  static constexpr int kJson = 300;
  static constexpr int kNative = 50;
  std::vector<TcpClient> jsons;
  std::vector<TcpClient> natives;

  explicit ClassAtOnce(Rig& rig) {
    for (int i = 0; i < kJson; ++i) {
      jsons.emplace_back(rig.json_port());
      if (i < kNative) natives.emplace_back(rig.port());
    }
    for (std::size_t i = 0; i < jsons.size(); ++i) {
      CAPTURE(i);
      REQUIRE(jsons[i].read_json_type("hello", 10s));
    }
  }
};

/// The bridge's stats once its count of clients under `key` is `expected`
/// (asked again and again, for up to 20 s).
json stats_once(TcpClient& asking, const char* key, int expected) {
  json stats = bridge_stats(asking);
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (stats["clients"][key] != expected && std::chrono::steady_clock::now() < deadline) {
    stats = bridge_stats(asking);
  }
  return stats;
}

}  // namespace

TEST_CASE("a class connecting at once is taken in a share at a time on both ports - every one is let in") {
  // Each loop turn accepts for a tenth of a millisecond, then leaves the
  // listeners paused until the loop has polled: a listener not resumed
  // would leave every client after the first share waiting for ever.
  Rig rig({.rate_hz = 50, .bridge_args = {"--max-clients", "1000"}});
  const ClassAtOnce in_class(rig);
  // The native ports' clients are greeted by nothing: the bridge's count
  // says when they are in (the two listeners take turns in no set order).
  TcpClient asking = rig.json_client();
  constexpr int kAll = ClassAtOnce::kJson + ClassAtOnce::kNative + 1;
  const json stats = stats_once(asking, "accepted", kAll);
  CHECK(stats["clients"]["accepted"] == kAll);
  CHECK(stats["clients"]["connected"] == kAll);
  CHECK(stats["clients"]["refused"] == 0);
}

TEST_CASE("a class leaving at once is ended a share at a time - every one is closed, the driver's stop first") {
  // Each loop turn ends departed clients for a tenth of a millisecond and
  // leaves the rest for the turns after the loop has polled: a departure
  // left waiting would keep its session (and a lease) for ever.
  Rig rig({.rate_hz = 50, .bridge_args = {"--max-clients", "1000"}});
  ClassAtOnce in_class(rig);
  TcpClient asking = rig.json_client();
  constexpr int kAll = ClassAtOnce::kJson + ClassAtOnce::kNative + 1;
  REQUIRE(stats_once(asking, "connected", kAll)["clients"]["connected"] == kAll);

  // The last JSON client drives, then everyone leaves together: some
  // finishing their sending (FIN), some vanishing (RST), the driver among them.
  in_class.jsons.back().send(R"({"cmd":"drive","v_mm_s":100,"w_deg_s":0,"id":1})"
                             "\n");
  rig.expect_sim("rx 44 4D 57");
  for (std::size_t i = 0; i < in_class.jsons.size(); i += 2) in_class.jsons[i].reset_on_close();
  in_class.jsons.clear();
  in_class.natives.clear();

  const json stats = stats_once(asking, "connected", 1);
  CHECK(stats["clients"]["connected"] == 1);
  CHECK(stats["clients"]["accepted"] == kAll);
  // The robot was stopped because the client moving it went away.
  rig.expect_sim("rx 44 53 54");
  rig.expect_log("which drove the robot, is gone; sent Stop");
  CHECK(bridge_stats(asking)["safety_stops"] == 1);
}

TEST_CASE("bad binary messages are answered with ERR and the connection stays open") {
  Rig rig({.bridge_args = {"--message-timeout-ms", "500"}});
  auto client = rig.extended_client();
  const std::vector<std::pair<std::string, std::string>> table{
      {bytes({3, 'D', 'X', 'Y'}), "ERRunknown command 'DXY'"},
      {bytes({4, 'D', 'M', 'S', 0x70}), "ERRmove: speed must be from -100 to 100, got 112"},
      {bytes({5, 'D', 'M', 'S', 1, 2}), "ERRmove (DMS) is 4 bytes long, got 5"},
      {bytes({0}), "ERRempty message (length byte 0)"},
      {bytes({7, 'R', 'T', 9, 'D', 'M', 'S', 1}), "ERRRT message says its payload is 9 bytes but carries 4"},
      {bytes({3, 'C', 'F', 'G'}), "ERRCFG is sent by the bridge from its configuration, not by clients"},
      {bytes({2, 'S', 'S'}), "ERRSS takes a 4-byte interval: 06 'S' 'S' r0 r1 r2 r3"},
  };
  for (const auto& [message, answer] : table) {
    const std::string& expected = answer;  // clang 14 cannot capture a structured binding
    CAPTURE(expected);
    client.send(message);
    auto reply = client.read_message_tag("ERR");
    REQUIRE(reply);
    CHECK(*reply == answer);
  }
  // The 2014 client's "hello": a length of 104 and four bytes. It is
  // discarded when the message timeout runs out, with a reason.
  client.send("hello");
  auto incomplete = client.read_message_tag("ERR");
  REQUIRE(incomplete);
  CHECK(incomplete->find("ERRincomplete message discarded: 5 bytes did not make a whole message within 500 ms") == 0);
  client.send(bytes({4, 'D', 'M', 'S', 0x0A}));
  rig.expect_sim("rx 44 4D 53 0A");
}

TEST_CASE("bad JSON lines are answered with an error object and the connection stays open") {
  Rig rig({.bridge_args = {"--message-timeout-ms", "500"}});
  auto client = rig.json_client();
  const std::vector<std::pair<std::string, json>> table{
      {"not json",
       {{"type", "error"},
        {"error", "not valid JSON; send one object per line, e.g. {\"cmd\":\"stop\"}"},
        {"code", "invalid"}}},
      {R"({"cmd":"fly","id":1})",
       {{"type", "error"}, {"id", 1}, {"error", "unknown command 'fly'"}, {"code", "invalid"}}},
      {R"({"cmd":"move","id":"m"})",
       {{"type", "error"}, {"id", "m"}, {"error", "move: needs 'speed'"}, {"code", "invalid"}}},
      {R"({"cmd":"camera_set","pos":101,"id":3})",
       {{"type", "error"},
        {"id", 3},
        {"error", "camera_set: pos must be from 0 to 100, got 101"},
        {"code", "invalid"}}},
      {R"({"cmd":"subscribe","interval_ms":"soon","id":4})",
       {{"type", "error"},
        {"id", 4},
        {"error", "subscribe: interval_ms must be a whole number of milliseconds from 0 to 3600000"},
        {"code", "invalid"}}},
      {std::string(5000, 'x'),
       {{"type", "error"}, {"error", "line longer than 4096 bytes; discarded"}, {"code", "invalid"}}},
  };
  for (const auto& [line, answer] : table) {
    const std::string expected = answer.dump();  // clang 14 cannot capture a structured binding
    CAPTURE(expected);
    client.send(line + "\n");
    auto reply = client.read_json_type("error");
    REQUIRE(reply);
    CHECK(*reply == answer);
  }
  client.send("{\"cmd\":\"stop\"");  // no line end
  auto incomplete = client.read_json_type("error");
  REQUIRE(incomplete);
  CHECK((*incomplete)["error"].get<std::string>().find("incomplete message discarded") == 0);
  client.send("{\"cmd\":\"claw_open\",\"id\":9}\n");
  auto ok = client.read_json_type("ok");
  REQUIRE(ok);
  CHECK((*ok)["id"] == 9);
}

TEST_CASE("subscribe throttles a client's sensor messages - unsubscribe stops them") {
  Rig rig({.rate_hz = 50});
  auto client = rig.json_client();
  client.send("{\"cmd\":\"subscribe\",\"interval_ms\":300,\"id\":1}\n");
  auto ok = client.read_json_type("ok");
  REQUIRE(ok);
  check_throttled(client, 0.3);

  // Binary: SF, then two refused commands; nothing may arrive between their ERRs.
  auto binary = rig.extended_client();
  binary.send(bytes({6, 'S', 'S', 0, 0, 0, 0}));
  REQUIRE(binary.read_message_tag("SP"));
  binary.send(bytes({2, 'S', 'F'}));
  binary.send(bytes({3, 'D', 'X', 'Y'}));
  REQUIRE(binary.read_message_tag("ERR"));
  binary.send(bytes({3, 'D', 'X', 'Y'}));
  auto next = binary.read_message();
  REQUIRE(next);
  CHECK(next->rfind("ERR", 0) == 0);
}

TEST_CASE(
    "a client that never reads loses old sensor messages - the others keep receiving every one, or are told what they "
    "lost") {
  const std::string io_uring = write_path();
  Rig rig({.rate_hz = 250, .bridge_args = {"--stall-timeout-ms", "60000", "--client-io-uring=" + io_uring}});
  check_write_path(rig, io_uring);
  auto stalled = rig.json_client(2048);
  std::vector<TcpClient> readers;
  readers.reserve(5);
  for (int i = 0; i < 5; ++i) readers.push_back(rig.json_client());
  // 750 packets (3 s at 250 Hz): far more than the stalled client's buffers hold.
  // Each reader gets every packet, or, where a busy machine held the test's
  // own reading up past that reader's buffers, is told what it lost: the
  // stalled client's backlog is its own and takes nothing from the others.
  const auto seqs = collect_json_sensors(readers, 750, 60s);
  check_every_gap_told(seqs, 750);
  // Now the stalled client reads: it is told how many it lost, and is
  // given the latest values, not a backlog.
  auto dropped = stalled.read_json_type("dropped");
  REQUIRE(dropped);
  CHECK((*dropped)["count"].get<long>() > 0);
  auto fresh = stalled.read_json_type("sensor");
  REQUIRE(fresh);
  CHECK(fresh->at("seq").get<long>() > seqs[0].front());
  CHECK_FALSE(rig.bridge().seen(Stream::Stderr, "closed: not reading"));
}

TEST_CASE("sensor packets that arrive bunched in one read reach every client - all of them, in order") {
  // A slow sensor rate, so that the burst is what the clients see next.
  Rig rig({.rate_hz = 2});
  std::vector<TcpClient> jsons;
  jsons.reserve(3);
  for (int i = 0; i < 3; ++i) jsons.push_back(rig.json_client());
  const auto before = collect_json_sensors(jsons, 1);
  rig.sim_command("burst 8");
  for (std::size_t i = 0; i < jsons.size(); ++i) {
    CAPTURE(i);
    std::vector<long> seqs;
    while (seqs.size() < 8) {
      auto message = jsons[i].read_json();
      REQUIRE(message);
      // Nothing was dropped on the way: the bridge held the burst back
      // and wrote it whole, it did not keep only the latest.
      CHECK(message->at("type") != "dropped");
      if (message->at("type") == "sensor") seqs.push_back(message->at("seq").get<long>());
    }
    CHECK(seqs.front() > before[i].back());
    CHECK(contiguous(seqs));
  }
}

TEST_CASE("a client stuck for longer than the stall timeout is closed - the others carry on") {
  const std::string io_uring = write_path();
  Rig rig({.rate_hz = 250,
           .bridge_args = {"--stall-timeout-ms", "1000", "--queue-limit", "16", "--client-io-uring=" + io_uring}});
  check_write_path(rig, io_uring);
  auto stalled = rig.json_client(2048);
  auto reader = rig.json_client();
  rig.expect_log("closed: not reading", 30s);
  CHECK(stalled.wait_closed(30s));
  std::vector<TcpClient> readers;
  readers.push_back(std::move(reader));
  const auto seqs = collect_json_sensors(readers, 50);
  CHECK(seqs[0].size() >= 50);
}

TEST_CASE("clients beyond the limit are told so and closed - the others are not disturbed") {
  Rig rig({.bridge_args = {"--max-clients", "2"}});
  auto first = rig.json_client();
  auto second = rig.json_client();
  TcpClient third(rig.json_port());
  auto refusal = third.read_json();
  REQUIRE(refusal);
  CHECK((*refusal)["type"] == "error");
  CHECK((*refusal)["error"].get<std::string>().find("too many clients: 2 already connected to port") == 0);
  CHECK(third.wait_closed());

  auto b1 = rig.binary_client();
  auto b2 = rig.binary_client();
  // Refused: a port-2005 client has not asked for ERR, so it is closed without a word.
  TcpClient b3(rig.port());
  CHECK(b3.wait_closed());
  CHECK(b3.buffer().empty());
  rig.expect_log("too many clients: 2 already connected to port " + std::to_string(rig.port()));

  CHECK(first.read_json_type("sensor"));
  CHECK(second.read_json_type("sensor"));
}

TEST_CASE("a client that sends its commands and ends its side still gets every answer") {
  Rig rig;
  auto client = rig.json_client();
  client.send("{\"cmd\":\"claw_open\",\"id\":1}\n{\"cmd\":\"claw_close\",\"id\":2}\n{\"cmd\":\"fly\",\"id\":3}\n");
  client.shutdown_send();
  std::map<int, std::string> answers;
  while (auto message = client.read_json()) {
    if (message->contains("id")) answers[(*message)["id"].get<int>()] = (*message)["type"];
  }
  CHECK(answers == std::map<int, std::string>{{1, "ok"}, {2, "ok"}, {3, "error"}});
  CHECK(client.wait_closed());
  rig.expect_sim("rx 44 47 43");
}

TEST_CASE("drive in mm/s and deg/s becomes the Flockbot's wheel speeds, at 1 cm/s a step out of the box") {
  Rig rig;
  auto client = rig.json_client();
  // 200 mm/s straight on: both wheels at 20 (D M W 14 14).
  client.send("{\"cmd\":\"drive\",\"v_mm_s\":200,\"w_deg_s\":0,\"id\":1}\n");
  rig.expect_sim("rx 44 4D 57 14 14");
  // Turning left at 57.3 deg/s (1 rad/s) on a 100 mm base: the wheels 50 mm/s apart.
  client.send("{\"cmd\":\"drive\",\"v_mm_s\":100,\"w_deg_s\":57.29578}\n");
  rig.expect_sim("rx 44 4D 57 05 0F");
  // Its arguments are read as every family's are, in the same words.
  client.send("{\"cmd\":\"drive\",\"v_mm_s\":1500,\"id\":2}\n");
  auto refused = client.read_json_type("error");
  REQUIRE(refused);
  CHECK((*refused)["error"] == "drive: v_mm_s must be from -1000 to 1000, got 1500");
  // Each alone within a wheel's reach, together beyond it: 900 mm/s and 4 rad/s.
  client.send("{\"cmd\":\"drive\",\"v_mm_s\":900,\"w_deg_s\":229.2,\"id\":3}\n");
  refused = client.read_json_type("error");
  REQUIRE(refused);
  CHECK((*refused)["error"] == "drive: too fast for this Flockbot: a wheel would need more than 1000 mm/s");
}

TEST_CASE("drive is refused, saying what to configure, while a Flockbot's wheel speed is set unknown") {
  Rig rig(RigOptions{.bridge_args = {"--wheel-mm-s-per-percent", "0"}});
  auto client = rig.json_client();
  client.send("{\"cmd\":\"drive\",\"v_mm_s\":100,\"id\":1}\n");
  auto refused = client.read_json_type("error");
  REQUIRE(refused);
  CHECK((*refused)["error"].get<std::string>().find("flockbot.units.wheel_mm_s_per_percent") != std::string::npos);
}
