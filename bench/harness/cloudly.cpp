// The lean loopback Cloudly of the benchmark (`coreflow-bench cloudly`): one epoll loop, TLS WebSocket
// server, answers at once, logs nothing per frame. It serves the relay's session (handshake, cluster
// config with a relay block, relay certificate, forwarded node methods) and — for the harness ceiling —
// nodes that dial it directly with no relay in between.
//
// It is driven by the load generator over a control socket (fd given by --control-fd), one line per
// command/event:
//   -> "port <p>"                           listening
//   -> "certificate"                        answered getClusterRelayCertificate (the relay opens next)
//   -> "relaysession <count> <monotonicNs>" answered registerCloudlyClientSession (count: sessions so far)
//   <- "push <round> <count> <extra> <extraBytes>"  applyRuntimeAssignment to nodes n0..n<count-1>, plus
//                                           <extra> pushes of <extraBytes> to n0 (the stalled node)
//   -> "pushdone <round> <allMs> <ok> <timeouts> <otherErrors> <othersMs> <node0Ms> <firstError>"
//   <- "drop"                               aborts the relay's session (as if the network dropped it)
//   <- "pending"                            -> "pending <round> <answered> <expected> <active 0|1>"
//   <- "hold <seq> <count>"                 holdRuntimeNetworkDnsLeaseRenewals for each of n0..n<count-1>
//                                           it has a binding for: a two-renewal run whose first window is
//                                           open now (sequence grows with <seq>)
//   -> "holddone <seq> <sent> <held> <errors> <firstError>"
//   <- "registrations"                      -> "registrations <nodes registered with this process>"
//   <- "quit"
#include "bench/harness/wsnet.h"

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>
#include <unordered_map>
#include <vector>

