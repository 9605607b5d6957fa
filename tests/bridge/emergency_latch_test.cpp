// The emergency latch's rules, without a loop or a process: who may clear a
// local stop and a fleet's stop, with and without secrets set; both at once;
// and what a message on the fleet's command topics must be to be obeyed.
#include <doctest/doctest.h>

#include <string>
#include <variant>
#include <vector>

#include "flockbridge/bridge/emergency_latch.hpp"
#include "flockbridge/bridge/fleet.hpp"

using namespace flockbridge::bridge;
using Clearer = EmergencyLatch::Clearer;
using Names = std::vector<std::string>;

namespace {

AccessSettings no_secrets() {
  return {};
}

AccessSettings with_teacher(bool drivers_clear = false) {
  AccessSettings access;
  access.driver_pin = "4711";
  access.teacher_secret = "sesame";
  access.driver_clears_emergency = drivers_clear;
  return access;
}

EmergencyLatch::Hold client(std::uint64_t id) {
  return {id, "10.0.3.17:5000" + std::to_string(id), {}, 100.0 + static_cast<double>(id)};
}

EmergencyLatch::Hold fleet(const std::string& reason = "end of the lesson") {
  return {0, "the fleet (teacher)", reason, 200.0};
}

bool denied(const flockbridge::protocol::Result<EmergencyLatch::Cleared>& result) {
  return !result && result.error().code == flockbridge::protocol::ErrorCode::Denied;
}

}  // namespace

