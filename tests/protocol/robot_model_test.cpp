// The common robot model's pieces: wheel odometry, the inverse range law,
// and the JSON fields every family's sensor message ends with.
#include <doctest/doctest.h>

#include <cmath>
#include <numbers>
#include <string>

#include "flockbridge/protocol/json_codec.hpp"
#include "flockbridge/protocol/robot_model.hpp"

using namespace flockbridge::protocol;
using Json = nlohmann::json;

TEST_CASE("wheel odometry: straight, on the spot, and an arc end where geometry says") {
  WheelOdometry odometry(100);
  odometry.step(100, 100, 0.5);
  CHECK(odometry.x() == doctest::Approx(100));
  CHECK(odometry.speed() == doctest::Approx(200));
  odometry.step(-50 * std::numbers::pi / 2, 50 * std::numbers::pi / 2, 0.5);  // a quarter turn left on the spot
  CHECK(odometry.pose().th_deg == doctest::Approx(90));
  CHECK(odometry.x() == doctest::Approx(100));
  // A half circle of radius 200 to the left, in many steps: it ends 400 mm to the left... of +y.
  for (int i = 0; i < 1000; ++i) {
    const double angle = std::numbers::pi / 1000;
    odometry.step(150 * angle, 250 * angle, 0.01);
  }
  CHECK(odometry.x() == doctest::Approx(-300).epsilon(0.001));
  CHECK(odometry.y() == doctest::Approx(0).scale(1));
  CHECK(odometry.pose().th_deg == doctest::Approx(-90));
  odometry.reset();
  CHECK(odometry.pose() == Pose{0, 0, 0});
  CHECK(normalized_degrees(180) == 180);
  CHECK(normalized_degrees(-180) == 180);
  CHECK(normalized_degrees(270) == -90);
}

TEST_CASE("the inverse range law: empty when unknown, below the offset, or beyond the range") {
  const InverseRange law{.k = 26'000, .offset = -12, .max_mm = 800};
  CHECK(*law.mm(law.raw(250)) == doctest::Approx(250));
  CHECK_FALSE(law.mm(0));  // 2167 mm: beyond 800
  CHECK_FALSE(law.mm(-12));
  CHECK_FALSE(InverseRange{}.mm(100));
  CHECK_FALSE(InverseRange{}.known());
}

TEST_CASE("the robot model's JSON fields: every key always there, null for what is not known") {
  RobotGeometry g;
  g.ranges.push_back(
      RangeSensor{.name = "front", .kind = RangeKind::Ir, .deg = 0, .x_mm = 80, .y_mm = 0, .max_mm = 800});
  g.ranges.push_back(RangeSensor{.name = "sonar1", .kind = RangeKind::Sonar});
  g.bumpers = {"front", "rear"};
  const json::RobotStateEncoder encoder(g);

  std::string out;
  encoder.append(out, RobotState{});
  // Each range by its name alone: its kind and mounting are the geometry's, said once in hello.
  CHECK(out == R"("pose":null,"v_mm_s":null,"w_deg_s":null,"battery_v":null,)"
               R"("ranges":{"front":null,"sonar1":null},"bumped":[])");

  RobotState s;
  s.pose = Pose{1234.56, -0.04, 359.96};
  s.v_mm_s = 99.96;
  s.w_deg_s = -10;
  s.battery_v = 12.3456;
  s.ranges_mm = {412.6, std::nullopt};
  s.bumped = 0b10;
  const std::string line = encoder.add_to(R"({"type":"sensor","seq":1})"
                                          "\n",
                                          s);
  CHECK(line.back() == '\n');
  const Json message = Json::parse(line);
  CHECK(message["seq"] == 1);  // the family's fields first, as they were
  CHECK(message["pose"] == Json::parse(R"({"x_mm":1234.6,"y_mm":-0.0,"th_deg":0.0})"));  // 359.96 is -0.04
  CHECK(message["v_mm_s"] == 100.0);
  CHECK(message["battery_v"] == 12.3456);  // as the driver rounded it
  CHECK(message["ranges"]["front"] == 413);
  CHECK(message["ranges"]["sonar1"].is_null());
  CHECK(message["ranges"].size() == 2);
  CHECK(message["bumped"] == Json::array({"rear"}));
  // A family with no fields of its own still gets a well-formed object.
  CHECK(Json::parse(encoder.add_to("{}", s))["bumped"] == Json::array({"rear"}));

  const Json geometry = json::geometry(g);
  CHECK(geometry["ranges"][0] ==
        Json::parse(R"({"name":"front","kind":"ir","deg":0.0,"x_mm":80.0,"y_mm":0.0,"max_mm":800.0})"));
  CHECK(geometry["footprint"]["radius_mm"].is_null());
  CHECK(geometry["bumpers"] == Json::array({"front", "rear"}));

  // The schema names the robot's own sensors when it is given its geometry.
  const Json schema = json::sensor_schema("any", nlohmann::ordered_json::object(), &g);
  CHECK(schema["properties"]["ranges"]["type"] == "object");
  CHECK(schema["properties"]["ranges"]["properties"].contains("sonar1"));
  CHECK(schema["properties"]["ranges"]["additionalProperties"]["type"] == Json::array({"integer", "null"}));
}

TEST_CASE("a recording's sensor message of protocol version 1 is read in version 2's form") {
  const std::string old =
      R"({"type":"sensor","seq":7,"ranges":[{"name":"front","kind":"ir","deg":0.0,"x_mm":80.0,"y_mm":0.0,"mm":412},)"
      R"({"name":"left","kind":"ir","deg":90.0,"x_mm":0.0,"y_mm":80.0,"mm":null}],"bumped":[]})"
      "\n";
  const std::string lean = json::upgraded_sensor_message(old);
  CHECK(lean == R"({"type":"sensor","seq":7,"ranges":{"front":412,"left":null},"bumped":[]})"
                "\n");
  CHECK(json::upgraded_sensor_message(lean) == lean);  // version 2's, as it is
  CHECK(json::upgraded_sensor_message("not json") == "not json");
  const auto properties = json::upgraded_sensor_properties(
      nlohmann::ordered_json::parse(R"({"ranges":{"type":"array"},"ir":{"type":"array"}})"));
  CHECK_FALSE(properties.contains("ranges"));  // sensor_schema() writes the model's own
  CHECK(properties.contains("ir"));
}
