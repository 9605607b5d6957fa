// Port 24901's reader (bridge/smr/smrd_client): SMRD's READY banking, the
// period so far for a client that had none banked, END and the new period
// only for clients with a period banked, commands for the robot, and what
// becomes of garbage.
#include <doctest/doctest.h>

#include <string>
#include <variant>
#include <vector>

#include "flockbridge/bridge/smr/smrd_client.hpp"

using namespace flockbridge;
using namespace std::chrono_literals;
using bridge::MessageOrigin;
using bridge::NativeInput;
using bridge::smr::PeriodSoFar;
using bridge::smr::SmrdClient;

namespace {

std::string bytes(std::initializer_list<int> values) {
  std::string out;
  for (const int v : values) out.push_back(static_cast<char>(v));
  return out;
}

const std::string kEnd = bytes({0xE1, 0x01});
const std::string kStart7 = bytes({0xE9, 0x00, 7, 0, 0, 0, 0x10, 0x27, 0, 0});
const std::string kStart8 = bytes({0xE9, 0x00, 8, 0, 0, 0, 0x20, 0x4E, 0, 0});
const std::string kLeft = bytes({0x05, 0xA1, 0x00, 0x10, 0x00, 0x80});

std::vector<NativeInput> feed(SmrdClient& client, const std::string& bytes_in, protocol::SteadyTime now = {}) {
  client.feed(protocol::as_bytes(bytes_in), now);
  std::vector<NativeInput> inputs;
  while (auto input = client.next()) inputs.push_back(std::move(*input));
  return inputs;
}

/// Runs a message of the stream past the client; whether it went to it.
bool stream(SmrdClient& client, const std::string& message) {
  return client.admit(message, MessageOrigin::Robot);
}

}  // namespace

TEST_CASE("READY banks a period, at most two - END uses one, and only banked periods are sent") {
  PeriodSoFar period;
  period.follow(kStart7);
  period.follow(kLeft);
  SmrdClient client(period);
  CHECK_FALSE(stream(client, kLeft));  // nothing banked yet: nothing sent

  // The first READY: the period so far at once, from its START.
  auto inputs = feed(client, bytes({0xE1, 0x02}));
  REQUIRE(inputs.size() == 1);
  CHECK(*std::get<bridge::native_input::Reply>(inputs[0]).message == kStart7 + kLeft + kLeft);
  CHECK(client.ready() == 1);

  CHECK(feed(client, bytes({0xE1, 0x02, 0xE1, 0x02})).empty());  // banked, nothing sent
  CHECK(client.ready() == 2);                                    // capped at two

  CHECK(stream(client, kLeft));
  CHECK(stream(client, kEnd));
  CHECK(client.ready() == 1);
  CHECK(stream(client, kStart8));
  CHECK(stream(client, kLeft));
  CHECK(stream(client, kEnd));
  CHECK(client.ready() == 0);
  CHECK_FALSE(stream(client, kStart7));  // the next period: none banked
  CHECK_FALSE(stream(client, kLeft));

  // READY again: what it missed of the period so far comes at once.
  inputs = feed(client, bytes({0xE1, 0x02}));
  REQUIRE(inputs.size() == 1);
  CHECK(*std::get<bridge::native_input::Reply>(inputs[0]).message == kStart7 + kLeft);
}

TEST_CASE("the bridge's own messages never reach an SMR program") {
  SmrdClient client(PeriodSoFar{});
  (void)feed(client, bytes({0xE1, 0x02}));
  CHECK_FALSE(client.admit(bytes({0x05, 'L', 'N', 'K', 'u', 'p'}), MessageOrigin::Bridge));
  CHECK(stream(client, kLeft));
}

TEST_CASE("bus messages of one read go to the robot as one command, READY and the rest in order") {
  SmrdClient client(PeriodSoFar{});
  const auto inputs = feed(client, bytes({0x02, 0x11, 0x0A, 0x02, 0x12, 0xF6, 0xE1, 0x02, 0x21, 0x73}));
  REQUIRE(inputs.size() == 2);
  const auto& first = std::get<protocol::ClientRequest>(inputs[0]);
  CHECK(std::get<protocol::SendCommand>(first).payload == protocol::Bytes{0x02, 0x11, 0x0A, 0x02, 0x12, 0xF6});
  const auto& second = std::get<protocol::ClientRequest>(inputs[1]);
  CHECK(std::get<protocol::SendCommand>(second).payload == protocol::Bytes{0x21, 0x73});  // RS232: the link decides
  CHECK(client.ready() == 1);
}

TEST_CASE("garbage: a type with no meaning disconnects at its first byte, other control messages are reported") {
  SmrdClient client(PeriodSoFar{});
  auto inputs = feed(client, bytes({0xE1, 0x05}));
  REQUIRE(inputs.size() == 1);
  CHECK(std::get<protocol::Error>(inputs[0]).message == "SMRD control message [control: 05] ignored");

  inputs = feed(client, bytes({0x02, 0x11, 0x05, 0x9B}));  // type 4, 27 bytes to come: not waited for
  REQUIRE(inputs.size() == 2);
  CHECK(std::holds_alternative<protocol::ClientRequest>(inputs[0]));  // what came before it still goes
  CHECK(std::get<bridge::native_input::Disconnect>(inputs[1]).reason.find("not SMRD's protocol: a message of type 4") ==
        0);
  CHECK(feed(client, bytes({0xE1, 0x02})).empty());  // nothing more is read
}

TEST_CASE("a message cut short is dropped after the timeout") {
  SmrdClient client(PeriodSoFar{});
  CHECK(feed(client, bytes({0x05, 0xA1, 0x00}), protocol::SteadyTime{} + 1s).empty());
  CHECK(client.expire(protocol::SteadyTime{} + 2s, 2s) == 0);
  CHECK(client.expire(protocol::SteadyTime{} + 3s, 2s) == 3);
  const auto inputs = feed(client, bytes({0x02, 0x11, 0x00}), protocol::SteadyTime{} + 4s);
  REQUIRE(inputs.size() == 1);  // the next message reads as new
}
