// The soak driver (`coreflow-bench soak`, issue 23; bench/README.md "Soak"): N node sessions through a
// relay it starts, for a long time, with mixed traffic and faults, sampled into a CSV:
//   - forwards: reportRuntimeAssignmentObservation at --rate requests/s over the registered nodes,
//     latency measured at the node;
//   - pushes: every --push-seconds the Cloudly pushes applyRuntimeAssignment to every node;
//   - escrow holds: every --hold-seconds the Cloudly holds a two-renewal DNS lease run for the first
//     --hold-nodes nodes; during an outage the relay may offer the open window to the node, which admits it;
//   - faults: the Cloudly process is killed (SIGKILL) and started again on the same port every
//     --restart-seconds; --kill-percent of the nodes per minute are dropped (TCP abort) and redial 2 s later.
// A node redials after every close. "Lost" means no answer at all: a forward still unanswered 30 s after
// it was sent while its connection stayed open, or a push or hold round the Cloudly still waits for 30 s
// after it started (rounds cut by a Cloudly restart are counted as cut, not lost).
//
//   coreflow-bench soak --nodes N --certs DIR --workdir DIR --csv FILE [--minutes 30] [--sample-seconds 10]
//                       [--restart-seconds 300] [--kill-percent 1] [--rate 500] [--push-seconds 10]
//                       [--hold-seconds 60] [--hold-nodes 100] [--console PATH] -- RELAY COMMAND...
#include "bench/harness/cloudlychild.h"
#include "bench/harness/processes.h"
#include "bench/harness/wsnet.h"

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fcntl.h>
#include <fstream>
#include <future>
#include <map>
#include <memory>
#include <netinet/in.h>
#include <random>
#include <string>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <unordered_map>
#include <vector>

namespace bench {

namespace {

constexpr uint64_t kLostAfterNs = 30000000000ull;

struct SoakNode {
    uint32_t index = 0;
    Conn *conn = nullptr;
    std::string prefix; // observation frame up to the correlation id
    bool registered = false;
    bool connecting = false;
    bool killed = false; // dropped by the harness; redials at killedUntilNs
    uint64_t lastRegisteredNs = 0;
    std::vector<uint64_t> pending; // sequence numbers of forwards in flight
};

struct Pending {
    SoakNode *node;
    uint64_t sentNs;
};

// What one driver counted since the previous sample (and a few running totals).
struct Sample {
    std::vector<uint32_t> latUs;
    uint64_t answered = 0, refused = 0, cutByClose = 0, lost = 0, sent = 0;
    uint64_t registrations = 0, offersAdmitted = 0, pushesAnswered = 0;
    std::map<std::string, uint64_t> refusals;
    std::map<int, uint64_t> closeCodes;
    int64_t registeredNow = 0;
    int64_t inFlight = 0;
    std::vector<uint64_t> lastRegisteredNs; // per node of this driver: (index, ns) pairs flattened
};

class SoakDriver : public ConnHandler {
public:
    SoakDriver(sockaddr_in target, SSL_CTX *ctx, std::string host) : m_target(target), m_ctx(ctx), m_host(std::move(host)) {}

    void start() { m_thread = std::thread([this] { m_loop.run(); }); }
    void stopAndJoin()
    {
        m_loop.stop();
        if (m_thread.joinable())
            m_thread.join();
    }
    Loop &loop() { return m_loop; }
    void addNode(SoakNode *n) { m_nodes.push_back(n); }

    // Loop thread from here on.
    void begin(double rate)
    {
        m_rate = rate;
        m_rateStart = nowNs();
        for (SoakNode *n : m_nodes)
            m_queue.push_back(n);
        pump();
        tick();
    }

    void kill(uint32_t index)
    {
        for (SoakNode *n : m_nodes) {
            if (n->index != index || n->killed)
                continue;
            n->killed = true;
            if (n->conn)
                m_loop.abort(*n->conn);
            m_loop.at(nowNs() + 2000000000ull, [this, n] {
                n->killed = false;
                m_queue.push_back(n);
                pump();
            });
        }
    }

    Sample take()
    {
        Sample s = std::move(m_sample);
        m_sample = Sample{};
        s.registeredNow = m_registeredNow;
        s.inFlight = int64_t(m_pending.size());
        for (SoakNode *n : m_nodes) {
            s.lastRegisteredNs.push_back(n->index);
            s.lastRegisteredNs.push_back(n->lastRegisteredNs);
        }
        return s;
    }

