// The SMR's probe against the simulated bus: both modules polled answer.
#include <doctest/doctest.h>

#include "flockbridge/protocol/smr/probe.hpp"
#include "flockbridge/sim/smr/smr_model.hpp"
#include "support/probe_conversation.hpp"

using namespace flockbridge;

namespace {

/// The simulated bus, and the probe's conversation with it.
struct ProbedBus {
  protocol::Bytes sent_back;
  sim::smr::SmrModel robot{
      {},
      [this](protocol::ByteView bytes) { sent_back.insert(sent_back.end(), bytes.begin(), bytes.end()); },
      [](std::string_view /*line*/) {}};

  testing::Conversation probed() {
    protocol::smr::SmrProbe probe;
    return testing::converse(probe, 0, [&](const protocol::Bytes& bytes) {
      sent_back.clear();
      robot.bytes_received(bytes, protocol::SteadyTime{});
      return sent_back;
    });
  }
};

}  // namespace

TEST_CASE("smr probe against the simulated bus: the left motor and the power module answer") {
  ProbedBus bus;
  const testing::Conversation talk = bus.probed();
  REQUIRE(talk.found);
  CHECK(talk.exchanges == 1);
}

TEST_CASE("smr probe against a bus whose power module is silent: not recognised, not refuted") {
  ProbedBus bus;
  bus.robot.set_module_silent(protocol::smr::module::kPower, true);
  const testing::Conversation talk = bus.probed();
  CHECK_FALSE(talk.found);
  CHECK_FALSE(talk.refuted);
}
