// The command gate alone (command_gate.hpp): the order of its checks, the
// stops that ride on a standing stop, the answers owed, and what the robot
// was last told. No loop, no driver, no client: the Bridge's own parts
// (config, lease, latch, counters) and plain values.
#include <doctest/doctest.h>

#include <chrono>
#include <string>

#include <nlohmann/json.hpp>

#include "flockbridge/bridge/command_gate.hpp"

using namespace flockbridge;
using namespace flockbridge::bridge;
using namespace std::chrono_literals;
using nlohmann::json;

namespace {

constexpr MotionEffect kDrive{.motion = true, .keeps_moving = true};
constexpr MotionEffect kStop{.stops = true};
constexpr MotionEffect kEmergency{.stops = true, .emergency = true};
constexpr MotionEffect kSetting{};

/// A gate with the Bridge's parts around it.
struct Gate {
  Config config;
  ControlLease lease;
  EmergencyLatch latch;
  protocol::BridgeCounters counters;
  CommandGate gate{config, lease, latch, counters, [](std::uint64_t client) {
                     return "client " + std::to_string(client) + " (10.0.0." + std::to_string(client) + ":5000)";
                   }};
  protocol::SteadyTime now = protocol::SteadyTime{} + 1h;

  /// Sends a command through the gate as the Bridge does: admitted, then
  /// sent when the verdict says so (and the lease taken when it says so).
  GateVerdict send(const CommandSender& sender, const MotionEffect& effect, const json& id) {
    GateVerdict verdict = gate.admit(sender, effect, id, now);
    if (verdict.kind == GateVerdict::Kind::Send) {
      if (verdict.takes_lease) lease.take(sender.client, 0, now);
      gate.sent(sender, effect, id, verdict.token, now);
    }
    return verdict;
  }
};

CommandSender driver(std::uint64_t client) {
  return {.client = client, .role = Role::Driver, .kind = ClientKind::Json};
}

CommandSender viewer(std::uint64_t client) {
  return {.client = client, .role = Role::Viewer, .kind = ClientKind::Json};
}

}  // namespace

TEST_CASE("command gate: a driver's motion command goes, takes the lease, and sets the robot moving") {
  Gate g;
  const GateVerdict verdict = g.send(driver(1), kDrive, 7);
  REQUIRE(verdict.kind == GateVerdict::Kind::Send);
  CHECK(verdict.takes_lease);
  CHECK(g.gate.moving());
  CHECK(g.gate.motion_owner() == 1U);
  CHECK(g.gate.last_motion() == g.now);
  // Its answer is owed until the robot has taken it.
  CHECK(g.gate.owed() == 1);
  const auto answers = g.gate.done(verdict.token, false, std::nullopt);
  REQUIRE(answers.size() == 1);
  CHECK(answers[0].client == 1);
  CHECK(answers[0].id == 7);
  CHECK(g.gate.owed() == 0);
  // Each command has a token of its own.
  const GateVerdict next = g.send(driver(1), kDrive, 8);
  CHECK(next.token != verdict.token);
  CHECK_FALSE(next.takes_lease);  // it holds the lease already
}