TEST_CASE(
    "a local stop: with no secrets anyone (a driver) clears it - with a teacher, the teacher alone, or drivers "
    "when allowed") {
  struct Case {
    const char* what;
    AccessSettings access;
    Clearer who;
    bool cleared;
    Names may_clear;
  };
  const std::vector<Case> cases{
      {"no secrets: a driver", no_secrets(), Clearer::Driver, true, {"driver"}},
      {"no secrets: a viewer cannot be (everyone drives), and may not",
       no_secrets(),
       Clearer::Viewer,
       false,
       {"driver"}},
      {"a teacher set: a driver may not", with_teacher(), Clearer::Driver, false, {"teacher"}},
      {"a teacher set: the teacher", with_teacher(), Clearer::Teacher, true, {"teacher"}},
      {"drivers allowed: a driver", with_teacher(true), Clearer::Driver, true, {"teacher", "driver"}},
      {"drivers allowed: a viewer may not", with_teacher(true), Clearer::Viewer, false, {"teacher", "driver"}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    EmergencyLatch latch;
    CHECK(latch.latch(StopSource::Local, client(4)));
    CHECK(latch.may_clear(c.access) == c.may_clear);
    const auto result = latch.clear(c.who, c.access, client(5));
    if (c.cleared) {
      REQUIRE(result);
      CHECK(result.value().local);
      CHECK_FALSE(latch.latched());
      CHECK(latch.last_cleared()->client == 5);
    } else {
      CHECK(denied(result));
      CHECK(latch.latched());
    }
    // The fleet's clear is not for a local stop.
    const auto by_fleet = latch.clear(Clearer::Fleet, c.access, fleet());
    REQUIRE(by_fleet);
    CHECK_FALSE(by_fleet.value().any());
  }
}

TEST_CASE("the fleet's stop is cleared by the fleet or this robot's teacher, never by a driver, also with no secrets") {
  for (const bool teacher_set : {false, true}) {
    CAPTURE(teacher_set);
    const AccessSettings access = teacher_set ? with_teacher(true) : no_secrets();
    EmergencyLatch latch;
    latch.latch(StopSource::Fleet, fleet());
    CHECK(latch.may_clear(access) == (teacher_set ? Names{"fleet", "teacher"} : Names{"fleet"}));
    CHECK(denied(latch.clear(Clearer::Driver, access, client(4))));
    CHECK(denied(latch.clear(Clearer::Viewer, access, client(4))));
    CHECK(latch.clear(Clearer::Driver, access, client(4)).error().message.find("class hub") != std::string::npos);
    CHECK(latch.latched());
    if (teacher_set) {
      EmergencyLatch other;
      other.latch(StopSource::Fleet, fleet());
      REQUIRE(other.clear(Clearer::Teacher, access, client(6)));
      CHECK_FALSE(other.latched());
    }
    const auto cleared = latch.clear(Clearer::Fleet, access, fleet(""));
    REQUIRE(cleared);
    CHECK(cleared.value().fleet);
    CHECK_FALSE(latch.latched());
    CHECK(latch.last_cleared_by() == StopSource::Fleet);
  }
}

TEST_CASE("both stops at once: each is cleared by its own people, and one who may clear one only clears nothing") {
  const AccessSettings access = no_secrets();
  EmergencyLatch latch;
  CHECK(latch.latch(StopSource::Local, client(4)));
  CHECK_FALSE(latch.latch(StopSource::Fleet, fleet()));
  CHECK(latch.first_hold()->client == 0);  // messages name the fleet's first
  CHECK(latch.may_clear(access).empty());  // nobody alone
  CHECK(latch.who_may_clear(access).find("then a driver") != std::string::npos);
  // A driver could clear the local stop, not the fleet's: nothing changes.
  CHECK(denied(latch.clear(Clearer::Driver, access, client(5))));
  CHECK(latch.hold(StopSource::Local).has_value());
  // The fleet clears its own; the robot's own still holds; then a driver clears that.
  REQUIRE(latch.clear(Clearer::Fleet, access, fleet("")).value().fleet);
  CHECK(latch.latched());
  CHECK(latch.first_hold()->client == 4);
  REQUIRE(latch.clear(Clearer::Driver, access, client(5)).value().local);
  CHECK_FALSE(latch.latched());

  // The teacher clears both at once.
  const AccessSettings teacher = with_teacher();
  latch.latch(StopSource::Local, client(4));
  latch.latch(StopSource::Fleet, fleet());
  CHECK(latch.may_clear(teacher) == Names{"teacher"});
  const auto both = latch.clear(Clearer::Teacher, teacher, client(7));
  REQUIRE(both);
  CHECK(both.value().local);
  CHECK(both.value().fleet);
  CHECK_FALSE(latch.latched());
}

TEST_CASE("a message on a fleet command topic is obeyed only as a JSON object that is not retained") {
  struct Case {
    const char* what;
    std::string payload;
    bool retained;
    bool obeyed;
    bool quiet;
  };
  const std::vector<Case> cases{
      {"the teacher's stop", R"({"by":"teacher","reason":"end of the lesson"})", false, true, false},
      {"an empty object", "{}", false, true, false},
      {"unknown keys are skipped", R"({"by":"t","v":2})", false, true, false},
      {"empty: a retained message deleted (mosquitto_pub -r -n)", "", false, false, true},
      {"empty and retained", "", true, false, true},
      {"retained", R"({"by":"teacher"})", true, false, false},
      {"text", "stop", false, false, false},
      {"a JSON string", R"("stop")", false, false, false},
      {"a JSON number", "1", false, false, false},
      {"an array", "[]", false, false, false},
      {"null", "null", false, false, false},
      {"by is not text", R"({"by":5})", false, false, false},
      {"reason is not text", R"({"reason":{"a":1}})", false, false, false},
      {"cut short", R"({"by":"tea)", false, false, false},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    const auto read = read_fleet_command(c.payload, c.retained);
    CHECK(std::holds_alternative<FleetCommand>(read) == c.obeyed);
    if (const auto* ignored = std::get_if<IgnoredCommand>(&read)) {
      CHECK(ignored->quiet == c.quiet);
      CHECK_FALSE(ignored->why.empty());
    }
  }
  const auto command =
      std::get<FleetCommand>(read_fleet_command(R"({"by":"teacher\nfake line","reason":"why"})", false));
  CHECK(command.by == "teacher fake line");  // fit for one log line
  CHECK(command.reason == "why");
}
