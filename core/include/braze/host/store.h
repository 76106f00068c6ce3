#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace braze::host {

/// A key-value store every rank of a job reaches: the rendezvous through which rank 0 hands
/// NCCL's unique id to the others. Values are bytes (any value, NUL included). A key is set
/// once; setting it again replaces the value.
class Store {
 public:
  virtual ~Store() = default;

  /// Stores `value` under `key`, visible to every rank once this returns.
  virtual void set(const std::string& key, std::string_view value) = 0;

  /// The value of `key`, waiting until some rank sets it. Throws a braze::Error naming the key,
  /// this store (describe()) and `timeout` when it is still unset after `timeout`.
  virtual std::string get(const std::string& key, std::chrono::milliseconds timeout) = 0;

  /// Where the store lives, for messages: "the TCP store at node0:29500".
  virtual std::string describe() const = 0;

  /// 0, 1, 2, ... on successive calls with the same `name` on this object. Ranks that create
  /// their communicators in the same order get the same numbers, which keep the keys of
  /// successive rendezvous on one store apart.
  int64_t nextGeneration(std::string_view name);

 protected:
  /// The error get() throws on timeout, in one wording for every store.
  [[noreturn]] void throwTimeout(const std::string& key, std::chrono::milliseconds timeout) const;

 private:
  std::mutex generations_mutex_;
  std::map<std::string, int64_t, std::less<>> generations_;
};

/// A store served over TCP by rank 0. The server (`is_server`) listens on every interface at
/// `port` and answers from a thread until destroyed; every rank, server included, talks to it
/// as a client over one connection, so calls from several threads of a rank take turns. The
/// protocol is private to Braze and unauthenticated: run it on a trusted network, like
/// torchrun's store.
class TcpStore final : public Store {
 public:
  /// Connects to `address`:`port` (a host name or an IPv4/IPv6 address), retrying for up to
  /// `connect_timeout` so that clients may start before the server. With `is_server`, first
  /// listens there; port 0 picks a free port, which port() returns. Throws a braze::Error
  /// naming the address and port when the port is taken, cannot be reached in time, or
  /// answers but is not a Braze store.
  TcpStore(std::string address, int port, bool is_server,
           std::chrono::milliseconds connect_timeout = std::chrono::seconds(60));
  /// Stops and joins the server thread, which ends every other rank's connection.
  ~TcpStore() override;
  TcpStore(const TcpStore&) = delete;
  TcpStore& operator=(const TcpStore&) = delete;

  void set(const std::string& key, std::string_view value) override;
  std::string get(const std::string& key, std::chrono::milliseconds timeout) override;
  std::string describe() const override;

  /// The port: the one chosen by the server when constructed with port 0.
  int port() const { return port_; }
  bool isServer() const { return server_ != nullptr; }

 private:
  class Server;
  /// Sends one request and reads its reply; throws naming the store when the connection fails.
  std::string call(char op, const std::string& key, std::string_view payload,
                   std::chrono::milliseconds reply_timeout, bool* found);

  std::string address_;
  int port_;
  std::unique_ptr<Server> server_;
  std::mutex client_mutex_;
  int socket_ = -1;
};

/// A store in a directory of a filesystem every rank mounts (NFS, Lustre, ...): one file per
/// key, written to a temporary name and renamed into place, so a reader sees a whole value or
/// none; get() polls. The directory must be fresh for each job: a value left by an earlier job
/// would be read as this one's.
class FileStore final : public Store {
 public:
  /// Creates `directory` (and its parents) when missing. Throws a braze::Error naming it when
  /// it cannot be created.
  explicit FileStore(std::filesystem::path directory);

  void set(const std::string& key, std::string_view value) override;
  std::string get(const std::string& key, std::chrono::milliseconds timeout) override;
  std::string describe() const override;

 private:
  std::filesystem::path fileOf(const std::string& key) const;

  std::filesystem::path directory_;
};

}  // namespace braze::host