    void shutdown()
    {
        m_stopping = true;
        for (SoakNode *n : m_nodes)
            if (n->conn)
                m_loop.abort(*n->conn);
    }

    void onOpen(Conn &c) override
    {
        SoakNode *n = static_cast<SoakNode *>(c.user);
        const std::string idx = std::to_string(n->index);
        const std::string rid = "r" + std::to_string(++m_seq);
        m_loop.sendTextParts(c, {"{\"method\":\"registerPalletRuntimeSession\",\"request\":{\"offer\":{\"sessionKind\":"
                                 "\"palletRuntime\",\"release\":\"33.1.0\"},\"nodeId\":\"n",
                                 idx, "\",\"authorization\":\"bench-node-bearer-", idx, "\",\"nodeInstanceNonce\":\"nonce-", idx, "-",
                                 rid, "\"},\"correlation\":{\"id\":\"", rid, "\",\"phase\":\"request\"}}"});
    }

    void onText(Conn &c, std::string_view frame) override
    {
        SoakNode *n = static_cast<SoakNode *>(c.user);
        std::string_view id;
        bool isResponse = false;
        if (!n || !correlationOf(frame, id, isResponse))
            return;
        if (!isResponse)
            return answerPush(c, frame, id);
        if (!id.empty() && id[0] == 'r')
            return onRegistered(*n, frame);
        uint64_t seq = 0;
        for (char ch : id)
            seq = seq * 10 + uint64_t(ch - '0');
        auto it = m_pending.find(seq);
        if (it == m_pending.end())
            return; // already counted lost
        const uint64_t sent = it->second.sentNs;
        m_pending.erase(it);
        auto &v = n->pending;
        v.erase(std::remove(v.begin(), v.end(), seq), v.end());
        const std::string_view error = rawMember(frame, "error");
        if (!error.empty() && error != "null") {
            ++m_sample.refused;
            const std::string_view name = stringMember(error, "name");
            ++m_sample.refusals[std::string(name.empty() ? "error" : name)];
        } else {
            ++m_sample.answered;
            m_sample.latUs.push_back(uint32_t(std::min<uint64_t>((nowNs() - sent) / 1000, 0xffffffffu)));
        }
    }

    void onClosed(Conn &c, int code) override
    {
        SoakNode *n = static_cast<SoakNode *>(c.user);
        if (!n || n->conn != &c)
            return;
        n->conn = nullptr;
        ++m_sample.closeCodes[code];
        for (uint64_t seq : n->pending) {
            if (m_pending.erase(seq))
                ++m_sample.cutByClose;
        }
        n->pending.clear();
        if (n->registered) {
            n->registered = false;
            --m_registeredNow;
        }
        if (n->connecting) {
            n->connecting = false;
            --m_inFlight;
        }
        if (m_stopping || n->killed) {
            pump();
            return;
        }
        // A real node redials after any close; a short pause keeps a refused dial from spinning.
        m_loop.at(nowNs() + (code == 4000 ? 0 : 200000000ull), [this, n] {
            m_queue.push_back(n);
            pump();
        });
        pump();
    }

private:
    void pump()
    {
        while (m_inFlight < kMaxConnects && !m_queue.empty()) {
            SoakNode *n = m_queue.front();
            m_queue.pop_front();
            if (n->conn || n->connecting || n->killed || m_stopping)
                continue;
            n->connecting = true;
            ++m_inFlight;
            Conn *c = m_loop.connect(m_target, m_ctx, this, m_host);
            if (c->state == ConnState::Closed) {
                n->connecting = false;
                --m_inFlight;
                m_loop.at(nowNs() + 200000000ull, [this, n] {
                    m_queue.push_back(n);
                    pump();
                });
                continue;
            }
            c->user = n;
            n->conn = c;
        }
    }

