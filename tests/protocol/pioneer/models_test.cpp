#include <doctest/doctest.h>

#include "flockbridge/protocol/pioneer/models.hpp"

using namespace flockbridge::protocol::pioneer;

TEST_CASE("the model table has the six models, found by their subclass in any case") {
  for (const char* name : {"p2dx", "p3dx", "p3dx-sh", "p3at-sh", "amigo", "amigo-sh"}) {
    CAPTURE(name);
    const RobotModel* model = find_robot_model(name);
    REQUIRE(model != nullptr);
    CHECK(model->subclass == name);
    CHECK(model->type == "Pioneer");
  }
  CHECK(find_robot_model("P3DX-SH") == find_robot_model("p3dx-sh"));
  CHECK(find_robot_model("p3dx-s") == nullptr);
  CHECK(robot_models().size() == 6);
  // Facts from the parameter files that tell the models apart.
  CHECK(find_robot_model("p3dx")->dist_conv == doctest::Approx(0.485));
  CHECK(find_robot_model("p2dx")->range_conv == doctest::Approx(0.268));
  CHECK(find_robot_model("amigo")->vel_conv == doctest::Approx(0.6154));
  CHECK(find_robot_model("p3at-sh")->diff_conv == doctest::Approx(0.0034));
  CHECK(find_robot_model("p3dx-sh")->sonar.size() == 16);
  CHECK(find_robot_model("amigo-sh")->sonar.size() == 8);
  CHECK(find_robot_model("amigo-sh")->sonar[1].heading_deg == 41);
  CHECK(find_robot_model("p3at-sh")->sonar[3].x_mm == 245);
}

TEST_CASE("a SIP converted with a model's factors: speeds, battery, heading setpoint, compass and sonar") {
  StandardSip sip;
  sip.left_velocity = 100;
  sip.right_velocity = 200;
  sip.battery_tenths = 121;
  sip.th = 1024;       // 90 degrees
  sip.control = 2048;  // 180 degrees: 90 degrees to the left of the heading
  sip.compass = 45;
  sip.sonar = {{3, 1000}};
  const SipReading amigo = convert_sip(sip, *find_robot_model("amigo"));
  CHECK(amigo.left_velocity_mm_s == doctest::Approx(61.54));
  CHECK(amigo.right_velocity_mm_s == doctest::Approx(123.08));
  CHECK(amigo.velocity_mm_s == doctest::Approx(92.31));
  // Without ROTVEL in the SIP, from the wheels: (123.08 - 61.54) / 2 * 0.011 rad/s.
  CHECK(amigo.rotational_velocity_deg_s == doctest::Approx(61.54 / 2 * 0.011 * 180 / 3.14159265358979));
  CHECK(amigo.battery_v == doctest::Approx(12.1));
  CHECK(amigo.heading_setpoint_deg == doctest::Approx(90.0));
  CHECK(amigo.compass_deg == 90);
  REQUIRE(amigo.sonar.size() == 1);
  CHECK(amigo.sonar[0].range_mm == doctest::Approx(1000.0));
  CHECK(convert_sip(sip, *find_robot_model("p2dx")).sonar[0].range_mm == doctest::Approx(268.0));
  // What the robot says itself wins: ROTVEL and BATTERYX10.
  sip.rotational_velocity_tenths = -155;
  sip.io = SipIo{};
  sip.battery_x10 = 129;
  const SipReading sh = convert_sip(sip, *find_robot_model("amigo-sh"));
  CHECK(sh.rotational_velocity_deg_s == doctest::Approx(-15.5));
  CHECK(sh.battery_v == doctest::Approx(12.9));
  CHECK(sh.velocity_mm_s == doctest::Approx(150.0));
}

TEST_CASE("the pose follows the 15-bit position counters across their wrap, as ARIA does") {
  PoseTracker tracker(*find_robot_model("p3dx"));  // 0.485 mm a unit
  StandardSip sip;
  sip.x = 0x7FF0;
  sip.y = 100;
  sip.th = -1024;
  auto pose = tracker.update(sip);
  CHECK(pose.x_mm == doctest::Approx(0x7FF0 * 0.485));
  CHECK(pose.y_mm == doctest::Approx(48.5));
  CHECK(pose.th_deg == doctest::Approx(-90.0));
  // Forwards over the wrap: 0x7FF0 -> 0x0010 is 32 units on, not 32736 back.
  sip.x = 0x0010;
  pose = tracker.update(sip);
  CHECK(pose.x_mm == doctest::Approx((0x7FF0 + 32) * 0.485));
  // Backwards over it again; the top bit is not part of the counter.
  sip.x = 0x8000 | 0x7FF8;
  pose = tracker.update(sip);
  CHECK(pose.x_mm == doctest::Approx((0x7FF0 + 32 - 24) * 0.485));
  // A heading past 180 degrees reads as negative.
  sip.th = 3072;
  CHECK(tracker.update(sip).th_deg == doctest::Approx(-90.0));
  tracker.reset();
  sip.x = 10;
  CHECK(tracker.update(sip).x_mm == doctest::Approx(4.85));
}
