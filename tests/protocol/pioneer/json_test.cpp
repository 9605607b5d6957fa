// The Pioneer's JSON forms alone (protocol/pioneer/json): a JSON command as
// AROS command packets, bounded by the robot's model, and the packets read
// back; a SIP's sensor message.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "flockbridge/protocol/pioneer/commands.hpp"
#include "flockbridge/protocol/pioneer/json.hpp"

using namespace flockbridge::protocol;
using namespace flockbridge::protocol::pioneer;
using Json = nlohmann::json;

TEST_CASE("pioneer Json: drive is VEL then RVEL, within the model's speeds") {
  const RobotModel* p3dx = find_robot_model("p3dx-sh");
  REQUIRE(p3dx != nullptr);
  const auto packets = command_packets("drive", Json{{"v_mm_s", 300}, {"w_deg_s", -20}}, p3dx);
  REQUIRE(packets);
  const auto commands = split_commands(packets.value());
  REQUIRE(commands);
  REQUIRE(commands.value().size() == 2);
  CHECK(commands.value()[0] == Command{command::kVel, 300});
  CHECK(commands.value()[1] == Command{command::kRVel, -20});
  const auto too_fast = command_packets("drive", Json{{"v_mm_s", 5000}}, p3dx);
  REQUIRE_FALSE(too_fast);
  CHECK(too_fast.error().message.rfind("drive: v_mm_s must be from -", 0) == 0);
  CHECK(too_fast.error().message.find(", got 5000") != std::string::npos);
}

TEST_CASE("pioneer Json: an unknown command names those a Pioneer takes, and broken packets are not commands") {
  const auto unknown = command_packets("lcd_write", Json::object(), nullptr);
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().message.rfind("unknown command 'lcd_write'; a Pioneer takes drive, stop", 0) == 0);
  Bytes packets = command_packets("stop", Json::object(), nullptr).value();
  packets.back() ^= 0xFF;  // the checksum
  CHECK_FALSE(split_commands(packets));
}

TEST_CASE("pioneer Json: a SIP's sensor message is one line with the SIP's own values") {
  SipSnapshot snapshot;
  snapshot.sip.x = 1234;
  snapshot.sip.battery_tenths = 126;
  const std::string line = sip_json(snapshot, 7, 1.5);
  REQUIRE(line.back() == '\n');
  const Json message = Json::parse(line);
  CHECK(message["type"] == "sensor");
  CHECK(message["seq"] == 7);
  CHECK(message["raw"]["x"] == 1234);
  CHECK(message["raw"]["battery"] == 126);
  CHECK_FALSE(message.contains("sonar"));  // the model is not known yet
}
