#pragma once
// applyTcpLiveness: the kernel's half of the silence rule (docs/contract.md §3.3, D-56) on one TCP
// descriptor of either hop (TcpDialer before connect; SocketHandoffServer on every accepted socket):
// SO_KEEPALIVE with TCP_KEEPIDLE / TCP_KEEPINTVL / TCP_KEEPCNT from shared/contract/timing.h
// (15000 ms idle, probes every 5000 ms, 6 of them), and TCP_USER_TIMEOUT (45000 ms) so that bytes the
// peer never acknowledges end the connection too. Real kernel time, not the injected clock.
// Returns false when the kernel refused an option (the descriptor stays usable; the WebSocket rule
// still holds).
namespace coreflow {

bool applyTcpLiveness(int fd);

} // namespace coreflow
