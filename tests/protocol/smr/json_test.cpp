// The SMR's JSON forms alone (protocol/smr/json): a JSON command as the bus's
// speed messages (the right wheel mirrored, as the SMR library writes it),
// and a period's sensor message.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "flockbridge/protocol/smr/bus.hpp"
#include "flockbridge/protocol/smr/json.hpp"

using namespace flockbridge::protocol;
using namespace flockbridge::protocol::smr;
using Json = nlohmann::json;

TEST_CASE("smr Json: speeds and stop as the bus's speed messages, the right wheel mirrored") {
  const Geometry geometry;
  const auto speeds = command_messages("speeds", Json{{"left", 30}, {"right", 20}}, geometry);
  REQUIRE(speeds);
  CHECK(speed_commands(speeds.value()) ==
        std::vector<SpeedCommand>{{module::kLeftSpeed, 30}, {module::kRightSpeed, -20}});
  const auto stop = command_messages("stop", Json::object(), geometry);
  REQUIRE(stop);
  CHECK(speed_commands(stop.value()) == std::vector<SpeedCommand>{{module::kLeftSpeed, 0}, {module::kRightSpeed, 0}});
  const auto out_of_range = command_messages("speeds", Json{{"left", 200}, {"right", 0}}, geometry);
  REQUIRE_FALSE(out_of_range);
  CHECK(out_of_range.error().message == "speeds: left must be from -127 to 127, got 200");
  const auto too_fast = command_messages("wheels", Json{{"left_mm_s", 5000}, {"right_mm_s", 0}}, geometry);
  REQUIRE_FALSE(too_fast);
  CHECK(too_fast.error().message.rfind("wheels: faster than the motors go", 0) == 0);
}

TEST_CASE("smr Json: a period's sensor message names the modules that did not answer") {
  PeriodSnapshot snapshot;
  snapshot.period.reading.parts = part::kLeft | part::kRight;
  snapshot.fresh_parts = part::kLeft;
  const Json message = Json::parse(period_json(snapshot, 3, 2.0));
  CHECK(message["type"] == "sensor");
  CHECK(message["seq"] == 3);
  CHECK(message.contains("wheels"));
  CHECK(message["missing"] == Json::array({"right_motor", "line_sensor", "ir", "power"}));
  CHECK(power_switch_json(false) == "{\"type\":\"power_switch\",\"on\":false}\n");
}
