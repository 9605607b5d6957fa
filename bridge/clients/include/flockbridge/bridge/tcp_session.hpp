// A client on a plain TCP port: the robot family's own protocol (read by the
// session's NativeClient) or JSON lines (port 2006), read and written on a
// libuv stream.
//
// Writes go straight into the kernel when it has room (send or sendmsg on
// the socket, or the Bridge's batch of several clients' writes, while no
// uv_write is in flight); what it cannot take waits in
// one uv_write at a time, so the queue behind it keeps replacing old sensor
// messages with new ones.
#pragma once

#include <uv.h>

#include <span>

#include "flockbridge/bridge/send_batch.hpp"
#include "flockbridge/bridge/session.hpp"
#include "flockbridge/protocol/message_decoder.hpp"

namespace flockbridge::bridge {

class TcpSession final : public Session {
 public:
  TcpSession(uv_loop_t* loop, Host& host, std::uint64_t id, ClientKind kind, const Config& config,
             protocol::BridgeCounters& counters, std::unique_ptr<NativeClient> native = nullptr);
  TcpSession(const TcpSession&) = delete;
  TcpSession& operator=(const TcpSession&) = delete;
  ~TcpSession() override;

  /// Accepts the pending connection of `server`. Returns a libuv code.
  [[nodiscard]] int accept(uv_stream_t* server);
  [[nodiscard]] int socket_fd() const noexcept override { return closing() ? -1 : fd_; }

 private:
  void start_transport() override;
  void flush() override;
  void close_transport(std::string_view reason, CloseKind kind) override;
  void transport_housekeeping(SteadyTime now) override;

  bool add_write(SendBatch& batch) override;
  void write_sent(const SendBatch::Result& result) override;

  /// Takes the next write's messages out of the queue (into batch_).
  [[nodiscard]] std::span<const iovec> take_write();
  /// After the kernel took `result.written` bytes of batch_: what it did not
  /// take goes to a uv_write. False when the session closed instead.
  bool finish_write(const SendBatch::Result& result);
  void on_read(ssize_t nread, const uv_buf_t* buf);
  void on_write_done(int status);

  uv_loop_t* loop_;
  UvHandle<uv_tcp_t> tcp_;
  int fd_ = -1;                      ///< the socket under tcp_, written directly while no uv_write is in flight
  protocol::MessageDecoder lines_;   ///< JSON clients' lines
  std::vector<SharedBuffer> batch_;  ///< what flush() is writing, kept to reuse its storage
};

}  // namespace flockbridge::bridge
