// Replaying a recording (docs/recording.md, flockbridge --replay FILE): a
// run of each family's simulated robot is recorded while a JSON client
// reads it; then a bridge replays the file with no robot at all, and a JSON
// client gets the same messages in the same order, at the recorded pace.
// The families' own programs connect to a replay too: the 2014 Flockbot
// program on port 2005 and an SMR program on port 24901 get what such
// programs got in the run. Commands are refused, a stop is taken.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "e2e/driving.hpp"
#include "e2e/rig.hpp"
#include "flockbridge/protocol/mcap/reader.hpp"
#include "support/flockbot/legacy_client.hpp"
#include "support/recording_reader.hpp"
#include "support/smr/smr_client.hpp"
#include "support/temp_dir.hpp"

using namespace flockbridge::testing;
using nlohmann::json;
namespace mcap = flockbridge::protocol::mcap;
using flockbridge::protocol::Bytes;
using Clock = std::chrono::steady_clock;

namespace {

struct Recorded {
  std::filesystem::path file;
  json hello;                               ///< the recording's /hello
  std::vector<json> sensors;                ///< the /sensor messages in the file, in order
  std::vector<std::uint64_t> sensor_times;  ///< their recorded times (ns)
  std::vector<Bytes> native_stream;         ///< /native, every message's bytes, in order
};

Recorded read_back(const std::filesystem::path& file) {
  const mcap::Recording recording = read_recording(file);
  REQUIRE(recording.state == mcap::Reader::State::Ended);
  Recorded out{file, {}, {}, {}, {}};
  for (const mcap::Message& message : recording.messages) {
    const std::string& topic = recording.channels.at(message.channel_id).topic;
    if (topic == "/hello") {
      out.hello = json::parse(message.data);
    } else if (topic == "/sensor") {
      out.sensors.push_back(json::parse(message.data));
      out.sensor_times.push_back(message.log_time);
    } else if (topic == "/native") {
      out.native_stream.push_back(
          *flockbridge::protocol::from_hex(json::parse(message.data)["bytes"].get<std::string>()));
    }
  }
  return out;
}

/// A run of `robot`'s simulated robot, recorded from the start, while a JSON
/// client reads `sensors` sensor messages; the client's messages too.
Recorded record_run(const std::string& robot, int sensors, const TempDir& place, std::vector<json>* got = nullptr) {
  const std::filesystem::path directory = place.path() / robot;
  {
    RigOptions options;
    options.robot = robot;
    options.bridge_args = {"--record", directory.string()};
    Rig rig(options);
    TcpClient client = rig.json_client();
    for (int i = 0; i < sensors; ++i) {
      auto message = client.read_json_type("sensor");
      REQUIRE(message);
      if (got != nullptr) got->push_back(*message);
    }
  }  // the bridge stops: the file is complete
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(directory)) files.push_back(entry.path());
  REQUIRE(files.size() == 1);
  return read_back(files.front());
}

RigOptions replay_rig(const std::string& robot, const std::filesystem::path& file, std::vector<std::string> more = {}) {
  RigOptions options;
  options.robot = robot;
  options.start_sim = false;
  options.bridge_args = {"--replay", file.string()};
  options.bridge_args.insert(options.bridge_args.end(), more.begin(), more.end());
  return options;
}

struct Played {
  Clock::time_point connected;  ///< when the client began to connect
  json hello;
  std::vector<json> sensors;
  std::vector<Clock::time_point> received;
  json end;  ///< the link message that says the replay has ended
};

/// Everything a JSON client gets from a replay until it ends.
Played watch_replay(Rig& rig) {
  Played played{};
  played.connected = Clock::now();
  TcpClient client(rig.json_port());
  auto hello = client.read_json();
  REQUIRE(hello);
  played.hello = *hello;
  for (;;) {
    auto message = client.read_json(std::chrono::seconds(20));
    REQUIRE(message);
    const std::string type = message->value("type", "");
    if (type == "sensor") {
      played.received.push_back(Clock::now());
      played.sensors.push_back(*message);
    } else if (type == "link" && (*message)["state"] == "down") {
      played.end = *message;
      break;
    }
  }
  return played;
}

/// Where the replay's schedule is checked without timing the machine: the
/// replay begins when its first client connects, so a message recorded t
/// after the first sensor message can reach a client that connected at
/// `connected` no sooner than `connected + t / speed`. A loaded machine only
/// delays messages, never brings one early, so the check holds under any
/// load; and it fails at once if the replay sends faster than recorded (all at
/// once, or the speed's factor the wrong way). How closely the schedule is kept
/// is a figure, measured by record_bench (docs/performance.md).
/// Returns the messages that came early, with how early (ms).
std::vector<std::string> early_messages(const Played& played, const Recorded& recorded, double speed) {
  std::vector<std::string> early;
  for (std::size_t i = 0; i < played.received.size(); ++i) {
    const double got = std::chrono::duration<double, std::milli>(played.received[i] - played.connected).count();
    const double due = static_cast<double>(recorded.sensor_times[i] - recorded.sensor_times[0]) / 1e6 / speed;
    if (got < due) early.push_back("message " + std::to_string(i) + ": " + std::to_string(due - got) + " ms early");
  }
  return early;
}