TEST_CASE(
    "command gate: the checks come in order - rate, role, latch, lease - and stops pass them all but the role's") {
  Gate g;
  SUBCASE("over its rate: told so, but a stop goes") {
    CommandSender fast = driver(1);
    fast.within_rate = false;
    const GateVerdict refused = g.gate.admit(fast, kDrive, 1, g.now);
    CHECK(refused.kind == GateVerdict::Kind::RateLimited);
    CHECK(refused.refusal.code == protocol::ErrorCode::RateLimited);
    CHECK(refused.refusal.message.find("too many commands") == 0);
    CHECK(g.gate.admit(fast, kStop, 2, g.now).kind == GateVerdict::Kind::Send);
  }
  SUBCASE("a viewer: denied, with how to drive, but it may stop the robot") {
    const GateVerdict refused = g.gate.admit(viewer(2), kDrive, 1, g.now);
    CHECK(refused.kind == GateVerdict::Kind::Refused);
    CHECK(refused.refusal.code == protocol::ErrorCode::Denied);
    CHECK(refused.refusal.message.find(R"({"cmd":"auth","pin":"..."})") != std::string::npos);
    CHECK(g.gate.admit(viewer(2), kStop, 2, g.now).kind == GateVerdict::Kind::Send);
    CHECK(g.gate.admit(viewer(2), kEmergency, 3, g.now).kind == GateVerdict::Kind::Send);
  }
  SUBCASE("a native connection that waits to be approved is told so") {
    CommandSender waiting{.client = 3, .role = Role::Viewer, .kind = ClientKind::Native, .waits_for_approval = true};
    const GateVerdict refused = g.gate.admit(waiting, kDrive, 1, g.now);
    CHECK(refused.refusal.message.find("waits to be approved") != std::string::npos);
    CHECK(refused.refusal.message.find("access.native_port_mode paired") != std::string::npos);
  }
  SUBCASE("the latch refuses motion, names who latched it and who clears it; a setting and a stop go") {
    g.latch.latch(StopSource::Local, {.client = 4, .by = "10.0.0.4:5000"});
    const GateVerdict refused = g.gate.admit(driver(1), kDrive, 1, g.now);
    CHECK(refused.kind == GateVerdict::Kind::Refused);
    CHECK(refused.refusal.code == protocol::ErrorCode::Latched);
    CHECK(refused.refusal.message.find("latched (by client 4, 10.0.0.4:5000)") != std::string::npos);
    CHECK(refused.refusal.message.find(R"({"cmd":"clear_emergency"})") != std::string::npos);
    CHECK(g.counters.control_refused == 1);
    CHECK(g.gate.admit(driver(1), kSetting, 2, g.now).kind == GateVerdict::Kind::Send);
    CHECK(g.gate.admit(driver(1), kStop, 3, g.now).kind == GateVerdict::Kind::Send);
  }
  SUBCASE("the latch comes before the lease: the driver hears of the latch") {
    REQUIRE(g.send(driver(1), kDrive, 1).kind == GateVerdict::Kind::Send);
    g.latch.latch(StopSource::Local, {.client = 2, .by = "10.0.0.2:5000"});
    CHECK(g.gate.admit(driver(5), kDrive, 2, g.now).refusal.code == protocol::ErrorCode::Latched);
  }
}

TEST_CASE(
    "command gate: while one client drives, another's command is refused with who drives, but a stop is anyone's") {
  Gate g;
  REQUIRE(g.send(driver(1), kDrive, 1).kind == GateVerdict::Kind::Send);
  const GateVerdict busy = g.gate.admit(driver(2), kDrive, 2, g.now);
  CHECK(busy.kind == GateVerdict::Kind::Refused);
  CHECK(busy.refusal.code == protocol::ErrorCode::Busy);
  CHECK(busy.refusal.message.find("client 1 (10.0.0.1:5000) drives the robot") != std::string::npos);
  CHECK(g.counters.control_refused == 1);
  // A setting (no motion) is the driver's too.
  const GateVerdict setting = g.gate.admit(driver(2), kSetting, 3, g.now);
  CHECK(setting.refusal.message.find("only the driver may do this") != std::string::npos);
  // The stop goes, and the robot stands: nobody set it moving since.
  const GateVerdict stop = g.send(driver(2), kStop, 4);
  CHECK(stop.kind == GateVerdict::Kind::Send);
  CHECK_FALSE(g.gate.moving());
  CHECK_FALSE(g.gate.motion_owner().has_value());
}

TEST_CASE("command gate: a program on a one-driver port that does not drive has its settings dropped without a word") {
  Gate g;
  REQUIRE(g.send(driver(1), kDrive, 1).kind == GateVerdict::Kind::Send);
  CommandSender program{.client = 2, .role = Role::Driver, .kind = ClientKind::Native, .exclusive_control = true};
  CHECK(g.gate.admit(program, kSetting, nullptr, g.now).kind == GateVerdict::Kind::Ignored);
  CHECK(g.counters.control_ignored == 1);
}

TEST_CASE(
    "command gate: stops after a stop ride on it - answered with it, then at once, and motion ends the standing stop") {
  Gate g;
  const GateVerdict first = g.send(viewer(1), kStop, "a");
  REQUIRE(first.kind == GateVerdict::Kind::Send);
  // Before the robot has taken the first: the next ones wait for its answer.
  CHECK(g.send(viewer(2), kStop, "b").kind == GateVerdict::Kind::Rides);
  CHECK(g.send(viewer(3), kStop, "c").kind == GateVerdict::Kind::Rides);
  CHECK(g.gate.owed() == 3);
  const auto answers = g.gate.done(first.token, false, true);
  REQUIRE(answers.size() == 3);
  CHECK(answers[1].id == "b");
  CHECK(answers[2].client == 3);
  // Once taken: answered at once as it was (the robot confirmed it).
  const GateVerdict after = g.send(viewer(4), kStop, "d");
  CHECK(after.kind == GateVerdict::Kind::Answered);
  CHECK(after.confirmed == true);
  // An emergency stop never rides: it latches, and goes.
  CHECK(g.send(viewer(4), kEmergency, "e").kind == GateVerdict::Kind::Send);
  // Motion ends it: the next stop goes to the robot again.
  REQUIRE(g.latch.clear(EmergencyLatch::Clearer::Teacher, g.config.access, {}));
  REQUIRE(g.send(driver(5), kDrive, "f").kind == GateVerdict::Kind::Send);
  CHECK(g.send(driver(5), kStop, "g").kind == GateVerdict::Kind::Send);
}

