// The SMR's wheel geometry and odometry: speed units, the mirrored right
// encoder, and 16-bit counters that wrap.
#include <doctest/doctest.h>

#include <numbers>

#include "flockbridge/protocol/smr/odometry.hpp"

using namespace flockbridge::protocol::smr;

TEST_CASE("a speed unit is encoder positions per 10 ms period") {
  const Geometry g;
  CHECK(g.metres_per_position() == doctest::Approx(std::numbers::pi * 0.065 / 2000));
  CHECK(g.wheel_speed(10) == doctest::Approx(10 * g.metres_per_position() / 0.01));
  CHECK(g.speed_units(g.wheel_speed(37)) == doctest::Approx(37));
}

TEST_CASE("odometry: forward with the right encoder counting down, across the counters' wrap") {
  const Geometry g;
  Odometry odometry{g};
  odometry.update(65000, 500, 0.01);
  const auto& pose = odometry.update(464, 65036, 0.01);  // +1000 on the left, -1000 on the right
  CHECK(pose.x_m == doctest::Approx(1000 * g.metres_per_position()));
  CHECK(pose.y_m == doctest::Approx(0.0));
  CHECK(pose.heading_rad == doctest::Approx(0.0));
  CHECK(pose.v_m_s == doctest::Approx(1000 * g.metres_per_position() / 0.01));
}

TEST_CASE("odometry: turning on the spot") {
  const Geometry g;
  Odometry odometry{g};
  odometry.update(0, 0, 0.01);
  // Left back, right forward (its encoder down): counter-clockwise.
  const double quarter = std::numbers::pi / 2 * g.wheel_base_m / 2 / g.metres_per_position();
  const auto steps = static_cast<std::uint16_t>(quarter);
  const auto& pose = odometry.update(static_cast<std::uint16_t>(-steps), static_cast<std::uint16_t>(-steps), 0.5);
  CHECK(pose.heading_rad == doctest::Approx(std::numbers::pi / 2).epsilon(0.01));
  CHECK(pose.x_m == doctest::Approx(0.0));
  CHECK(pose.w_rad_s > 0);
  odometry.reset();
  CHECK(odometry.pose().heading_rad == 0);
}

TEST_CASE("odometry: speeds are averaged over the last updates, so that one uneven step does not show") {
  const Geometry g;
  Odometry odometry{g, 4};
  std::uint16_t left = 0;
  odometry.update(0, 0, 0.01);
  for (const int step : {20, 20, 20, 30, 10}) {  // one module read late, then early
    left = static_cast<std::uint16_t>(left + step);
    odometry.update(left, static_cast<std::uint16_t>(-left), 0.01);
  }
  CHECK(odometry.pose().v_m_s == doctest::Approx(20 * g.metres_per_position() / 0.01));
}