    void onRegistered(SoakNode &n, std::string_view frame)
    {
        if (n.connecting) {
            n.connecting = false;
            --m_inFlight;
        }
        const std::string_view response = rawMember(frame, "response");
        const std::string_view session = response.empty() ? std::string_view() : rawMember(response, "session");
        if (session.empty() || session.front() != '{') {
            // Refused (e.g. no Cloudly session during a restart): close and redial through onClosed.
            const std::string_view error = rawMember(frame, "error");
            ++m_sample.refusals["register:" + std::string(error.empty() ? "none" : stringMember(error, "name"))];
            if (n.conn)
                m_loop.close(*n.conn, 1000);
            pump();
            return;
        }
        std::string body = "{\"session\":" + std::string(session)
                           + ",\"observation\":{\"assignmentId\":\"assignment-1\",\"state\":\"running\",\"detail\":\"";
        while (body.size() + 3 < 1024)
            body += 'o';
        body += "\"}}";
        n.prefix = "{\"method\":\"reportRuntimeAssignmentObservation\",\"request\":" + body + ",\"correlation\":{\"id\":\"";
        if (!n.registered) {
            n.registered = true;
            ++m_registeredNow;
        }
        n.lastRegisteredNs = nowNs();
        ++m_sample.registrations;
        pump();
    }

    void answerPush(Conn &c, std::string_view frame, std::string_view id)
    {
        const std::string_view method = stringMember(frame, "method");
        const std::string_view request = rawMember(frame, "request");
        if (method == "applyRuntimeNetworkDnsLeaseRenewal") {
            // The node admits the offered window: its ACK names the renewal's projection and sequence (§9.4).
            const std::string_view renewal = rawMember(request, "renewal");
            const std::string_view projection = rawMember(renewal, "projection");
            const std::string_view sequence = rawMember(renewal, "sequence");
            m_loop.sendTextParts(c, {"{\"method\":\"", method, "\",\"request\":", request, ",\"response\":{\"projection\":", projection,
                                     ",\"sequence\":", sequence, ",\"state\":\"admitted\"},\"correlation\":{\"id\":\"", id,
                                     "\",\"phase\":\"response\"}}"});
            ++m_sample.offersAdmitted;
            return;
        }
        m_loop.sendTextParts(c, {"{\"method\":\"", method, "\",\"request\":", request.empty() ? "{}" : request,
                                 ",\"response\":{\"applied\":true},\"correlation\":{\"id\":\"", id, "\",\"phase\":\"response\"}}"});
        ++m_sample.pushesAnswered;
    }

    void sendObservation(SoakNode &n)
    {
        const uint64_t seq = ++m_seq;
        char idBuf[24];
        const int len = std::snprintf(idBuf, sizeof idBuf, "%" PRIu64, seq);
        const uint64_t now = nowNs();
        m_pending.emplace(seq, Pending{&n, now});
        n.pending.push_back(seq);
        ++m_sample.sent;
        m_loop.sendTextParts(*n.conn, {n.prefix, std::string_view(idBuf, size_t(len)), "\",\"phase\":\"request\"}}"});
    }

    void tick()
    {
        if (m_stopping)
            return;
        const uint64_t now = nowNs();
        const uint64_t due = uint64_t(double(now - m_rateStart) * m_rate / 1e9);
        size_t tries = 0;
        while (m_rateSent < due && !m_nodes.empty() && tries < m_nodes.size()) {
            SoakNode *n = m_nodes[m_rrNext++ % m_nodes.size()];
            if (!n->conn || !n->registered || n->conn->state != ConnState::Open) {
                ++tries;
                continue;
            }
            tries = 0;
            ++m_rateSent;
            sendObservation(*n);
        }
        m_rateSent = std::max(m_rateSent, due); // no catch-up burst after an outage
        // A fresh clock reading: forwards sent above carry later send times than `now`.
        const uint64_t sweepNow = nowNs();
        if (sweepNow - m_lastSweep > 1000000000ull) {
            m_lastSweep = sweepNow;
            for (auto it = m_pending.begin(); it != m_pending.end();) {
                if (sweepNow > it->second.sentNs && sweepNow - it->second.sentNs > kLostAfterNs) {
                    auto &v = it->second.node->pending;
                    v.erase(std::remove(v.begin(), v.end(), it->first), v.end());
                    ++m_sample.lost;
                    it = m_pending.erase(it);
                } else {
                    ++it;
                }
            }
        }
        m_loop.at(now + 2000000, [this] { tick(); });
    }