TEST_CASE("command gate: a flood of stops rides up to a bound, then is answered at once") {
  Gate g;
  const GateVerdict first = g.send(viewer(1), kStop, 0);
  int riding = 0;
  int answered = 0;
  for (int i = 1; i <= 1000; ++i) {
    const GateVerdict verdict = g.send(viewer(2), kStop, i);
    if (verdict.kind == GateVerdict::Kind::Rides) ++riding;
    if (verdict.kind == GateVerdict::Kind::Answered) ++answered;
  }
  CHECK(riding == 256);
  CHECK(answered == 1000 - 256);
  CHECK(g.gate.done(first.token, false, std::nullopt).size() == 257);
}

TEST_CASE("command gate: a stop the robot did not take leaves no standing stop, nor does a change of the link") {
  Gate g;
  const GateVerdict lost = g.send(viewer(1), kStop, 1);
  CHECK(g.gate.done(lost.token, true, std::nullopt).size() == 1);
  CHECK(g.send(viewer(1), kStop, 2).kind == GateVerdict::Kind::Send);
  g.gate.link_changed(false);
  CHECK(g.send(viewer(1), kStop, 3).kind == GateVerdict::Kind::Send);
}

TEST_CASE("command gate: the robot's motion - kept, ended by a stop, a restart, the latch or the bridge's own stop") {
  Gate g;
  const auto drive = [&] { REQUIRE(g.send(driver(1), kDrive, 1).kind == GateVerdict::Kind::Send); };
  drive();
  g.gate.link_changed(false);  // back up without a restart: it may still be moving
  CHECK(g.gate.moving());
  g.gate.link_changed(true);
  CHECK_FALSE(g.gate.moving());
  drive();
  g.gate.robot_stopped();
  CHECK_FALSE(g.gate.moving());
  drive();
  g.gate.latched();
  CHECK_FALSE(g.gate.moving());
  CHECK_FALSE(g.gate.motion_owner().has_value());
  REQUIRE(g.latch.clear(EmergencyLatch::Clearer::Teacher, g.config.access, {}));
  drive();
  const std::size_t owed = g.gate.owed();  // the drives' answers
  const protocol::CommandToken own = g.gate.own_stop();
  CHECK_FALSE(g.gate.moving());
  CHECK(g.gate.owed() == owed);  // none for the bridge's own stop
  CHECK(g.gate.done(own, false, std::nullopt).empty());
}

TEST_CASE("command gate: a dead-man time is armed by a motion command and stands until a stop or another's motion") {
  Gate g;
  // Admits a command that must go to the robot, and says whether sending
  // it arms a dead-man time.
  const auto arms = [&](const MotionEffect& effect, const json& id) {
    const GateVerdict verdict = g.gate.admit(driver(1), effect, id, g.now);
    REQUIRE(verdict.kind == GateVerdict::Kind::Send);
    if (verdict.takes_lease) g.lease.take(1, 0, g.now);
    return g.gate.sent(driver(1), effect, id, verdict.token, g.now);
  };
  MotionEffect timed = kDrive;
  timed.deadman = 300ms;
  CHECK(arms(timed, 1));
  CHECK(g.gate.deadman_client() == 1);
  CHECK(g.gate.deadman_after() == 300ms);
  CHECK(g.gate.deadman_applies());
  // A motion command without one arms nothing; a stop voids it.
  CHECK_FALSE(arms(kDrive, 2));
  CHECK_FALSE(arms(kStop, 3));
  CHECK_FALSE(g.gate.deadman_applies());
  // A stop never arms one, even when it carries it (after motion, so that
  // it goes to the robot rather than riding on the stop before).
  CHECK_FALSE(arms(kDrive, 4));
  MotionEffect timed_stop = kStop;
  timed_stop.deadman = 300ms;
  CHECK_FALSE(arms(timed_stop, 5));
  CHECK_FALSE(g.gate.deadman_applies());
}
