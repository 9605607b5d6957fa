// Pairing's rules (access.native_port_mode paired), without a loop or a
// process: who may approve a waiting connection, and what the waiting list
// says.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "flockbridge/bridge/pairing.hpp"

using namespace flockbridge::bridge;
using flockbridge::protocol::ErrorCode;

namespace {

// The addresses of the connections still open (9 is gone).
const std::map<std::uint64_t, std::string> kPeers{{5, "10.0.3.17:50005"}, {6, "10.0.3.17:50006"}};

const std::string* peer_of(std::uint64_t client) {
  const auto found = kPeers.find(client);
  return found == kPeers.end() ? nullptr : &found->second;
}

}  // namespace

TEST_CASE("a viewer may not approve, a driver or the teacher may, once") {
  Pairing pairing;
  pairing.wait(5, 100.0);
  pairing.wait(6, 101.0);
  const auto refused = pairing.approve(Role::Viewer, 5);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == ErrorCode::Denied);
  CHECK(refused.error().message.find("PIN") != std::string::npos);
  CHECK(pairing.waiting(5));

  CHECK(pairing.approve(Role::Driver, 5));
  CHECK_FALSE(pairing.waiting(5));
  const auto again = pairing.approve(Role::Driver, 5);
  REQUIRE_FALSE(again);
  CHECK(again.error().message == "approve: client 5 is not waiting to be approved (it may have gone, or been "
                                 "approved already)");
  CHECK(pairing.approve(Role::Teacher, 6));
  CHECK(pairing.list().empty());
}

TEST_CASE("a connection that is leaving is not approved, and a client that never waited neither") {
  Pairing pairing;
  pairing.wait(5, 100.0);
  CHECK_FALSE(pairing.approve(Role::Teacher, 5, true));
  CHECK(pairing.waiting(5));  // forgotten when it has gone, not before
  CHECK(pairing.forget(5));
  CHECK_FALSE(pairing.forget(5));
  CHECK_FALSE(pairing.approve(Role::Teacher, 7));
}

TEST_CASE("the pairing message lists the waiting connections oldest first, without those gone") {
  Pairing pairing;
  pairing.wait(5, 100.0);
  pairing.wait(9, 100.5);
  pairing.wait(6, 101.0);
  const auto message = nlohmann::json::parse(pairing.message(peer_of));
  CHECK(message["type"] == "pairing");
  REQUIRE(message["waiting"].size() == 2);
  CHECK(message["waiting"][0]["client"] == 5);
  CHECK(message["waiting"][0]["peer"] == "10.0.3.17:50005");
  CHECK(message["waiting"][0]["since"] == 100.0);
  CHECK(message["waiting"][1]["client"] == 6);
  CHECK(nlohmann::json::parse(Pairing{}.message(peer_of))["waiting"].empty());
}
