// A JSON command's arguments as every family reads them (json_arguments.hpp),
// and the Flockbot's drive, which reads its own with them: the same checks
// and the same words whatever the robot.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "flockbridge/protocol/flockbot/commands.hpp"
#include "flockbridge/protocol/flockbot/json.hpp"
#include "flockbridge/protocol/json_arguments.hpp"

using namespace flockbridge::protocol;
using Json = nlohmann::json;

namespace {

std::string refusal(const auto& result) {
  REQUIRE_FALSE(result);
  return result.error().message;
}

}  // namespace

TEST_CASE("json arguments: a number out of its range is refused with the range and the value given") {
  CHECK(refusal(json_arguments::number("move", Json{{"mm", 40000}}, "mm", -32767, 32767)) ==
        "move: mm must be from -32767 to 32767, got 40000");
  CHECK(refusal(json_arguments::number("turn", Json{{"deg", -12.5}}, "deg", 0, 360)) ==
        "turn: deg must be from 0 to 360, got -12.5");
  CHECK(refusal(json_arguments::number("move", Json::object(), "mm", 0, 1)) == "move: needs 'mm'");
  CHECK(refusal(json_arguments::number("move", Json{{"mm", "20"}}, "mm", 0, 100)) == "move: mm must be a number");
  CHECK(json_arguments::number("move", Json{{"mm", 20}}, "mm", 0, 100).value() == 20);
}

TEST_CASE("json arguments: drive takes v_mm_s and w_deg_s (0 when left out) and nothing else") {
  const auto drive = json_arguments::drive_arguments("drive", Json{{"cmd", "drive"}, {"v_mm_s", 150}}, 1000, 90);
  REQUIRE(drive);
  CHECK(drive.value().v_mm_s == 150);
  CHECK(drive.value().w_deg_s == 0);
  CHECK(refusal(json_arguments::drive_arguments("drive", Json{{"v_mm_s", 1}, {"w_deg_s", 91}}, 1000, 90)) ==
        "drive: w_deg_s must be from -90 to 90, got 91");
  CHECK(refusal(json_arguments::drive_arguments("drive", Json{{"v_mm_s", 1}, {"speed", 3}}, 1000, 90)).find("speed") !=
        std::string::npos);
  const auto wheels = json_arguments::wheel_arguments("wheels", Json{{"left_mm_s", -100}, {"right_mm_s", 100}}, 500);
  REQUIRE(wheels);
  CHECK(wheels.value().left_mm_s == -100);
  CHECK(refusal(json_arguments::wheel_arguments("wheels", Json{{"left_mm_s", 1}}, 500)) ==
        "wheels: needs 'right_mm_s'");
}

TEST_CASE("a Flockbot's drive becomes the wheels command, read as every family reads drive") {
  const flockbot::SensorUnits units{.wheel_mm_s_per_percent = 10, .wheel_base_mm = 100};
  const std::array<long long, 2> straight{20, 20};
  CHECK(flockbot::drive_command(Json{{"v_mm_s", 200}}, units).value() ==
        flockbot::build_command(*flockbot::find_command("wheels"), straight).value());
  CHECK(refusal(flockbot::drive_command(Json{{"v_mm_s", 1500}}, units)) ==
        "drive: v_mm_s must be from -1000 to 1000, got 1500");
  CHECK(refusal(flockbot::drive_command(Json{{"v_mm_s", 900}, {"w_deg_s", 229.2}}, units)) ==
        "drive: too fast for this Flockbot: a wheel would need more than 1000 mm/s");
  CHECK(refusal(flockbot::drive_command(Json{{"v_mm_s", 100}}, flockbot::SensorUnits{.wheel_mm_s_per_percent = 0}))
            .find("flockbot.units.wheel_mm_s_per_percent") != std::string::npos);
}
