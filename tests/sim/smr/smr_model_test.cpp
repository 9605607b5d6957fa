// The simulated SMR against the bus link that drives it: every module
// answers its poll, the motors follow the speeds, the encoders add up to
// the pose the odometry computes, the line and the walls show in the
// sensors, and silenced modules and the power switch behave as faults.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "flockbridge/protocol/smr/link.hpp"
#include "flockbridge/protocol/smr/odometry.hpp"
#include "flockbridge/sim/smr/smr_model.hpp"
#include "support/hex.hpp"

using namespace flockbridge::protocol;
using namespace flockbridge::protocol::smr;
using flockbridge::sim::smr::SmrModel;
using flockbridge::sim::smr::SmrModelSettings;
using flockbridge::testing::hex;
using namespace std::chrono_literals;

namespace {

/// The bus link and the model wired together, periods driven by hand.
struct Bus final : LinkEvents {
  SmrModel model{SmrModelSettings{}, [this](ByteView reply) { link.bytes_received(reply, now); }, [](auto) {}};
  Link link{LinkSettings{}, *this};
  SteadyTime now{};
  std::vector<Period> periods;
  std::vector<bool> power;

  Bus() { link.port_opened(now); }
  void run(int count) {
    for (int i = 0; i < count; ++i) {
      link.tick(now);
      now += 10ms;
    }
  }
  void transmit(ByteView bytes) override { model.bytes_received(bytes, now); }
  void link_changed(LinkState, std::string_view) override {}
  void period_ended() override {}
  void period_started(const PeriodStart&, ByteView, ByteView) override {}
  void bus_messages(ByteView) override {}
  void period_complete(const Period& period) override { periods.push_back(period); }
  void command_finished(CommandToken, const Error*) override {}
  void power_switch(bool on) override { power.push_back(on); }
};

}  // namespace

TEST_CASE("every module answers every period - the robot stands on the line, the battery full") {
  Bus bus;
  bus.run(3);
  REQUIRE(bus.periods.size() == 3);
  const Reading& r = bus.periods.back().reading;
  CHECK(r.parts == (part::kLeft | part::kRight | part::kLine | part::kInfrared | part::kPower));
  CHECK(r.left.status == 0);
  CHECK(r.digital == power_status::kPowerOn);
  CHECK(analog_volts(r.analog[0]) == doctest::Approx(12.4).epsilon(0.01));
  // The line under the bar's middle two sensors, the floor under the rest.
  CHECK(r.line[3] < 100);
  CHECK(r.line[4] < 100);
  CHECK(r.line[0] > 200);
  CHECK(r.line[7] > 200);
  CHECK(bus.link.state() == LinkState::Up);
}

TEST_CASE("driving: the encoders count as the module's do, and odometry finds the true pose") {
  Bus bus;
  Odometry odometry{Geometry{}};
  REQUIRE(bus.link.submit(1, hex("02 11 0A 02 12 F6")));  // 10 forward on both wheels
  bus.run(101);
  CHECK(bus.model.left_speed() == 10);
  CHECK(bus.model.right_speed() == -10);
  for (const Period& p : bus.periods) odometry.update(p.reading.left.encoder, p.reading.right.encoder, 0.01);
  // 100 periods at 10 positions each: 1000 positions forward.
  CHECK(bus.periods.back().reading.left.encoder == 1000);
  CHECK(bus.periods.back().reading.right.encoder == static_cast<std::uint16_t>(-1000));
  CHECK(bus.periods.back().reading.left.pwm == 10);
  const double metres = 1000 * Geometry{}.metres_per_position();
  CHECK(bus.model.x_m() == doctest::Approx(metres).epsilon(0.02));
  CHECK(odometry.pose().x_m == doctest::Approx(bus.model.x_m()).epsilon(0.02));
  CHECK(std::abs(odometry.pose().y_m) < 0.001);
  CHECK(odometry.pose().v_m_s == doctest::Approx(Geometry{}.wheel_speed(10)).epsilon(0.02));

  REQUIRE(bus.link.submit(2, hex("02 11 F6 02 12 F6")));  // left back, right forward: turn left
  bus.run(50);
  CHECK(bus.model.heading_deg() > 10);
  CHECK(bus.model.x_m() == doctest::Approx(metres).epsilon(0.02));
}

TEST_CASE("a wall stops the robot, and its motors say they are blocked - the front IR sees it coming") {
  Bus bus;
  REQUIRE(bus.link.submit(1, hex("02 11 7F 02 12 81")));
  bus.run(300);
  const Reading& r = bus.periods.back().reading;
  CHECK(r.left.status == motor_status::kBlocked);
  CHECK(bus.model.x_m() < 2.0);
  CHECK(r.ir[2] > 200);  // the front, close to the wall
  CHECK(r.ir[5] == 0);   // the rear, far from the other
}

TEST_CASE("a silent module is missed by the link - the power switch off is reported") {
  Bus bus;
  bus.model.set_module_silent(module::kInfrared, true);
  bus.run(12);
  CHECK(bus.link.reason() == "no answer from the IR sensors");
  bus.model.set_module_silent(module::kInfrared, false);
  bus.model.set_power_switch(false);
  bus.run(30);
  CHECK(bus.link.reason().empty());
  CHECK(bus.power == std::vector<bool>{false});
}
