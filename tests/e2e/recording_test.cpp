// Recording a run (docs/recording.md): who may start and stop it, what the
// clients are told (JSON clients a "recording" message; the 2014 student
// program on port 2005 nothing it cannot parse), what the file holds, read
// back with the project's MCAP reader; and a disk that refuses the
// recording (a file size limit, EFBIG), which costs the recording and never
// the clients. @mcap/core reads the files too: tests/browser/recording.test.mjs.
#include <doctest/doctest.h>
#include <sys/resource.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "e2e/rig.hpp"
#include "flockbridge/protocol/mcap/reader.hpp"
#include "support/flockbot/legacy_client.hpp"
#include "support/recording_reader.hpp"
#include "support/temp_dir.hpp"

using namespace flockbridge::testing;
using nlohmann::json;
namespace mcap = flockbridge::protocol::mcap;

namespace {

std::vector<std::filesystem::path> recordings(const std::filesystem::path& directory) {
  std::vector<std::filesystem::path> found;
  if (!std::filesystem::exists(directory)) return found;
  for (const auto& entry : std::filesystem::directory_iterator(directory)) {
    if (entry.path().extension() == ".mcap") found.push_back(entry.path());
  }
  std::sort(found.begin(), found.end());
  return found;
}

/// The messages of one topic, as JSON.
std::vector<json> on_topic(const mcap::Recording& recording, const std::string& topic) {
  std::vector<json> out;
  for (const mcap::Message& message : recording.messages) {
    if (recording.channels.at(message.channel_id).topic == topic) out.push_back(json::parse(message.data));
  }
  return out;
}

/// The answer to the command with this id, skipping everything else.
json answer_to(TcpClient& client, int id) {
  for (;;) {
    auto message = client.read_json();
    REQUIRE(message);
    if (message->value("id", json()) == id) return *message;
  }
}

}  // namespace

TEST_CASE(
    "recording: a driver starts and stops it, a viewer may not - JSON clients are told, the 2014 program is not") {
  const TempDir place;
  const std::filesystem::path directory = place.path() / "recordings";
  Rig rig({.config = "[access]\ndriver_pin = \"4711\"\nnative_port_mode = \"open\"\n[record]\ndirectory = \"" +
                     directory.string() + "\"\n"});
  LegacyClient student(rig.port());
  REQUIRE_MESSAGE(student.test_connection(), student.death());
  student.register_sensors(0);
  TcpClient client(rig.json_port());
  const auto hello = client.read_json_type("hello");
  REQUIRE(hello);
  const int me = (*hello)["client"].get<int>();

  client.send(R"({"cmd":"record_start","id":1})"
              "\n");
  const json refused = answer_to(client, 1);
  CHECK(refused["type"] == "error");
  CHECK(refused["code"] == "denied");
  CHECK(recordings(directory).empty());

  client.send(R"({"cmd":"auth","pin":"4711","id":2})"
              "\n");
  CHECK(answer_to(client, 2)["type"] == "ok");
  client.send(R"({"cmd":"record_start","id":3})"
              "\n");
  CHECK(answer_to(client, 3)["type"] == "ok");
  const auto started = client.read_json_type("recording");
  REQUIRE(started);
  CHECK((*started)["active"] == true);
  CHECK((*started)["by"].get<std::string>().find("client " + std::to_string(me) + " ") == 0);
  CHECK((*started)["directory"] == directory.string());
  rig.expect_log("recording into " + directory.string());

  // The program on port 2005 drives on and hears nothing new.
  for (int i = 0; i < 5; ++i) REQUIRE_MESSAGE(student.read_code("SP"), "no sensor message: " << student.death());
  student.move_speed(20);
  rig.expect_sim("rx 44 4D 53 14");
  student.stop();
  rig.expect_sim("rx 44 53 54");
  REQUIRE_MESSAGE(student.read_code("SP"), student.death());

  client.send(R"({"cmd":"record_stop","id":4})"
              "\n");
  const auto stopped = client.read_json_type("recording");
  REQUIRE(stopped);
  CHECK((*stopped)["active"] == false);
  rig.expect_log("is complete");
  CHECK(student.death().empty());

  const auto files = recordings(directory);
  REQUIRE(files.size() == 1);
  const mcap::Recording recording = read_recording(files[0]);
  CHECK(recording.state == mcap::Reader::State::Ended);
  CHECK(recording.error.empty());
  REQUIRE(recording.metadata.size() == 1);
  CHECK(recording.metadata[0].values.at("family") == "flockbot");
  CHECK(recording.metadata[0].values.at("session") == (*hello)["session"]);
  const auto events = on_topic(recording, "/recording");
  REQUIRE(events.size() == 2);
  CHECK(events[0]["event"] == "started");
  CHECK(events[1]["event"] == "stopped");
  CHECK(events[1]["by"].get<std::string>().find("client " + std::to_string(me) + " ") == 0);
  // The student's commands, with who sent them, as the bytes that went to the Uno.
  std::vector<std::string> from_student;
  for (const json& command : on_topic(recording, "/command")) {
    if (command["kind"] == "binary") from_student.push_back(command["bytes"]);
    CHECK(command.contains("peer"));
  }
  CHECK(from_student == std::vector<std::string>{"44 4D 53 14", "44 53 54"});
  CHECK(on_topic(recording, "/sensor").size() >= 6);
}

