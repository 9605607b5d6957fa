// The run's recording as the bridge feeds it (RecordingTap), on a real loop
// into a real folder, read back as a replay reads it: the events it adds
// (started, stopped), a robot's message beside its native bytes, an answer
// with who was answered, and nothing while it is off.
#include <doctest/doctest.h>

#include <uv.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "flockbridge/bridge/recording_file.hpp"
#include "flockbridge/bridge/recording_tap.hpp"
#include "support/temp_dir.hpp"

using namespace flockbridge;
using bridge::Topic;

namespace {

struct Notes final : bridge::Recorder::Host {
  void recording_note(bool /*warning*/, const std::string& text) override { said.push_back(text); }
  std::vector<std::string> said;
};

bridge::RecordingIdentity identity() {
  bridge::RecordingIdentity robot;
  robot.robot = "tap-test";
  robot.family = "test";
  robot.model = "test";
  robot.session = "s1";
  robot.hello = R"({"type":"hello","family":"test"})";
  robot.sensor_schema = R"({"type":"object"})";
  return robot;
}

/// Every message of the folder's one recording, after the loop has finished its jobs.
std::vector<bridge::RecordedMessage> read_back(uv_loop_t* loop, const std::filesystem::path& folder) {
  uv_run(loop, UV_RUN_DEFAULT);
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) files.push_back(entry.path());
  REQUIRE(files.size() == 1);
  auto file = bridge::RecordingFile::open(files.front().string());
  REQUIRE_MESSAGE(file, (file ? "" : file.error().message));
  std::vector<bridge::RecordedMessage> messages;
  while (auto message = file.value()->next()) messages.push_back(*message);
  CHECK(file.value()->error().empty());
  return messages;
}

}  // namespace

TEST_CASE("the tap records nothing while off, and says when, by whom and where it records") {
  testing::TempDir folder;
  uv_loop_t loop;
  REQUIRE(uv_loop_init(&loop) == 0);
  Notes notes;
  {
    bridge::RecordingTap tap(&loop, notes);
    CHECK(nlohmann::json::parse(tap.message()) == nlohmann::json{{"type", "recording"}, {"active", false}});
    tap.record(Topic::Link, R"({"type":"link","state":"up"})");  // off: dropped, no file
    CHECK(std::filesystem::is_empty(folder.path()));

    bridge::RecordSettings settings;
    settings.directory = folder.path().string();
    REQUIRE(tap.start(settings, identity(), "the teacher"));
    const auto on = nlohmann::json::parse(tap.message());
    CHECK(on["active"] == true);
    CHECK(on["by"] == "the teacher");
    CHECK(on["directory"] == settings.directory);
    CHECK(on["since"].get<double>() > 0);

    tap.record(Topic::Link, "{\"type\":\"link\",\"state\":\"up\"}\n");  // its line end is not recorded
    tap.stop("the teacher");
    CHECK_FALSE(tap.active());

    const auto messages = read_back(&loop, folder.path());
    REQUIRE(messages.size() == 3);
    CHECK(messages[0].topic == Topic::Recording);
    CHECK(nlohmann::json::parse(messages[0].data) == nlohmann::json{{"event", "started"}, {"by", "the teacher"}});
    CHECK(messages[1].topic == Topic::Link);
    CHECK(messages[1].data == R"({"type":"link","state":"up"})");
    CHECK(messages[2].topic == Topic::Recording);
    CHECK(nlohmann::json::parse(messages[2].data) == nlohmann::json{{"event", "stopped"}, {"by", "the teacher"}});
  }
  uv_run(&loop, UV_RUN_DEFAULT);
  CHECK(uv_loop_close(&loop) == 0);
}

TEST_CASE("a robot's message is recorded with its native bytes beside it, and an answer with whom it answered") {
  testing::TempDir folder;
  uv_loop_t loop;
  REQUIRE(uv_loop_init(&loop) == 0);
  Notes notes;
  {
    bridge::RecordingTap tap(&loop, notes);
    bridge::RecordSettings settings;
    settings.directory = folder.path().string();
    REQUIRE(tap.start(settings, identity(), "the configuration"));
    tap.record_published(Topic::Sensor, bridge::make_buffer("{\"type\":\"sensor\",\"seq\":1}\n"),
                         bridge::make_buffer(std::string("\x03"
                                                         "ACK",
                                                         4)));
    tap.record_published(Topic::Robot, nullptr, bridge::make_buffer("AB"));  // native only
    const protocol::Error refused{"not now", protocol::ErrorCode::Busy};
    tap.record_answer({{"client", 7}}, 3, &refused, std::nullopt, true);
    tap.record_answer({{"client", 8}}, "x", nullptr, true, false);
    tap.stop("the bridge, stopping");

    const auto messages = read_back(&loop, folder.path());
    REQUIRE(messages.size() == 7);
    CHECK(messages[1].topic == Topic::Sensor);
    CHECK(messages[1].data == R"({"type":"sensor","seq":1})");
    CHECK(messages[2].topic == Topic::Native);
    CHECK(nlohmann::json::parse(messages[2].data) == nlohmann::json{{"json", "/sensor"}, {"bytes", "03 41 43 4B"}});
    CHECK(messages[2].log_time == messages[1].log_time);  // one time: a replay gives both at once
    CHECK(messages[3].topic == Topic::Native);
    CHECK(nlohmann::json::parse(messages[3].data) == nlohmann::json{{"json", nullptr}, {"bytes", "41 42"}});
    CHECK(messages[4].topic == Topic::Answer);
    CHECK(nlohmann::json::parse(messages[4].data) ==
          nlohmann::json{{"client", 7},
                         {"id", 3},
                         {"ok", false},
                         {"error", {{"code", "busy"}, {"message", "not now"}}},
                         {"told", true}});
    CHECK(nlohmann::json::parse(messages[5].data) ==
          nlohmann::json{{"client", 8}, {"id", "x"}, {"ok", true}, {"confirmed", true}, {"told", false}});
    CHECK(messages[6].topic == Topic::Recording);
  }
  uv_run(&loop, UV_RUN_DEFAULT);
  CHECK(uv_loop_close(&loop) == 0);
}