/// The time from the replay's first sensor message to its last, against the
/// recording's, over the speed.
double played_seconds(const Played& played) {
  return std::chrono::duration<double>(played.received.back() - played.received.front()).count();
}
double recorded_seconds(const Recorded& recorded) {
  return static_cast<double>(recorded.sensor_times.back() - recorded.sensor_times.front()) / 1e9;
}

}  // namespace

TEST_CASE(
    "replay: a recorded run of each family gives a JSON client the same messages, in order, at the recorded pace") {
  for (const std::string& robot : robot_families()) {
    CAPTURE(robot);
    const TempDir place;
    std::vector<json> original;
    const Recorded recorded = record_run(robot, robot == "pioneer" ? 20 : 80, place, &original);
    REQUIRE(recorded.sensors.size() >= original.size());

    Rig rig(replay_rig(robot, recorded.file));
    const Played played = watch_replay(rig);
    // The recorded robot, said to be a replay of this file.
    CHECK(played.hello["robot"] == robot);
    CHECK(played.hello["replay"]["file"] == recorded.file.filename().string());
    CHECK(played.hello["replay"]["speed"] == 1.0);
    CHECK(played.hello["replay"]["recorded_at"].get<double>() ==
          doctest::Approx(static_cast<double>(recorded.sensor_times.front()) / 1e9).epsilon(1e-6));
    for (const char* key : {"robot", "model", "capabilities", "geometry"}) {
      CAPTURE(key);
      CHECK(played.hello[key] == recorded.hello[key]);
    }
    CHECK(played.hello.contains("simulated") == recorded.hello.contains("simulated"));
    CHECK(played.hello["geometry"]["ranges"].size() > 0);
    // Every recorded sensor message, as recorded, in order, none missing: the
    // replay began when this client came.
    REQUIRE(played.sensors.size() == recorded.sensors.size());
    CHECK(played.sensors == recorded.sensors);
    // And so the very messages the client of the run got.
    for (const json& message : original) {
      const auto seq = message["seq"].get<std::uint64_t>() - recorded.sensors.front()["seq"].get<std::uint64_t>();
      REQUIRE(seq < played.sensors.size());
      CHECK(played.sensors[seq] == message);
    }
    // At the recorded pace: none before its time in the recorded schedule,
    // and the run not stretched (a replay that ignored its schedule would
    // come at once, one far slower than recorded fails the second check).
    const std::vector<std::string> early = early_messages(played, recorded, 1.0);
    INFO(early.size(), " early, the first ", early.empty() ? std::string("-") : early.front());
    CHECK(early.empty());
    CHECK(played_seconds(played) < recorded_seconds(recorded) * 1.5 + 1.0);
    CHECK(played.end["reason"].get<std::string>().find("has ended") != std::string::npos);
    rig.expect_log("the replay of " + recorded.file.filename().string() + " has ended");
  }
}

TEST_CASE(
    "replay: --replay-speed 10 plays ten times as fast - commands are refused, a stop is answered ok, nothing "
    "recorded") {
  const TempDir place;
  const Recorded recorded = record_run("smr", 150, place);
  const std::filesystem::path again = place.path() / "again";
  Rig rig(replay_rig("smr", recorded.file, {"--replay-speed", "10", "--record", again.string()}));
  CHECK(rig.bridge().seen(ChildProcess::Stream::Stderr, "record.enabled: a replay is not recorded"));
  Played played{};
  played.connected = Clock::now();
  TcpClient client(rig.json_port());
  auto hello = client.read_json();
  REQUIRE(hello);
  CHECK((*hello)["replay"]["speed"] == 10.0);
  client.send(json({{"cmd", "drive"}, {"v_mm_s", 100}, {"id", 1}}).dump() + "\n");
  client.send(json({{"cmd", "reset_pose"}, {"id", 2}}).dump() + "\n");
  client.send(json({{"cmd", "stop"}, {"id", 3}}).dump() + "\n");
  client.send(json({{"cmd", "fly"}, {"id", 4}}).dump() + "\n");
  client.send(json({{"cmd", "record_start"}, {"id", 5}}).dump() + "\n");
  std::map<int, json> answers;
  for (;;) {
    auto message = client.read_json(std::chrono::seconds(20));
    REQUIRE(message);
    const std::string type = message->value("type", "");
    if (message->contains("id") && (type == "ok" || type == "error")) answers[(*message)["id"].get<int>()] = *message;
    if (type == "sensor") {
      played.received.push_back(Clock::now());
      played.sensors.push_back(*message);
    }
    if (type == "link" && (*message)["state"] == "down") break;
  }
  CHECK(played.sensors == recorded.sensors);
  // None before its time at ten times the pace, and the whole in well under
  // half the recorded time (a tenth, with room for a loaded machine): at the
  // recorded pace it would take all of it.
  const std::vector<std::string> early = early_messages(played, recorded, 10.0);
  INFO(early.size(), " early, the first ", early.empty() ? std::string("-") : early.front());
  CHECK(early.empty());
  CHECK(played_seconds(played) < recorded_seconds(recorded) / 2);
  // A recording cannot move: told so, with its own code; a stop it has done already.
  REQUIRE(answers.size() == 5);
  CHECK(answers[1]["code"] == "replay");
  CHECK(answers[1]["error"].get<std::string>().find("replays a recording") != std::string::npos);
  CHECK(answers[2]["code"] == "replay");
  CHECK(answers[3]["type"] == "ok");
  CHECK(answers[4]["code"] == "invalid");
  // A replay is not recorded again.
  CHECK(answers[5]["code"] == "replay");
  CHECK_FALSE(std::filesystem::exists(again));
}

