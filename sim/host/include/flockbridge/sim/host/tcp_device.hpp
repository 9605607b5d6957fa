// A simulated robot reached over TCP, as MobileSim and AMRISim serve theirs
// (and a robot's Wi-Fi serial bridge): a listener on 127.0.0.1 that takes
// one host at a time. A second host is closed at once; the first one's
// leaving is the port closing.
#pragma once

#include <uv.h>

#include <array>
#include <cstdint>
#include <string>

#include "flockbridge/sim/host/pty_device.hpp"

namespace flockbridge::sim {

class TcpDevice final : public SimDevice {
 public:
  /// Listens on 127.0.0.1:`port` once plugged in (0: a free port).
  TcpDevice(uv_loop_t* loop, std::uint16_t port, Listener& listener, Log log);
  TcpDevice(const TcpDevice&) = delete;
  TcpDevice& operator=(const TcpDevice&) = delete;
  TcpDevice(TcpDevice&&) = delete;
  TcpDevice& operator=(TcpDevice&&) = delete;
  ~TcpDevice() override;

  /// Starts listening (the link path is not used).
  [[nodiscard]] protocol::Result<protocol::Done> plug_in(const std::string& link_path) override;
  void unplug() override;
  void close() override { unplug(); }
  void write(protocol::ByteView bytes) override;
  [[nodiscard]] std::string device_path() const override;
  [[nodiscard]] const std::string& link_path() const noexcept override { return link_; }
  [[nodiscard]] bool connected() const noexcept override { return static_cast<bool>(host_); }

 private:
  void on_connection(int status);
  void on_read(ssize_t nread, const uv_buf_t* buf);
  void drop_host();

  uv_loop_t* loop_;
  std::uint16_t port_;
  std::uint16_t bound_port_ = 0;
  Listener& listener_;
  Log log_;
  std::string link_;
  UvHandle<uv_tcp_t> server_;
  UvHandle<uv_tcp_t> host_;
  std::array<char, 4096> buffer_{};
};

}  // namespace flockbridge::sim
