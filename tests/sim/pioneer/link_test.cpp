// The bridge's AROS link (protocol/pioneer/link.hpp) against the simulated
// Pioneer, both pure: the test carries the bytes between them and plays the
// clock.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "flockbridge/protocol/pioneer/link.hpp"
#include "flockbridge/sim/pioneer/pioneer_model.hpp"

using namespace flockbridge;
using namespace flockbridge::protocol::pioneer;
using namespace std::chrono_literals;
using flockbridge::sim::pioneer::PioneerModel;
using flockbridge::sim::pioneer::PioneerModelSettings;

namespace {

struct Pair final : LinkEvents {
  explicit Pair(const PioneerModelSettings& settings = {.model = "p3dx-sh", .name = "Trilby"})
      : robot(std::make_unique<PioneerModel>(
            settings, [this](protocol::ByteView b) { to_link.insert(to_link.end(), b.begin(), b.end()); },
            [](std::string_view) {})),
        link(LinkSettings{}, *this) {}

  // LinkEvents
  void transmit(protocol::ByteView packet) override {
    to_robot.insert(to_robot.end(), packet.begin(), packet.end());
    if (packet.size() > 3) sent_types.push_back({packet[3], now});
  }
  void link_changed(protocol::LinkState state, std::string_view reason) override {
    states.push_back(std::string(protocol::link_state_name(state)) +
                     (reason.empty() ? "" : ": " + std::string(reason)));
  }
  void sip_received(const StandardSip& sip, protocol::Byte, protocol::ByteView) override { sips.push_back(sip); }
  void packet_received(protocol::Byte type, protocol::ByteView) override { others.push_back(type); }
  void command_finished(protocol::CommandToken token, const protocol::Error* error) override {
    finished.emplace_back(token, error ? error->message : "");
  }

  /// Carries what each side wrote to the other, unless the cable is out.
  void deliver() {
    while (!to_robot.empty() || !to_link.empty()) {
      protocol::Bytes for_robot;
      protocol::Bytes for_link;
      std::swap(for_robot, to_robot);
      std::swap(for_link, to_link);
      if (!plugged) continue;
      if (!for_robot.empty()) robot->bytes_received(for_robot, now);
      if (!for_link.empty()) active->bytes_received(for_link, now);
    }
  }
  void run(std::chrono::milliseconds duration) {
    const protocol::SteadyTime end = now + duration;
    deliver();
    while (true) {
      std::optional<protocol::SteadyTime> next = active->next_deadline();
      if (const auto r = robot->next_deadline(); r && (!next || *r < *next)) next = r;
      if (!next || *next > end) break;
      now = std::max(now, *next);
      robot->tick(now);
      active->tick(now);
      deliver();
    }
    now = end;
    robot->tick(now);
    active->tick(now);
    deliver();
  }
  void connect() {
    link.port_opened(now);
    run(1s);
    REQUIRE(link.state() == protocol::LinkState::Up);
  }

  protocol::SteadyTime now{};
  bool plugged = true;
  protocol::Bytes to_robot;
  protocol::Bytes to_link;
  std::unique_ptr<PioneerModel> robot;
  Link link;
  Link* active = &link;  ///< the link the robot's bytes go to
  std::vector<std::string> states;
  std::vector<StandardSip> sips;
  std::vector<protocol::Byte> others;
  std::vector<std::pair<protocol::CommandToken, std::string>> finished;
  std::vector<std::pair<protocol::Byte, protocol::SteadyTime>> sent_types;
};

}  // namespace

TEST_CASE("the AROS link synchronises, opens, reads the configuration, enables the motors, and is up") {
  Pair pair;
  pair.link.port_opened(pair.now);
  pair.run(1s);
  CHECK(pair.link.state() == protocol::LinkState::Up);
  REQUIRE(pair.link.identity());
  CHECK(*pair.link.identity() == RobotIdentity{"Trilby", "Pioneer", "p3dx-sh"});
  REQUIRE(pair.link.config());
  CHECK(pair.link.config()->watchdog_ms == 2000);
  CHECK(pair.link.config_packet().size() > 40);
  CHECK(pair.robot->motors_enabled());
  CHECK(pair.states.front().rfind("handshaking", 0) == 0);
  CHECK(pair.states.back() == "up");
  CHECK(pair.link.stats().connects == 1);
  CHECK(pair.sips.size() >= 5);
}