namespace bench {

namespace {

std::string readFile(const std::string &path)
{
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

std::string jsonEscape(std::string_view s)
{
    std::string out;
    out.reserve(s.size() + 16);
    for (char c : s) {
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default: out += c;
        }
    }
    return out;
}

int64_t wallMs()
{
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return int64_t(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

struct NodeEntry {
    std::string binding;
    Conn *direct = nullptr;
    uint32_t generation = 0;
};

struct PushRound {
    uint64_t round = 0;
    uint64_t startNs = 0;
    size_t expected = 0;
    size_t answered = 0;
    size_t ok = 0;
    size_t timeouts = 0;
    size_t otherErrors = 0;
    size_t othersExpected = 0, othersAnswered = 0;
    size_t node0Expected = 0, node0Answered = 0;
    uint64_t othersDoneNs = 0, node0DoneNs = 0;
    std::string firstError;
    bool active = false;
};

struct HoldRound {
    uint64_t seq = 0;
    size_t sent = 0, answered = 0, held = 0, errors = 0;
    std::string firstError;
    bool active = false;
};

class Cloudly : public ConnHandler {
public:
    Cloudly(Loop &loop, int controlFd, std::string origin, std::string certPem, std::string keyPem)
        : m_loop(loop), m_control(controlFd), m_origin(std::move(origin)), m_certPem(jsonEscape(certPem)),
          m_keyPem(jsonEscape(keyPem))
    {
    }

    void say(const std::string &line)
    {
        std::string l = line + "\n";
        size_t off = 0;
        while (off < l.size()) {
            const ssize_t n = ::write(m_control, l.data() + off, l.size() - off);
            if (n <= 0) {
                if (errno == EINTR)
                    continue;
                return;
            }
            off += size_t(n);
        }
    }

    void command(const std::string &line)
    {
        std::istringstream in(line);
        std::string cmd;
        in >> cmd;
        if (cmd == "push") {
            uint64_t round = 0;
            size_t count = 0, extra = 0, extraBytes = 0;
            in >> round >> count >> extra >> extraBytes;
            push(round, count, extra, extraBytes);
        } else if (cmd == "drop") {
            if (m_relay)
                m_loop.abort(*m_relay);
        } else if (cmd == "pending") {
            say("pending " + std::to_string(m_round.round) + " " + std::to_string(m_round.answered) + " "
                + std::to_string(m_round.expected) + " " + (m_round.active ? "1" : "0"));
        } else if (cmd == "hold") {
            uint64_t seq = 0;
            size_t count = 0;
            in >> seq >> count;
            hold(seq, count);
        } else if (cmd == "registrations") {
            say("registrations " + std::to_string(m_nodeRegistrations));
        } else if (cmd == "quit") {
            m_loop.stop();
        }
    }

    void onClosed(Conn &c, int) override
    {
        if (&c == m_relay)
            m_relay = nullptr;
        if (c.id > 0 && c.id <= m_nodes.size() && m_nodes[c.id - 1].direct == &c)
            m_nodes[c.id - 1].direct = nullptr;
    }

    void onText(Conn &c, std::string_view frame) override
    {
        std::string_view id;
        bool isResponse = false;
        if (!correlationOf(frame, id, isResponse))
            return;
        if (isResponse) {
            if (!id.empty() && id[0] == 'h')
                return onHoldAnswer(frame);
            return onPushAnswer(id, frame);
        }
        const std::string_view method = stringMember(frame, "method");
        const std::string_view request = rawMember(frame, "request");
        if (method == "reportRuntimeAssignmentObservation" || method == "reportRuntimeNetworkProtection"
            || method == "reportRuntimeAssignmentTerminalReceipt") {
            return answer(c, method, id, request, "{\"accepted\":true}");
        }
        if (method == "registerPalletRuntimeSession")
            return registerNode(c, id, request);
        if (method == "exchangeClusterRelayAuthorization") {
            m_relay = &c;
            return answer(c, method, id, request, identity());
        }
        if (method == "registerCloudlyClientSession") {
            m_relay = &c;
            answer(c, method, id, request, "{\"offer\":{\"sessionKind\":\"cloudlyClient\",\"release\":\"33.1.0\"}}");
            ++m_relaySessions;
            say("relaysession " + std::to_string(m_relaySessions) + " " + std::to_string(nowNs()));
            return;
        }
        if (method == "refreshClusterIdentity")
            return answer(c, method, id, request, identity());
        if (method == "getClusterConfig") {
            return answer(c, method, id, request,
                          "{\"cluster\":{\"id\":\"cluster-1\",\"name\":\"bench\",\"relay\":{\"origin\":\"" + m_origin
                              + "\"},\"nodes\":[]}}");
        }
        if (method == "getClusterRelayCertificate") {
            const std::string domain(stringMember(request, "domain"));
            answer(c, method, id, request,
                   "{\"certificate\":{\"domain\":\"" + domain + "\",\"certificatePem\":\"" + m_certPem
                       + "\",\"privateKeyPem\":\"" + m_keyPem + "\"}}");
            say("certificate");
            return;
        }
        if (method == "registerClusterRelay") {
            ++m_registrationGeneration;
            return answer(c, method, id, request,
                          "{\"offer\":{\"sessionKind\":\"cloudlyClient\",\"release\":\"33.1.0\"},\"origin\":\"" + m_origin
                              + "\",\"credential\":{\"id\":\"cred-1\",\"generation\":1},\"registration\":{\"id\":\"reg-1\","
                                "\"generation\":"
                              + std::to_string(m_registrationGeneration) + "}}");
        }
        if (method == "getClusterRouteTable")
            return answer(c, method, id, request, "{\"routeTable\":null}");
        if (method == "getClusterVpnNetwork")
            return answer(c, method, id, request, "{\"network\":null}");
        m_loop.sendTextParts(c, {"{\"method\":\"", method, "\",\"request\":", request.empty() ? "{}" : request,
                                 ",\"response\":null,\"error\":{\"text\":\"method-not-served: cloudly serves no method ",
                                 method, "\",\"data\":{\"name\":\"method-not-served\"}},\"correlation\":{\"id\":\"", id,
                                 "\",\"phase\":\"response\"}}"});
    }

private:
    std::string identity()
    {
        return "{\"identity\":{\"token\":\"bench-token-" + std::to_string(++m_tokens) + "\",\"clusterId\":\"cluster-1\",\"expiresAt\":"
               + std::to_string(wallMs() + 24 * 3600 * 1000) + "}}";
    }

    void answer(Conn &c, std::string_view method, std::string_view id, std::string_view request, std::string_view response)
    {
        m_loop.sendTextParts(c, {"{\"method\":\"", method, "\",\"request\":", request.empty() ? "{}" : request,
                                 ",\"response\":", response, ",\"correlation\":{\"id\":\"", id, "\",\"phase\":\"response\"}}"});
    }

    void registerNode(Conn &c, std::string_view id, std::string_view request)
    {
        const std::string_view nodeId = stringMember(request, "nodeId");
        if (nodeId.size() < 2 || nodeId[0] != 'n') {
            m_loop.sendTextParts(c, {"{\"method\":\"registerPalletRuntimeSession\",\"request\":", request,
                                     ",\"response\":null,\"error\":{\"text\":\"request-invalid: field nodeId\",\"data\":{\"name\":"
                                     "\"request-invalid\"}},\"correlation\":{\"id\":\"",
                                     id, "\",\"phase\":\"response\"}}"});
            return;
        }
        const size_t index = size_t(std::strtoull(std::string(nodeId.substr(1)).c_str(), nullptr, 10));
        if (index >= m_nodes.size())
            m_nodes.resize(index + 1);
        NodeEntry &node = m_nodes[index];
        ++node.generation;
        ++m_nodeRegistrations;
        node.binding = "{\"nodeId\":\"" + std::string(nodeId) + "\",\"clusterId\":\"cluster-1\",\"sessionId\":\"s"
                       + std::string(nodeId.substr(1)) + "-" + std::to_string(node.generation)
                       + "\",\"relayRegistrationGeneration\":1}";
        if (&c != m_relay) {
            node.direct = &c;
            c.id = index + 1;
        }
        answer(c, "registerPalletRuntimeSession", id, request,
               "{\"offer\":{\"sessionKind\":\"palletRuntime\",\"release\":\"33.1.0\"},\"session\":" + node.binding + "}");
    }

    void sendPush(size_t index, const std::string &assignment)
    {
        if (index >= m_nodes.size() || m_nodes[index].binding.empty()) {
            m_round.answered++;
            m_round.otherErrors++;
            if (m_round.firstError.empty())
                m_round.firstError = "unregistered";
            return;
        }
        NodeEntry &node = m_nodes[index];
        Conn *target = node.direct ? node.direct : m_relay;
        if (!target) {
            m_round.answered++;
            m_round.otherErrors++;
            if (m_round.firstError.empty())
                m_round.firstError = "no-connection";
            return;
        }
        const uint64_t seq = ++m_pushSeq;
        m_pending.emplace(seq, index);
        const std::string id = "x" + std::to_string(seq);
        m_loop.sendTextParts(*target, {"{\"method\":\"applyRuntimeAssignment\",\"request\":{\"session\":", node.binding,
                                       ",\"assignment\":", assignment, "},\"correlation\":{\"id\":\"", id,
                                       "\",\"phase\":\"request\"}}"});
    }

    static std::string assignmentBody(uint64_t round, size_t bytes)
    {
        std::string a = "{\"id\":\"assignment-" + std::to_string(round) + "\",\"image\":\"registry.bench/app:1." + std::to_string(round)
                        + "\",\"pad\":\"";
        while (a.size() + 2 < bytes)
            a += 'x';
        a += "\"}";
        return a;
    }

    void push(uint64_t round, size_t count, size_t extra, size_t extraBytes)
    {
        m_round = PushRound{};
        m_round.round = round;
        m_round.active = true;
        m_round.startNs = nowNs();
        m_round.expected = count + extra;
        m_round.node0Expected = (count > 0 ? 1 : 0) + extra;
        m_round.othersExpected = count > 0 ? count - 1 : 0;
        const std::string body = assignmentBody(round, 900);
        for (size_t i = 0; i < count; ++i)
            sendPush(i, body);
        if (extra > 0) {
            const std::string big = assignmentBody(round, extraBytes);
            for (size_t i = 0; i < extra; ++i)
                sendPush(0, big);
        }
        maybeDone();
    }

    void onPushAnswer(std::string_view id, std::string_view frame)
    {
        if (id.size() < 2 || id[0] != 'x')
            return;
        const uint64_t seq = std::strtoull(std::string(id.substr(1)).c_str(), nullptr, 10);
        auto it = m_pending.find(seq);
        if (it == m_pending.end())
            return;
        const size_t index = it->second;
        m_pending.erase(it);
        if (!m_round.active)
            return;
        const uint64_t now = nowNs();
        ++m_round.answered;
        // The request echo is ours and carries no "error" key; an error member is the relay's or the node's.
        const std::string_view error = rawMember(frame, "error");
        std::string_view errorName;
        if (!error.empty() && error != "null") {
            errorName = stringMember(error, "name");
            if (errorName == "node-push-timeout")
                ++m_round.timeouts;
            else
                ++m_round.otherErrors;
            if (m_round.firstError.empty())
                m_round.firstError = std::string(errorName.empty() ? "error" : errorName);
        } else {
            ++m_round.ok;
        }
        if (index == 0) {
            if (++m_round.node0Answered == m_round.node0Expected)
                m_round.node0DoneNs = now;
        } else if (++m_round.othersAnswered == m_round.othersExpected) {
            m_round.othersDoneNs = now;
        }
        maybeDone();
    }

    // A run of two renewals on Cloudly's grid (§9.1): the first window opened 60 s ago (so the relay may
    // offer it during an outage, §9.4), the second starts 10 minutes later.
    void hold(uint64_t seq, size_t count)
    {
        m_hold = HoldRound{};
        m_hold.seq = seq;
        m_hold.active = true;
        const int64_t now = wallMs();
        const std::string projection = "{\"id\":\"soak-projection\",\"generation\":1,\"digest\":\""
                                       "8f434346648f6b96df89dda901c5176b10a6d83961dd3c1ac88b59b2dc327aa4\"}";
        for (size_t i = 0; i < count && i < m_nodes.size(); ++i) {
            const NodeEntry &node = m_nodes[i];
            if (node.binding.empty())
                continue;
            Conn *target = node.direct ? node.direct : m_relay;
            if (!target)
                continue;
            const std::string nodeId(stringMember(node.binding, "nodeId"));
            const std::string sessionId(stringMember(node.binding, "sessionId"));
            std::string renewals = "[";
            for (int k = 0; k < 2; ++k) {
                const int64_t notBefore = now - 60000 + int64_t(k) * 600000;
                if (k)
                    renewals += ",";
                renewals += "{\"nodeId\":\"" + nodeId + "\",\"sessionId\":\"" + sessionId + "\",\"projection\":" + projection
                            + ",\"sequence\":" + std::to_string(seq * 2 + uint64_t(k)) + ",\"notBefore\":" + std::to_string(notBefore)
                            + ",\"expiresAt\":" + std::to_string(notBefore + 900000) + ",\"signature\":\"c29hay1zaWduYXR1cmU=\"}";
            }
            renewals += "]";
            ++m_hold.sent;
            m_loop.sendTextParts(*target, {"{\"method\":\"holdRuntimeNetworkDnsLeaseRenewals\",\"request\":{\"session\":",
                                           node.binding, ",\"projection\":", projection, ",\"renewals\":", renewals,
                                           "},\"correlation\":{\"id\":\"h", std::to_string(seq), "-", std::to_string(i),
                                           "\",\"phase\":\"request\"}}"});
        }
        maybeHoldDone();
    }

    void onHoldAnswer(std::string_view frame)
    {
        if (!m_hold.active)
            return;
        ++m_hold.answered;
        const std::string_view error = rawMember(frame, "error");
        if (!error.empty() && error != "null") {
            ++m_hold.errors;
            if (m_hold.firstError.empty()) {
                const std::string_view name = stringMember(error, "name");
                m_hold.firstError = std::string(name.empty() ? "error" : name);
            }
        } else {
            ++m_hold.held;
        }
        maybeHoldDone();
    }

    void maybeHoldDone()
    {
        if (!m_hold.active || m_hold.answered < m_hold.sent)
            return;
        m_hold.active = false;
        say("holddone " + std::to_string(m_hold.seq) + " " + std::to_string(m_hold.sent) + " " + std::to_string(m_hold.held) + " "
            + std::to_string(m_hold.errors) + " " + (m_hold.firstError.empty() ? "-" : m_hold.firstError));
    }

    void maybeDone()
    {
        if (!m_round.active || m_round.answered < m_round.expected)
            return;
        m_round.active = false;
        const uint64_t now = nowNs();
        auto ms = [&](uint64_t t) { return t ? double(t - m_round.startNs) / 1e6 : -1.0; };
        char line[512];
        std::snprintf(line, sizeof line, "pushdone %" PRIu64 " %.3f %zu %zu %zu %.3f %.3f %s", m_round.round,
                      double(now - m_round.startNs) / 1e6, m_round.ok, m_round.timeouts, m_round.otherErrors,
                      ms(m_round.othersDoneNs), ms(m_round.node0DoneNs),
                      m_round.firstError.empty() ? "-" : m_round.firstError.c_str());
        say(line);
    }

    Loop &m_loop;
    int m_control;
    std::string m_origin;
    std::string m_certPem;
    std::string m_keyPem;
    Conn *m_relay = nullptr;
    uint64_t m_relaySessions = 0;
    uint64_t m_tokens = 0;
    uint64_t m_registrationGeneration = 0;
    std::vector<NodeEntry> m_nodes;
    std::unordered_map<uint64_t, size_t> m_pending;
    uint64_t m_pushSeq = 0;
    PushRound m_round;
    HoldRound m_hold;
    uint64_t m_nodeRegistrations = 0;
};

} // namespace

int cloudlyMain(int argc, char **argv)
{
    std::string cert, key, relayCert, relayKey, origin;
    int controlFd = -1;
    int port = 0;
    for (int i = 0; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        const std::string v = argv[i + 1];
        if (a == "--cert") cert = v;
        else if (a == "--key") key = v;
        else if (a == "--relay-cert") relayCert = v;
        else if (a == "--relay-key") relayKey = v;
        else if (a == "--relay-origin") origin = v;
        else if (a == "--control-fd") controlFd = std::atoi(v.c_str());
        else if (a == "--port") port = std::atoi(v.c_str());
    }
    if (cert.empty() || key.empty() || controlFd < 0) {
        std::fprintf(stderr, "usage: coreflow-bench cloudly --cert F --key F --relay-cert F --relay-key F --relay-origin O --control-fd N\n");
        return 2;
    }
    SSL_CTX *ctx = makeServerContext(cert, key);
    if (!ctx)
        return 1;
    const int lfd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(uint16_t(port));
    if (::bind(lfd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) != 0 || ::listen(lfd, 4096) != 0) {
        std::fprintf(stderr, "cloudly: cannot listen: %s\n", std::strerror(errno));
        return 1;
    }
    socklen_t len = sizeof addr;
    getsockname(lfd, reinterpret_cast<sockaddr *>(&addr), &len);

    Loop loop;
    Cloudly cloudly(loop, controlFd, origin, relayCert.empty() ? std::string() : readFile(relayCert),
                    relayKey.empty() ? std::string() : readFile(relayKey));
    loop.listen(lfd, ctx, &cloudly);
    cloudly.say("port " + std::to_string(ntohs(addr.sin_port)));

    std::thread control([&] {
        std::string buf;
        char chunk[4096];
        for (;;) {
            const ssize_t n = ::read(controlFd, chunk, sizeof chunk);
            if (n <= 0) {
                if (n < 0 && errno == EINTR)
                    continue;
                loop.post([&] { loop.stop(); });
                return;
            }
            buf.append(chunk, size_t(n));
            size_t pos;
            while ((pos = buf.find('\n')) != std::string::npos) {
                std::string line = buf.substr(0, pos);
                buf.erase(0, pos + 1);
                loop.post([&cloudly, line] { cloudly.command(line); });
                if (line == "quit")
                    return;
            }
        }
    });
    loop.run();
    control.join();
    return 0;
}

} // namespace bench
