// Pairing (access.native_port_mode paired): a connection on the family's
// own port cannot give a PIN, so it waits, watching and stopping only,
// until someone with the PIN approves it on the dashboard (JSON `approve`);
// it then drives until it disconnects. The rules and the waiting list only:
// the Bridge gives the approved client its role and tells everyone.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flockbridge/bridge/access.hpp"
#include "flockbridge/protocol/bytes.hpp"

namespace flockbridge::bridge {

class Pairing {
 public:
  struct Waiting {
    std::uint64_t client = 0;
    double since = 0;  ///< Unix seconds
  };

  /// `client` waits to be approved, from `since`.
  void wait(std::uint64_t client, double since);
  [[nodiscard]] bool waiting(std::uint64_t client) const noexcept;
  /// `client` has gone; true when it was waiting.
  bool forget(std::uint64_t client);
  /// A client of `approver`'s role approves `client`: refused unless the
  /// approver has the PIN (a driver or the teacher) and `client` waits and
  /// is not `leaving` (its connection closing).
  [[nodiscard]] protocol::Result<protocol::Done> approve(Role approver, std::uint64_t client, bool leaving = false);
  [[nodiscard]] const std::vector<Waiting>& list() const noexcept { return waiting_; }

  /// The pairing message: every waiting connection with its address, oldest
  /// first (`peer_of` gives a client's address, which outlives the call;
  /// null for a client gone).
  [[nodiscard]] std::string message(const std::function<const std::string*(std::uint64_t)>& peer_of) const;

 private:
  std::vector<Waiting> waiting_;  ///< oldest first
};

}  // namespace flockbridge::bridge