TEST_CASE("recording: a directory the bridge cannot write is refused with the reason, and nothing else changes") {
  const TempDir place;
  std::ofstream(place.path() / "a-file") << "not a directory\n";
  const std::filesystem::path directory = place.path() / "a-file" / "recordings";
  Rig rig({.config = "[record]\ndirectory = \"" + directory.string() + "\"\n"});
  auto client = rig.json_client();
  client.send(R"({"cmd":"record_start","id":1})"
              "\n");
  const json refused = answer_to(client, 1);
  CHECK(refused["type"] == "error");
  CHECK(refused["error"].get<std::string>().find("cannot record into " + directory.string()) == 0);
  client.send(R"({"cmd":"stats","id":2})"
              "\n");
  const auto stats = client.read_json_type("stats");
  REQUIRE(stats);
  CHECK((*stats)["recording"]["active"] == false);
  CHECK(client.read_json_type("sensor"));
}

TEST_CASE("recording: a disk that refuses the recording costs the recording, never the clients") {
  const TempDir place;
  const std::filesystem::path directory = place.path() / "recordings";
  // The bridge (and only it: the limit is put back at once) may write files
  // of 24 kB at most: its first second fits, then every write is EFBIG, as
  // on a disk that is full.
  rlimit before{};
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &before) == 0);
  rlimit small = before;
  small.rlim_cur = rlim_t{24} * 1024;
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
  std::optional<Rig> rig;
  try {
    rig.emplace(RigOptions{.rate_hz = 100, .bridge_args = {"--record", directory.string()}});
  } catch (...) {
    ::setrlimit(RLIMIT_FSIZE, &before);
    throw;
  }
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &before) == 0);

  auto client = rig->json_client();
  const std::string failed = rig->expect_log("recording: cannot write", std::chrono::seconds(20));
  CHECK(failed.find("File too large") != std::string::npos);
  CHECK(failed.find("the bridge goes on") != std::string::npos);
  // The clients are served on: a second of readings after the failure.
  auto first = client.read_json_type("sensor");
  REQUIRE(first);
  for (int i = 0; i < 100; ++i) REQUIRE(client.read_json_type("sensor"));
  // The next chunk finds the wait before a new file, and is counted as lost.
  json stats;
  for (int tries = 0; tries < 50; ++tries) {
    client.send(R"({"cmd":"stats","id":1})"
                "\n");
    const auto answer = client.read_json_type("stats");
    REQUIRE(answer);
    stats = *answer;
    if (stats["recording"]["dropped"].get<long>() > 0) break;
    REQUIRE(client.read_json_type("sensor"));  // a reading's time, then look again
  }
  CHECK(stats["recording"]["active"] == true);
  CHECK(stats["recording"]["write_errors"].get<long>() >= 1);
  CHECK(stats["recording"]["dropped"].get<long>() > 0);
  CHECK(stats["recording"]["last_error"].get<std::string>().find("File too large") != std::string::npos);
  // What was written before stays readable, in order, without its footer.
  const auto files = recordings(directory);
  REQUIRE_FALSE(files.empty());
  std::size_t messages = 0;
  for (const auto& file : files) {
    const mcap::Recording recording = read_recording(file);
    CAPTURE(file);
    CHECK(recording.state == mcap::Reader::State::Reading);
    CHECK(recording.error.empty());
    messages += on_topic(recording, "/sensor").size();
  }
  CHECK(messages > 0);
}
