// The robot on the local network by name (mDNS/DNS-SD; docs/fleet.md),
// through Avahi's static service files: the package installs
// /etc/avahi/services/flockbridge.service, writable by the service alone,
// and the bridge fills it in at start with the robot's name, family, model
// and ports; avahi-daemon sees the change and announces the JSON port as
// _flockbridge._tcp and the dashboard as _http._tcp. No D-Bus: the
// sandboxed service (a dynamic user) gets no answer on the system bus.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "flockbridge/protocol/bytes.hpp"

namespace flockbridge::bridge {

struct MdnsAnnouncement {
  std::string name;  ///< "robot-07 (family)": what a browser lists
  std::uint16_t json_port = 0;
  std::uint16_t http_port = 0;  ///< 0: no dashboard
  std::string http_path = "/";
  std::vector<std::string> txt;  ///< "robot=robot-07", "family=...", ...
};

/// The Avahi service file (XML) for the announcement.
[[nodiscard]] std::string avahi_service_file(const MdnsAnnouncement& announcement);

/// Writes the service file in place: it must exist (the package makes it,
/// writable by the service); nothing is created where there is none.
[[nodiscard]] protocol::Result<protocol::Done> write_avahi_service_file(const std::string& path,
                                                                        const MdnsAnnouncement& announcement);

}  // namespace flockbridge::bridge
