#include "flockbridge/protocol/serial_probe.hpp"

#include <cstdio>

namespace flockbridge::protocol {

std::string usb_id_text(const UsbIdentity& usb) {
  char text[16];
  std::snprintf(text, sizeof text, "%04x:%04x", usb.vendor, usb.product);
  return text;
}

}  // namespace flockbridge::protocol