TEST_CASE("replay: the 2014 Flockbot program on port 2005 gets the run's sensor packets, and dies on nothing") {
  const TempDir place;
  const Recorded recorded = record_run("flockbot", 100, place);
  Rig rig(replay_rig("flockbot", recorded.file));
  LegacyClient program(rig.port());
  // Its connection test, answered by the bridge; it starts the replay.
  REQUIRE(program.test_connection());
  program.register_sensors(0);
  program.move_speed(40);  // refused: a legacy program is told nothing it cannot parse
  // Its SP packets are the recorded ones: the port-2005 form of each reading.
  std::vector<std::string> packets;
  for (int i = 0; i < 40; ++i) {
    auto message = program.read_code("SP");
    REQUIRE_MESSAGE(message, program.death());
    packets.push_back(message->body);
  }
  CHECK_FALSE(program.dead());
  std::vector<std::string> stream;
  for (const Bytes& bytes : recorded.native_stream) stream.emplace_back(bytes.begin() + 1, bytes.end());
  const auto first = std::find(stream.begin(), stream.end(), packets.front());
  REQUIRE(first != stream.end());
  CHECK(std::equal(packets.begin(), packets.end(), first));
}

TEST_CASE("replay: an SMR program on port 24901 reads the run's periods, whole and in order") {
  const TempDir place;
  const Recorded recorded = record_run("smr", 120, place);
  Rig rig(replay_rig("smr", recorded.file));
  SmrClient program(rig.port());
  std::vector<SmrClient::State> reads;
  for (int i = 0; i < 30; ++i) {
    auto state = program.read();
    REQUIRE(state);
    reads.push_back(*state);
  }
  CHECK(program.violations().empty());
  // The recorded periods, read one after the other by the program: the
  // ticks and stamps of the run (each tick's reading was a sensor message).
  for (std::size_t i = 1; i < reads.size(); ++i) {
    CAPTURE(i);
    CHECK(reads[i].tick > reads[i - 1].tick);
    CHECK(reads[i].ts != reads[i - 1].ts);
  }
  REQUIRE_FALSE(recorded.sensors.empty());
  CAPTURE(recorded.sensors.front()["tick"]);
  CAPTURE(recorded.sensors.back()["tick"]);
  CAPTURE(recorded.sensors.size());
  for (const SmrClient::State& read : reads) {
    CAPTURE(read.tick);
    CAPTURE(read.ended_early);
    const auto found = std::find_if(recorded.sensors.begin(), recorded.sensors.end(),
                                    [&](const json& m) { return m["tick"] == read.tick; });
    // A period the modules left silent (a simulator held up under load)
    // ends early and makes no sensor message; every other one made one.
    if (found == recorded.sensors.end() && read.ended_early) continue;
    REQUIRE(found != recorded.sensors.end());
    CHECK((*found)["tick_ts_us"] == read.ts);
  }
  CHECK(program.disconnect());
}

TEST_CASE("replay: a Pioneer's replay opens no port for ARIA programs - a file that is no recording is refused") {
  const TempDir place;
  const Recorded recorded = record_run("pioneer", 10, place);
  {
    Rig rig(replay_rig("pioneer", recorded.file));
    CHECK(rig.port() == 0);
    CHECK(rig.json_port() != 0);
  }
  // Not a recording: the bridge says so and does not start.
  const std::filesystem::path junk = place.path() / "notes.mcap";
  std::ofstream(junk) << "not a recording\n";
  ChildProcess bridge({FLOCKBRIDGE_BIN, "--no-config", "--replay", junk.string(), "--json-port", "0"});
  CHECK(bridge.wait_exit() != 0);
  CHECK(bridge.wait_for(ChildProcess::Stream::Stderr, "cannot replay"));
}
