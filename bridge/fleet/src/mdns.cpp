#include "flockbridge/bridge/mdns.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace flockbridge::bridge {
namespace {

std::string xml_text(std::string_view text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

void add_service(std::string& xml, std::string_view type, std::uint16_t port, const std::vector<std::string>& txt) {
  xml += "  <service>\n    <type>" + std::string(type) + "</type>\n    <port>" + std::to_string(port) + "</port>\n";
  for (const std::string& record : txt) xml += "    <txt-record>" + xml_text(record) + "</txt-record>\n";
  xml += "  </service>\n";
}

}  // namespace

std::string avahi_service_file(const MdnsAnnouncement& announcement) {
  std::string xml =
      "<?xml version=\"1.0\" standalone='no'?>\n"
      "<!DOCTYPE service-group SYSTEM \"avahi-service.dtd\">\n"
      "<!-- Written by flockbridge at each start (mdns.service_file): the robot on the network. -->\n"
      "<service-group>\n"
      "  <name>" +
      xml_text(announcement.name) + "</name>\n";
  add_service(xml, "_flockbridge._tcp", announcement.json_port, announcement.txt);
  if (announcement.http_port != 0)
    add_service(xml, "_http._tcp", announcement.http_port, {"path=" + announcement.http_path});
  xml += "</service-group>\n";
  return xml;
}

protocol::Result<protocol::Done> write_avahi_service_file(const std::string& path,
                                                          const MdnsAnnouncement& announcement) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return protocol::Error{"cannot write " + path + ": " + std::strerror(errno)};
  const std::string xml = avahi_service_file(announcement);
  std::size_t written = 0;
  while (written < xml.size()) {
    const ssize_t n = ::write(fd, xml.data() + written, xml.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string error = std::strerror(errno);
      ::close(fd);
      return protocol::Error{"cannot write " + path + ": " + error};
    }
    written += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0) return protocol::Error{"cannot write " + path + ": " + std::strerror(errno)};
  return protocol::Done{};
}

}  // namespace flockbridge::bridge
