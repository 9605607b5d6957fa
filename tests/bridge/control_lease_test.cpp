// The control lease's rules (docs/clients.md, "Who may drive"), without a
// loop or a process: who takes it, who is refused, what renews it, and when
// it runs out.
#include <doctest/doctest.h>

#include <chrono>

#include "flockbridge/bridge/control_lease.hpp"

using namespace flockbridge::bridge;
using namespace std::chrono_literals;
using Verdict = ControlLease::Verdict;

namespace {

const flockbridge::protocol::SteadyTime kStart{std::chrono::seconds{1000}};
constexpr auto kIdle = 5000ms;
constexpr auto kSilence = 2000ms;

}  // namespace

TEST_CASE("a free lease is taken by a motion command, and anything else is anyone's") {
  ControlLease lease;
  CHECK(lease.check(1, false, false, kStart) == Verdict::Allowed);  // a claw, a display: nobody drives yet
  CHECK_FALSE(lease.holder());
  CHECK(lease.check(1, true, false, kStart) == Verdict::Takes);
  CHECK_FALSE(lease.holder());  // taken once the command has gone to the robot, not before
  lease.take(1, 42.5, kStart);
  REQUIRE(lease.holder());
  CHECK(lease.holder()->client == 1);
  CHECK(lease.holder()->since == 42.5);
  CHECK(lease.held_by(1));
  CHECK_FALSE(lease.held_by(2));
}

TEST_CASE("while one client drives, another's commands are refused, motion or not") {
  ControlLease lease;
  lease.take(1, 0, kStart);
  CHECK(lease.check(2, true, false, kStart) == Verdict::Busy);
  CHECK(lease.check(2, false, false, kStart) == Verdict::Busy);
  CHECK(lease.check(1, true, false, kStart) == Verdict::Allowed);
  CHECK(lease.check(1, false, false, kStart) == Verdict::Allowed);
}

TEST_CASE("a one-driver port's settings that do not move the robot are ignored, held or not") {
  ControlLease lease;
  CHECK(lease.check(3, false, true, kStart) == Verdict::Ignored);
  lease.take(1, 0, kStart);
  CHECK(lease.check(3, false, true, kStart) == Verdict::Ignored);
  CHECK(lease.check(3, true, true, kStart) == Verdict::Busy);
  lease.end(1);
  lease.take(3, 0, kStart);
  CHECK(lease.check(3, false, true, kStart) == Verdict::Allowed);  // the holder's settings go
}

TEST_CASE("only its holder ends a lease") {
  ControlLease lease;
  CHECK_FALSE(lease.end(1));
  lease.take(1, 0, kStart);
  CHECK_FALSE(lease.end(2));
  CHECK(lease.held_by(1));
  CHECK(lease.end(1));
  CHECK_FALSE(lease.holder());
  CHECK(lease.check(2, true, false, kStart) == Verdict::Takes);
}

TEST_CASE("the holder's commands renew the lease, which runs out after lease_idle without one") {
  ControlLease lease;
  lease.take(1, 0, kStart);
  CHECK_FALSE(lease.expired(kStart + 4999ms, kStart + 4999ms, false, kIdle, kSilence));
  CHECK(lease.expired(kStart + 5000ms, kStart + 4999ms, false, kIdle, kSilence) == "sent no command for 5000 ms");
  CHECK(lease.check(1, true, false, kStart + 4000ms) == Verdict::Allowed);  // renewed at 4 s
  CHECK_FALSE(lease.expired(kStart + 8999ms, kStart + 8999ms, false, kIdle, kSilence));
  CHECK(lease.expired(kStart + 9000ms, kStart + 8999ms, false, kIdle, kSilence));
  // Another client's refused command renews nothing.
  CHECK(lease.check(2, true, false, kStart + 8000ms) == Verdict::Busy);
  CHECK(lease.expired(kStart + 9000ms, kStart + 8999ms, false, kIdle, kSilence));
}

TEST_CASE("a one-driver port's program that falls silent loses the lease after control_silence") {
  ControlLease lease;
  lease.take(1, 0, kStart);
  // It still talks (ARIA's pulses), though it sends no command: the idle rule still applies.
  CHECK_FALSE(lease.expired(kStart + 1999ms, kStart, true, kIdle, kSilence));
  CHECK(lease.expired(kStart + 2000ms, kStart, true, kIdle, kSilence) == "sent nothing for 2000 ms");
  CHECK_FALSE(lease.expired(kStart + 3000ms, kStart + 2500ms, true, kIdle, kSilence));
  CHECK(lease.expired(kStart + 5000ms, kStart + 4900ms, true, kIdle, kSilence) == "sent no command for 5000 ms");
  // On any other port silence alone is not the end.
  CHECK_FALSE(lease.expired(kStart + 4000ms, kStart, false, kIdle, kSilence));
}

TEST_CASE("nothing expires when nobody drives") {
  ControlLease lease;
  CHECK_FALSE(lease.expired(kStart + 1h, kStart, true, kIdle, kSilence));
}
