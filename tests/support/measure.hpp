// What the benchmarks measure the same way: a process's memory, percentiles,
// and the sensor latency seen by many JSON readers (on port 2006, /ws, or
// the Foxglove live view).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "support/foxglove_client.hpp"
#include "support/tcp_client.hpp"
#include "support/web_client.hpp"

namespace flockbridge::testing {

/// A field of /proc/PID/status ("VmRSS", "VmHWM"), as written there ("4668 kB").
std::string process_status(pid_t pid, const std::string& field);

/// The value below which a share `p` of the (sorted) values lie; 0 when empty.
double percentile(const std::vector<double>& sorted, double p);

struct SensorLatency {
  std::vector<double> ms;  ///< sorted: from the bridge's receive timestamp to a reader's receive time
  long missed = 0;         ///< gaps in the readers' sequence numbers
};

/// Reads every reader for `seconds`; `last_seq` (one per reader, 0 at first)
/// carries the sequence numbers from one call to the next. For TcpClient
/// (JSON lines), WebSocketClient (/ws) and FoxgloveClient (subscribed to /sensor).
template <typename Client>
SensorLatency read_sensor_latency(std::vector<Client>& readers, std::vector<long>& last_seq, double seconds);

}  // namespace flockbridge::testing