    static constexpr int kMaxConnects = 32;
    sockaddr_in m_target;
    SSL_CTX *m_ctx;
    std::string m_host;
    Loop m_loop;
    std::thread m_thread;
    std::vector<SoakNode *> m_nodes;
    std::deque<SoakNode *> m_queue;
    std::unordered_map<uint64_t, Pending> m_pending;
    Sample m_sample;
    int m_inFlight = 0;
    int64_t m_registeredNow = 0;
    bool m_stopping = false;
    uint64_t m_seq = 0;
    double m_rate = 0;
    uint64_t m_rateStart = 0, m_rateSent = 0, m_lastSweep = 0;
    size_t m_rrNext = 0;
};

// The relay's status counters, read through coreflow-console --json (empty when no console is given).
std::string consoleJson(const std::string &console, const std::string &socket)
{
    if (console.empty())
        return {};
    const std::string cmd = console + " --json --socket " + socket + " 2>/dev/null";
    FILE *p = popen(cmd.c_str(), "r");
    if (!p)
        return {};
    std::string out;
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0)
        out.append(buf, n);
    pclose(p);
    return out;
}

std::string numberMember(std::string_view json, std::string_view key)
{
    const std::string_view v = rawMember(json, key);
    return v.empty() ? std::string("-") : std::string(v);
}

struct Restart {
    uint64_t atNs = 0;
    double relaySessionMs = -1;  // Cloudly restart -> relay's session registered again
    double allRegisteredMs = -1; // Cloudly restart -> every node registered again after it
    size_t reregistered = 0;     // nodes registered after the restart, when the next one came (or at the end)
};

} // namespace

