// Sends numbered commands through the bridge and checks each against what
// the simulated Uno received: the ground truth for "nothing is lost without a
// word". Four kinds take turns: text for the LCD ("n00042", which repeating
// does no harm) and the three commands whose repetition moves the robot
// further (a move to distance, a degree rotation, an arc), each with
// arguments that only it has. So the simulator's "rx" lines say exactly which
// commands arrived, how often, and which arrived damaged.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/process.hpp"
#include "support/tcp_client.hpp"

namespace flockbridge::testing {

/// One kind of command's share of the audit.
struct KindAudit {
  long sent = 0;
  long confirmed = 0;    ///< ok, and the Uno acknowledged it
  long unconfirmed = 0;  ///< ok: sent, no NAK in its window, no ACK
  long failed = 0;       ///< the client was told it failed
  long duplicated = 0;   ///< extra exact copies the Uno received (and carried out)
  long lost_without_word = 0;
};

struct CommandAudit {
  long sent = 0;
  long answered_ok = 0;
  long answered_error = 0;
  long unanswered = 0;            ///< no reply at all: must be 0
  long delivered_exact = 0;       ///< the Uno received it byte-exact (at least once)
  long delivered_twice = 0;       ///< extra exact copies (a resend after a lost ACK)
  long lost_without_word = 0;     ///< the client was told ok, the Uno never received it: must be 0
  long failed_but_delivered = 0;  ///< reported failed, yet it did arrive (its ACKs were lost)
  long damaged_accepted = 0;      ///< told ok, but only a damaged copy arrived (the XOR's blind spot)
  long damaged_frames = 0;        ///< damaged frames the Uno took for good, of any command
  std::map<std::string, long> failed_by_code;
  std::map<std::string, KindAudit> by_kind;  ///< by JSON command name
  std::vector<int> lost_ids;                 ///< the numbers of the commands lost without a word
};

/// Strips the "[seconds] " prefix of a timestamped simulator line.
std::string without_timestamp(const std::string& line);

/// Sends `count` commands through `client` (a JSON client), keeping at
/// most `window` unanswered, and audits them against the simulator's log.
/// Messages that are not replies go to `other` (sensor messages, notices).
CommandAudit audit_commands(TcpClient& client, ChildProcess& sim, int count, int window,
                            const std::function<void(const nlohmann::json&)>& other);

}  // namespace flockbridge::testing
