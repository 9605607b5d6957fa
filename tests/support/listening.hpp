// The ports in the bridge's start-up line:
// "listening: native clients on 127.0.0.1:41234, JSON clients on 127.0.0.1:41235,
//  dashboard on http://127.0.0.1:41236/, Foxglove live view on ws://127.0.0.1:41237; session ..."
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace flockbridge::testing {

struct ListeningPorts {
  std::uint16_t native = 0;  ///< the family's own port; 0 when there is no robot
  std::uint16_t json = 0;
  std::uint16_t http = 0;      ///< 0 when the web server is off
  std::uint16_t foxglove = 0;  ///< 0 when the live view is off
};

inline std::optional<std::uint16_t> port_after(const std::string& line, const std::string& label) {
  const std::size_t at = line.find(label);
  if (at == std::string::npos) return std::nullopt;
  // "ADDRESS:PORT" ends at the next ',' or ';' (ADDRESS may hold colons: IPv6).
  const std::size_t end = line.find_first_of(",;", at);
  const std::size_t colon = line.rfind(':', end);
  if (colon == std::string::npos || colon < at) return std::nullopt;
  return static_cast<std::uint16_t>(std::stoi(line.substr(colon + 1)));
}

inline std::optional<ListeningPorts> listening_ports(const std::string& line) {
  const auto native = port_after(line, "native clients on ");  // none on a bridge with no robot (the class hub)
  const auto json = port_after(line, "JSON clients on ");
  if (!json) return std::nullopt;
  const auto http = port_after(line, "dashboard on http");             // http:// or https://
  const auto foxglove = port_after(line, "Foxglove live view on ws");  // ws:// or wss://
  return ListeningPorts{native.value_or(0), *json, http.value_or(0), foxglove.value_or(0)};
}

}  // namespace flockbridge::testing
