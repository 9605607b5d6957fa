// The Flockbot's part of the common robot model: pose from the odometers,
// volts and distances from the configured conversions, null when unknown.
#include <doctest/doctest.h>

#include <cmath>
#include <numbers>

#include "flockbridge/protocol/flockbot/robot_model.hpp"

using namespace flockbridge::protocol;
using namespace flockbridge::protocol::flockbot;

namespace {

SensorReading odometers(int left, int right) {
  SensorReading r;
  r.odometer_left = static_cast<std::int16_t>(left);
  r.odometer_right = static_cast<std::int16_t>(right);
  return r;
}

}  // namespace

TEST_CASE("a Flockbot without conversions fills nothing it would have to guess") {
  FlockbotState state(SensorUnits{}, FlockbotBody{});
  SensorReading r = odometers(100, 100);
  r.battery = 800;
  r.ir = {500, 500, 500, 500, 500};
  r.l_bump = 0x05;
  r.h_bump = 0x80;
  const RobotState s = state.update(r, 0.03);
  CHECK_FALSE(s.pose);
  CHECK_FALSE(s.v_mm_s);
  CHECK_FALSE(s.battery_v);
  REQUIRE(s.ranges_mm.size() == kIrCount);
  for (const auto& mm : s.ranges_mm) CHECK_FALSE(mm);
  CHECK(s.bumped == ((1U << 0) | (1U << 2) | (1U << 15)));  // l_bump bits 0-7, h_bump 8-15

  const RobotGeometry g = robot_geometry(SensorUnits{}, FlockbotBody{});
  CHECK_FALSE(g.radius_mm);
  CHECK(g.max_v_mm_s == 1000.0);  // 100 steps of 1 cm/s: the serial page's own unit
  REQUIRE(g.ranges.size() == kIrCount);
  CHECK(g.ranges[0].name == "ir0");
  CHECK_FALSE(g.ranges[0].deg);
  CHECK_FALSE(g.ranges[0].x_mm);
  CHECK(g.bumpers.size() == kBumpBits);
}

TEST_CASE("a Flockbot's pose adds up its odometers' steps, through the counters' wrap") {
  SensorUnits units;
  units.odometer_mm_per_count = 2;
  units.wheel_base_mm = 100;
  FlockbotState state(units, FlockbotBody{});
  CHECK(state.update(odometers(32700, 32700), 0.03).pose == Pose{0, 0, 0});  // the first packet sets the start
  // Straight on through the wrap at 32767: 100 counts, 200 mm.
  RobotState s = state.update(odometers(-32736, -32736), 0.1);
  REQUIRE(s.pose);
  CHECK(s.pose->x_mm == doctest::Approx(200));
  CHECK(s.pose->y_mm == doctest::Approx(0));
  CHECK(*s.v_mm_s == doctest::Approx(2000));  // 200 mm in 0.1 s (the first packet only sets the start)
  // On the spot, a left quarter turn: each wheel goes 50 mm * pi / 2, 39 counts of 2 mm.
  const int quarter = static_cast<int>(std::lround(50 * std::numbers::pi / 2 / 2));
  s = state.update(odometers(-32736 - quarter, -32736 + quarter), 0.1);
  CHECK(s.pose->th_deg == doctest::Approx(90).epsilon(0.02));
  CHECK(*s.w_deg_s > 0);  // counter-clockwise positive

  state.reset_pose();
  s = state.update(odometers(-32736 - quarter + 10, -32736 + quarter + 10), 0.1);
  CHECK(s.pose->x_mm == doctest::Approx(20));  // from 0, 0, facing +x again
  CHECK(s.pose->th_deg == doctest::Approx(0));
}

TEST_CASE("a reset of the Flockbot's odometers is not taken for a move") {
  SensorUnits units;
  units.odometer_mm_per_count = 1;
  FlockbotState state(units, FlockbotBody{});
  (void)state.update(odometers(0, 0), 0.03);
  (void)state.update(odometers(300, 300), 0.03);
  // Told D M R: the next packets may still carry the old counts, then 0.
  state.expect_odometer_reset();
  (void)state.update(odometers(310, 310), 0.03);
  RobotState s = state.update(odometers(0, 0), 0.03);
  CHECK(s.pose->x_mm == doctest::Approx(310));
  s = state.update(odometers(5, 5), 0.03);
  CHECK(s.pose->x_mm == doctest::Approx(315));
  // A jump no robot drives in one packet's time (a reboot nobody announced).
  s = state.update(odometers(-20000, -20000), 0.03);
  CHECK(s.pose->x_mm == doctest::Approx(315));
  CHECK(state.odometer_resets() == 2);
}

TEST_CASE("the simulated Uno's conversions fill every field, and name the IR sensors by where they look") {
  FlockbotState state(SimulatedUno::units(), SimulatedUno::body());
  SensorReading r = odometers(0, 0);
  r.battery = 800;
  r.ir = {static_cast<std::uint16_t>(std::lround(SimulatedUno::kIrRange.raw(300))), 0, 20, 21, 65535};
  const RobotState s = state.update(r, 0.03);
  CHECK(*s.battery_v == doctest::Approx(7.4));
  CHECK(*s.ranges_mm[0] == doctest::Approx(300).epsilon(0.01));
  CHECK_FALSE(s.ranges_mm[1]);  // below the offset: nothing seen
  CHECK_FALSE(s.ranges_mm[2]);  // at the offset
  CHECK_FALSE(s.ranges_mm[3]);  // 120 m: beyond the range
  CHECK(*s.ranges_mm[4] == doctest::Approx(120000.0 / 65515));

  const RobotGeometry g = robot_geometry(SimulatedUno::units(), SimulatedUno::body());
  CHECK(g.ranges[0].name == "left");
  CHECK(g.ranges[1].name == "front_left");
  CHECK(g.ranges[2].name == "front");
  CHECK(g.ranges[2].x_mm == 80.0);
  CHECK(g.ranges[4].name == "right");
  CHECK(g.ranges[4].y_mm == -80.0);
  CHECK(range_name(20.0, "x") == "x");  // not near a named direction
  CHECK(range_name(10.0, "x") == "front");
  CHECK(range_name(-180.0, "x") == "rear");
}