int soakMain(int argc, char **argv, const std::string &self)
{
    size_t nodes = 1000, holdNodes = 100;
    double minutes = 30, sampleSeconds = 10, restartSeconds = 300, killPercent = 1, rate = 500, pushSeconds = 10,
           holdSeconds = 60;
    std::string workdir = "/tmp", certDir, csvPath, console;
    std::vector<std::string> relayCmd;
    for (int i = 0; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : std::string(); };
        if (a == "--") {
            for (++i; i < argc; ++i)
                relayCmd.push_back(argv[i]);
            break;
        }
        if (a == "--nodes") nodes = size_t(std::atol(next().c_str()));
        else if (a == "--minutes") minutes = std::atof(next().c_str());
        else if (a == "--sample-seconds") sampleSeconds = std::atof(next().c_str());
        else if (a == "--restart-seconds") restartSeconds = std::atof(next().c_str());
        else if (a == "--kill-percent") killPercent = std::atof(next().c_str());
        else if (a == "--rate") rate = std::atof(next().c_str());
        else if (a == "--push-seconds") pushSeconds = std::atof(next().c_str());
        else if (a == "--hold-seconds") holdSeconds = std::atof(next().c_str());
        else if (a == "--hold-nodes") holdNodes = size_t(std::atol(next().c_str()));
        else if (a == "--workdir") workdir = next();
        else if (a == "--certs") certDir = next();
        else if (a == "--csv") csvPath = next();
        else if (a == "--console") console = next();
    }
    if (certDir.empty() || csvPath.empty() || relayCmd.empty()) {
        std::fprintf(stderr, "usage: coreflow-bench soak --nodes N --certs DIR --workdir DIR --csv FILE [options] -- RELAY...\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    rlimit rl{};
    getrlimit(RLIMIT_NOFILE, &rl);
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);

    const std::string statusSocket = workdir + "/soak-status.sock";
    if (!console.empty()) {
        relayCmd.push_back("--status-socket");
        relayCmd.push_back(statusSocket);
    }

    // The Cloudly, on a fixed port so that a restarted one is found at the same URL.
    const int relayPort = freePort();
    const int cloudlyPort = freePort();
    const std::string origin = "https://localhost:" + std::to_string(relayPort);
    const std::vector<std::string> cloudlyArgs{"--cert", certDir + "/server.pem", "--key", certDir + "/server.key", "--relay-cert",
                                               certDir + "/relay-chain.pem", "--relay-key", certDir + "/relay.key", "--relay-origin",
                                               origin, "--port", std::to_string(cloudlyPort)};
    auto cloudly = std::make_unique<CloudlyChild>();
    std::string line;
    cloudly->start(self, cloudlyArgs);
    if (!cloudly->wait("port ", 10000, line)) {
        logf("the bench Cloudly did not start");
        return 1;
    }

    const std::string creds = workdir + "/creds-soak";
    mkdir(creds.c_str(), 0700);
    {
        std::ofstream f(creds + "/SERVEZONE_CLUSTER_RELAY_AUTHORIZATION");
        f << "bench-relay-bearer";
    }
    const std::string logPath = workdir + "/soak-relay.log";
    const pid_t relayPid = fork();
    if (relayPid == 0) {
        const int fd = ::open(logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fd, 1);
        dup2(fd, 2);
        setenv("CLOUDLY_URL", ("wss://127.0.0.1:" + std::to_string(cloudlyPort) + "/").c_str(), 1);
        setenv("CREDENTIALS_DIRECTORY", creds.c_str(), 1);
        setenv("COREFLOW_NODE_ID", "relay-node-1", 1);
        setenv("COREFLOW_RELAY_BIND_HOSTNAME", "127.0.0.1", 1);
        setenv("COREFLOW_RELAY_BIND_PORT", std::to_string(relayPort).c_str(), 1);
        std::vector<char *> argvv;
        for (auto &s : relayCmd)
            argvv.push_back(s.data());
        argvv.push_back(nullptr);
        execvp(argvv[0], argvv.data());
        _exit(127);
    }
    bool up = false;
    if (cloudly->wait("certificate", 30000, line)) {
        for (int i = 0; i < 1500 && !up; ++i) {
            up = tcpReachable(relayPort);
            if (!up)
                sleepMs(20);
        }
    }
    if (!up) {
        logf("the relay did not open its listener (log: %s)", logPath.c_str());
        kill(relayPid, SIGKILL);
        cloudly->stop();
        return 1;
    }
    logf("soak: relay up (pid %d, listener %d, Cloudly %d), %zu nodes, %.0f min", relayPid, relayPort, cloudlyPort, nodes, minutes);

    SSL_CTX *ctx = makeClientContext();
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(uint16_t(relayPort));
    std::vector<std::unique_ptr<SoakDriver>> drivers;
    for (int t = 0; t < 2; ++t)
        drivers.push_back(std::make_unique<SoakDriver>(addr, ctx, "localhost:" + std::to_string(relayPort)));
    std::vector<SoakNode> store(nodes);
    for (size_t i = 0; i < nodes; ++i) {
        store[i].index = uint32_t(i);
        drivers[i % 2]->addNode(&store[i]);
    }
    for (auto &d : drivers) {
        d->start();
        SoakDriver *dp = d.get();
        const double r = rate / 2;
        dp->loop().post([dp, r] { dp->begin(r); });
    }
    auto takeAll = [&] {
        std::vector<Sample> v;
        for (auto &d : drivers) {
            std::promise<Sample> p;
            auto f = p.get_future();
            SoakDriver *dp = d.get();
            dp->loop().post([dp, &p] { p.set_value(dp->take()); });
            v.push_back(f.get());
        }
        return v;
    };

    std::ofstream csv(csvPath);
    csv << "t_s,relay_rss_kib,relay_fds,relay_threads,relay_cpu_pct,load1,nodes_registered,forwards_sent,forwards_answered,"
           "forwards_refused,forwards_cut_by_close,forwards_lost,forwards_in_flight,lat_p50_us,lat_p99_us,lat_max_us,push_rounds_ok,"
           "pushes_acked,push_errors,push_rounds_lost,hold_rounds,holds_held,hold_errors,hold_rounds_lost,offers_admitted,registrations,"
           "cloudly_restarts,nodes_killed,status_forwards,status_pushes,status_reconnects,status_waves,status_timers,"
           "status_escrow_runs,refusals\n";

    const uint64_t t0 = nowNs();
    const uint64_t endNs = t0 + uint64_t(minutes * 60e9);
    uint64_t nextSample = t0 + uint64_t(sampleSeconds * 1e9), nextRestart = t0 + uint64_t(restartSeconds * 1e9);
    uint64_t nextKill = t0 + 60000000000ull, nextPush = t0 + 20000000000ull, nextHold = t0 + 30000000000ull;
    uint64_t pushRound = 0, holdSeq = 0, pushStartedNs = 0, holdStartedNs = 0;
    bool pushActive = false, holdActive = false;
    uint64_t restarts = 0, killedTotal = 0, pushRoundsOk = 0, pushesAcked = 0, pushErrors = 0, pushRoundsLost = 0, pushRoundsCut = 0;
    uint64_t holdRounds = 0, holdsHeld = 0, holdErrors = 0, holdRoundsLost = 0, holdRoundsCut = 0;
    uint64_t totals[8] = {}; // sent, answered, refused, cut, lost, registrations, offers, pushesAnsweredByNodes
    std::map<std::string, uint64_t> refusalTotals, pushErrorNames, holdErrorNames;
    std::map<int, uint64_t> closeTotals;
    std::vector<Restart> restartLog;
    std::vector<uint32_t> allLat;
    uint64_t lastCpu = cpuNsOf(relayPid), lastCpuAt = nowNs();
    std::mt19937 rng(23);
    std::vector<uint64_t> lastReg(nodes, 0);
    bool relaySessionPending = false;

    auto finishRestartCheck = [&](uint64_t now) {
        if (restartLog.empty())
            return;
        Restart &r = restartLog.back();
        size_t count = 0;
        uint64_t latest = 0;
        for (size_t i = 0; i < nodes; ++i)
            if (lastReg[i] > r.atNs) {
                ++count;
                latest = std::max(latest, lastReg[i]);
            }
        r.reregistered = count;
        if (count == nodes && r.allRegisteredMs < 0)
            r.allRegisteredMs = double(latest - r.atNs) / 1e6;
        (void)now;
    };

    while (nowNs() < endNs) {
        sleepMs(50);
        const uint64_t now = nowNs();
        // Cloudly restart.
        // No restart in the last minute: its re-registration could not be checked before the end.
        if (now >= nextRestart && now + 60000000000ull < endNs) {
            nextRestart += uint64_t(restartSeconds * 1e9);
            finishRestartCheck(now);
            if (pushActive)
                ++pushRoundsCut;
            if (holdActive)
                ++holdRoundsCut;
            pushActive = holdActive = false;
            cloudly->kill();
            cloudly = std::make_unique<CloudlyChild>();
            cloudly->start(self, cloudlyArgs);
            if (!cloudly->wait("port ", 10000, line))
                logf("soak: the restarted Cloudly did not listen");
            ++restarts;
            restartLog.push_back(Restart{});
            restartLog.back().atNs = nowNs();
            relaySessionPending = true;
            logf("soak: Cloudly restarted (%" PRIu64 ")", restarts);
        }
        if (relaySessionPending && cloudly->wait("relaysession", 0, line)) {
            relaySessionPending = false;
            unsigned long long count = 0, ns = 0;
            std::sscanf(line.c_str(), "relaysession %llu %llu", &count, &ns);
            restartLog.back().relaySessionMs = double(ns - restartLog.back().atNs) / 1e6;
        }
        // Node kills.
        if (now >= nextKill) {
            nextKill += 60000000000ull;
            const size_t k = std::max<size_t>(1, size_t(double(nodes) * killPercent / 100.0));
            for (size_t i = 0; i < k; ++i) {
                const uint32_t idx = uint32_t(rng() % nodes);
                SoakDriver *dp = drivers[idx % 2].get();
                dp->loop().post([dp, idx] { dp->kill(idx); });
            }
            killedTotal += k;
        }
        // Pushes.
        if (pushActive && cloudly->wait("pushdone " + std::to_string(pushRound) + " ", 0, line)) {
            pushActive = false;
            double ms = 0, othersMs = 0, node0Ms = 0;
            size_t ok = 0, timeouts = 0, other = 0;
            char first[128] = "-";
            std::sscanf(line.c_str(), "pushdone %*u %lf %zu %zu %zu %lf %lf %127s", &ms, &ok, &timeouts, &other, &othersMs, &node0Ms, first);
            ++pushRoundsOk;
            pushesAcked += ok;
            pushErrors += timeouts + other;
            if (timeouts + other)
                ++pushErrorNames[first];
        } else if (pushActive && now - pushStartedNs > kLostAfterNs) {
            pushActive = false;
            ++pushRoundsLost;
            cloudly->send("pending");
            if (cloudly->wait("pending", 2000, line))
                logf("soak: push round %" PRIu64 " unfinished after 30 s: %s", pushRound, line.c_str());
        }
        if (!pushActive && now >= nextPush) {
            nextPush = now + uint64_t(pushSeconds * 1e9);
            cloudly->send("push " + std::to_string(++pushRound) + " " + std::to_string(nodes) + " 0 0");
            pushActive = true;
            pushStartedNs = now;
        }
        // Escrow holds.
        if (holdActive && cloudly->wait("holddone " + std::to_string(holdSeq) + " ", 0, line)) {
            holdActive = false;
            size_t sent = 0, held = 0, errors = 0;
            char first[128] = "-";
            std::sscanf(line.c_str(), "holddone %*u %zu %zu %zu %127s", &sent, &held, &errors, first);
            ++holdRounds;
            holdsHeld += held;
            holdErrors += errors;
            if (errors)
                ++holdErrorNames[first];
        } else if (holdActive && now - holdStartedNs > kLostAfterNs) {
            holdActive = false;
            ++holdRoundsLost;
        }
        if (!holdActive && now >= nextHold) {
            nextHold = now + uint64_t(holdSeconds * 1e9);
            cloudly->send("hold " + std::to_string(++holdSeq) + " " + std::to_string(holdNodes));
            holdActive = true;
            holdStartedNs = now;
        }
        // Sample.
        if (now >= nextSample) {
            nextSample += uint64_t(sampleSeconds * 1e9);
            std::vector<Sample> samples = takeAll();
            std::vector<uint32_t> lat;
            uint64_t s[8] = {};
            int64_t registered = 0, inFlight = 0;
            for (Sample &x : samples) {
                lat.insert(lat.end(), x.latUs.begin(), x.latUs.end());
                s[0] += x.sent;
                s[1] += x.answered;
                s[2] += x.refused;
                s[3] += x.cutByClose;
                s[4] += x.lost;
                s[5] += x.registrations;
                s[6] += x.offersAdmitted;
                s[7] += x.pushesAnswered;
                registered += x.registeredNow;
                inFlight += x.inFlight;
                for (auto &[k, v] : x.refusals)
                    refusalTotals[k] += v;
                for (auto &[k, v] : x.closeCodes)
                    closeTotals[k] += v;
                for (size_t i = 0; i + 1 < x.lastRegisteredNs.size(); i += 2)
                    lastReg[size_t(x.lastRegisteredNs[i])] = x.lastRegisteredNs[i + 1];
            }
            for (int i = 0; i < 8; ++i)
                totals[i] += s[i];
            allLat.insert(allLat.end(), lat.begin(), lat.end());
            const uint64_t cpu = cpuNsOf(relayPid), cpuAt = nowNs();
            const double cpuPct = double(cpu - lastCpu) / double(cpuAt - lastCpuAt) * 100.0;
            lastCpu = cpu;
            lastCpuAt = cpuAt;
            double load1 = 0;
            {
                std::ifstream la("/proc/loadavg");
                la >> load1;
            }
            const std::string status = consoleJson(console, statusSocket);
            const std::string_view counters = status.empty() ? std::string_view() : rawMember(status, "counters");
            const std::string_view escrow = status.empty() ? std::string_view() : rawMember(status, "escrow");
            size_t escrowRuns = 0;
            for (size_t p = escrow.find("\"nodeId\""); p != std::string_view::npos; p = escrow.find("\"nodeId\"", p + 1))
                ++escrowRuns;
            std::string refusals;
            for (auto &[k, v] : refusalTotals)
                refusals += (refusals.empty() ? "" : ";") + k + "=" + std::to_string(v);
            const double p50 = percentile(lat, 50), p99 = percentile(lat, 99);
            const double mx = lat.empty() ? -1 : double(*std::max_element(lat.begin(), lat.end()));
            csv << double(now - t0) / 1e9 << "," << statusKiB(relayPid, "VmRSS") << "," << openFdCount(relayPid) << ","
                << threadCount(relayPid) << "," << cpuPct << "," << load1 << "," << registered << "," << s[0] << "," << s[1] << ","
                << s[2] << "," << s[3] << "," << s[4] << "," << inFlight << "," << p50 << "," << p99 << "," << mx << ","
                << pushRoundsOk << "," << pushesAcked << "," << pushErrors << "," << pushRoundsLost << "," << holdRounds << ","
                << holdsHeld << "," << holdErrors << "," << holdRoundsLost << "," << totals[6] << "," << totals[5] << "," << restarts << "," << killedTotal
                << "," << (counters.empty() ? "-" : numberMember(counters, "forwards")) << ","
                << (counters.empty() ? "-" : numberMember(counters, "pushes")) << ","
                << (counters.empty() ? "-" : numberMember(counters, "reconnects")) << ","
                << (counters.empty() ? "-" : numberMember(counters, "reregistrationWaves")) << ","
                << (counters.empty() ? "-" : numberMember(counters, "timers")) << "," << (status.empty() ? 0 : escrowRuns) << ",\""
                << refusals << "\"\n";
            csv.flush();
            if (restartLog.size() && restartLog.back().allRegisteredMs < 0)
                finishRestartCheck(now);
        }
    }
    finishRestartCheck(nowNs());

    // Summary.
    const double p50 = percentile(allLat, 50), p99 = percentile(allLat, 99), p999 = percentile(allLat, 99.9);
    std::printf("soak summary: %zu nodes, %.1f min, %" PRIu64 " Cloudly restarts, %" PRIu64 " node kills\n", nodes,
                double(nowNs() - t0) / 60e9, restarts, killedTotal);
    std::printf("  forwards: sent %" PRIu64 ", answered %" PRIu64 ", refused %" PRIu64 ", cut by a close %" PRIu64 ", LOST %" PRIu64
                "; latency p50 %.0f us, p99 %.0f us, p99.9 %.0f us\n",
                totals[0], totals[1], totals[2], totals[3], totals[4], p50, p99, p999);
    std::printf("  pushes: %" PRIu64 " rounds done (%" PRIu64 " acked, %" PRIu64 " errors), %" PRIu64 " cut by a restart, LOST %" PRIu64
                " rounds\n",
                pushRoundsOk, pushesAcked, pushErrors, pushRoundsCut, pushRoundsLost);
    for (auto &[k, v] : pushErrorNames)
        std::printf("    rounds with errors, first error %s: %" PRIu64 "\n", k.c_str(), v);
    std::printf("  holds: %" PRIu64 " rounds done (%" PRIu64 " held, %" PRIu64 " errors), %" PRIu64 " cut by a restart, LOST %" PRIu64
                " rounds; escrow offers admitted by nodes %" PRIu64 "\n",
                holdRounds, holdsHeld, holdErrors, holdRoundsCut, holdRoundsLost, totals[6]);
    for (auto &[k, v] : holdErrorNames)
        std::printf("    rounds with errors, first error %s: %" PRIu64 "\n", k.c_str(), v);
    std::printf("  registrations %" PRIu64 "; refusals:", totals[5]);
    for (auto &[k, v] : refusalTotals)
        std::printf(" %s=%" PRIu64, k.c_str(), v);
    std::printf("\n  node closes by code:");
    for (auto &[k, v] : closeTotals)
        std::printf(" %d=%" PRIu64, k, v);
    std::printf("\n");
    for (size_t i = 0; i < restartLog.size(); ++i)
        std::printf("  restart %zu: relay session again after %.0f ms, %zu/%zu nodes re-registered%s%.0f ms\n", i + 1,
                    restartLog[i].relaySessionMs, restartLog[i].reregistered, nodes,
                    restartLog[i].allRegisteredMs >= 0 ? ", all after " : ", not all", std::max(0.0, restartLog[i].allRegisteredMs));

    for (auto &d : drivers) {
        SoakDriver *dp = d.get();
        dp->loop().post([dp] { dp->shutdown(); });
    }
    sleepMs(300);
    for (auto &d : drivers)
        d->stopAndJoin();
    kill(relayPid, SIGTERM);
    int status = 0;
    bool exited = false;
    for (int i = 0; i < 200 && !exited; ++i) {
        exited = waitpid(relayPid, &status, WNOHANG) == relayPid;
        if (!exited)
            sleepMs(50);
    }
    if (!exited) {
        kill(relayPid, SIGKILL);
        waitpid(relayPid, &status, 0);
    }
    cloudly->stop();
    SSL_CTX_free(ctx);
    return totals[4] == 0 && pushRoundsLost == 0 && holdRoundsLost == 0 ? 0 : 1;
}

} // namespace bench
