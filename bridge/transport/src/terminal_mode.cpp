#include "flockbridge/bridge/terminal_mode.hpp"

#include <array>
#include <utility>

namespace flockbridge::bridge {
namespace {

int baud_of(speed_t speed) {
  static constexpr std::array<std::pair<speed_t, int>, 16> kRates{{
      {B1200, 1200},
      {B2400, 2400},
      {B4800, 4800},
      {B9600, 9600},
      {B19200, 19200},
      {B38400, 38400},
      {B57600, 57600},
      {B115200, 115200},
      {B230400, 230400},
      {B460800, 460800},
      {B500000, 500000},
      {B576000, 576000},
      {B921600, 921600},
      {B1000000, 1000000},
      {B2000000, 2000000},
      {B0, 0},
  }};
  for (const auto& [value, rate] : kRates) {
    if (value == speed) return rate;
  }
  return -1;
}

void flag(std::string& out, tcflag_t field, tcflag_t bit, const char* name) {
  out += (field & bit) != 0 ? " " : " -";
  out += name;
}

}  // namespace

void apply_serial_mode(termios& settings) noexcept {
  // sp_open(): "a raw channel".
  settings.c_iflag &= ~tcflag_t{IGNBRK | BRKINT | PARMRK | ISTRIP | INLCR | IGNCR | ICRNL | IMAXBEL | IUCLC};
  settings.c_oflag &= ~tcflag_t{OPOST | ONLCR | OCRNL | ONOCR | ONLRET | OLCUC | NLDLY | CRDLY | TABDLY | BSDLY |
                                VTDLY | FFDLY | OFILL};
  settings.c_lflag &= ~tcflag_t{ISIG | ICANON | ECHO | IEXTEN};
  settings.c_cc[VMIN] = 0;
  settings.c_cc[VTIME] = 0;
  settings.c_cflag |= tcflag_t{CLOCAL | CREAD | HUPCL};
  // 8 data bits, no parity (parity errors ignored), one stop bit.
  settings.c_cflag = (settings.c_cflag & ~tcflag_t{CSIZE | PARENB | PARODD | CMSPAR | CSTOPB}) | CS8;
  settings.c_iflag = (settings.c_iflag & ~tcflag_t{INPCK}) | IGNPAR;
  // No flow control, neither RTS/CTS nor XON/XOFF.
  settings.c_cflag &= ~tcflag_t{CRTSCTS};
  settings.c_iflag &= ~tcflag_t{IXON | IXOFF | IXANY};
}

std::string describe_terminal(const termios& settings) {
  const int in = baud_of(cfgetispeed(&settings));
  const int out = baud_of(cfgetospeed(&settings));
  std::string text = std::to_string(in);
  if (out != in) text.append("/").append(std::to_string(out));
  text += " baud, ";
  switch (settings.c_cflag & CSIZE) {
    case CS5:
      text += "5";
      break;
    case CS6:
      text += "6";
      break;
    case CS7:
      text += "7";
      break;
    default:
      text += "8";
      break;
  }
  text += (settings.c_cflag & PARENB) == 0 ? "N" : ((settings.c_cflag & PARODD) != 0 ? "O" : "E");
  text += (settings.c_cflag & CSTOPB) != 0 ? "2," : "1,";
  flag(text, settings.c_cflag, CRTSCTS, "crtscts");
  flag(text, settings.c_iflag, IXON, "ixon");
  flag(text, settings.c_iflag, IXOFF, "ixoff");
  text += ",";
  flag(text, settings.c_cflag, CLOCAL, "clocal");
  flag(text, settings.c_cflag, CREAD, "cread");
  flag(text, settings.c_cflag, HUPCL, "hupcl");
  text += ",";
  flag(text, settings.c_lflag, ICANON, "icanon");
  flag(text, settings.c_lflag, ECHO, "echo");
  flag(text, settings.c_lflag, ISIG, "isig");
  flag(text, settings.c_iflag, ICRNL, "icrnl");
  flag(text, settings.c_oflag, OPOST, "opost");
  text += ", min " + std::to_string(settings.c_cc[VMIN]) + " time " + std::to_string(settings.c_cc[VTIME]);
  return text;
}

}  // namespace flockbridge::bridge