TEST_CASE("PULSEs keep the robot's watchdog quiet while a command keeps it driving") {
  Pair pair;
  pair.connect();
  // Slow enough not to meet the room's wall 2 m ahead within the 10 s.
  REQUIRE(pair.link.submit(1, {command::kVel, 100}, pair.now));
  pair.run(10s);
  CHECK(pair.robot->velocity_mm_s() == 100);
  CHECK(pair.robot->watchdog_stops() == 0);
  CHECK(pair.link.stats().pulses_sent >= 15);
  REQUIRE(pair.finished.size() == 1);
  CHECK(pair.finished[0] == std::pair<protocol::CommandToken, std::string>{1, ""});
}

TEST_CASE("commands go out in order, at least 5 ms apart, and a stop cancels what waited behind it") {
  Pair pair;
  pair.connect();
  pair.sent_types.clear();
  for (int i = 0; i < 5; ++i)
    REQUIRE(pair.link.submit(static_cast<protocol::CommandToken>(10 + i), {command::kVel, 100 + i}, pair.now));
  pair.run(100ms);
  std::vector<protocol::SteadyTime> vel_times;
  for (const auto& [type, at] : pair.sent_types) {
    if (type == command::kVel) vel_times.push_back(at);
  }
  REQUIRE(vel_times.size() == 5);
  for (std::size_t i = 1; i < vel_times.size(); ++i) CHECK(vel_times[i] - vel_times[i - 1] >= 5ms);
  CHECK(pair.robot->velocity_mm_s() == 104);
  for (int i = 0; i < 3; ++i)
    REQUIRE(pair.link.submit(static_cast<protocol::CommandToken>(20 + i), {command::kVel, 300}, pair.now));
  REQUIRE(pair.link.submit(30, {command::kStop, NoArgument{}}, pair.now));
  pair.run(100ms);
  CHECK(pair.robot->velocity_mm_s() == 0);
  int cancelled = 0;
  for (const auto& [token, error] : pair.finished) cancelled += error == "cancelled by a stop";
  CHECK(cancelled == 2);  // the first of the three went out at once
  CHECK(pair.link.submit(40, {command::kVel, 70000}, pair.now).error().message.find("out of range") !=
        std::string::npos);
}

TEST_CASE("a robot left open by an earlier connection is sent CLOSE and synchronised again") {
  Pair pair;
  pair.connect();
  // The bridge restarts: a new link, the robot still open and sending SIPs.
  Link fresh(LinkSettings{}, pair);
  pair.link.port_closed("restart");
  pair.states.clear();
  fresh.port_opened(pair.now);
  pair.active = &fresh;
  pair.run(3s);
  CHECK(fresh.state() == protocol::LinkState::Up);
  CHECK(fresh.stats().closes_sent >= 1);
  CHECK(fresh.stats().connects == 1);
}

TEST_CASE("a robot that goes quiet makes the link stale, and it comes back when the robot does") {
  Pair pair;
  pair.connect();
  pair.plugged = false;
  pair.run(1500ms);
  CHECK(pair.link.state() != protocol::LinkState::Up);
  CHECK(pair.link.stats().stale == 1);
  bool stale_reported = false;
  for (const std::string& state : pair.states) stale_reported |= state.rfind("stale: no SIP from the robot", 0) == 0;
  CHECK(stale_reported);
  pair.plugged = true;
  pair.run(5s);
  CHECK(pair.link.state() == protocol::LinkState::Up);
  CHECK(pair.link.stats().connects == 2);
}

TEST_CASE("no robot at all: the link says so after its quick tries, and keeps trying slowly") {
  Pair pair;
  pair.plugged = false;
  pair.link.port_opened(pair.now);
  pair.run(4500ms);
  CHECK(pair.link.state() == protocol::LinkState::Down);
  CHECK(pair.link.reason() == "the robot does not answer SYNC (4 tries); trying again every 5000 ms");
  const auto attempts = pair.link.stats().sync_attempts;
  pair.run(10s);
  CHECK(pair.link.stats().sync_attempts == attempts + 2);
  CHECK(pair.link.submit(1, {command::kVel, 100}, pair.now).error().code == protocol::ErrorCode::LinkDown);
}

TEST_CASE("at shutdown the link stops the robot and closes it") {
  Pair pair;
  pair.connect();
  REQUIRE(pair.link.submit(1, {command::kVel, 250}, pair.now));
  pair.run(200ms);
  CHECK(pair.robot->velocity_mm_s() == 250);
  pair.robot->bytes_received(pair.link.shutdown_packets(), pair.now);
  CHECK(pair.robot->velocity_mm_s() == 0);
  CHECK(pair.robot->phase() == PioneerModel::Phase::AwaitSync0);
  pair.link.port_closed("stopping");
  CHECK(pair.link.shutdown_packets().empty());
}
