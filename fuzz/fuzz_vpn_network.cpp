// fuzz_vpn_network: ClusterVpnNetwork::read and readCarrier (docs/contract.md §11.1) over any JSON
// object, and VpnNetworkAuthority's admission (§11.2) of what reads. A network either reads (revision
// >= 1, every member inside controlPrefix and found again by key, address and nodeId, every grant
// between members) or is refused request-invalid with a reason that quotes no value of the document;
// a network that reads is admitted as the first one, and admitted again it is a replay.
#include "fuzz/jsonfuzzinput.h"
#include "service/vpn/clustervpnnetwork.h"
#include "service/vpn/vpnnetworkauthority.h"
#include "shared/contract/refusalnames.h"
#include "shared/util/manualclock.h"

#include <algorithm>

using namespace coreflow;
using namespace coreflow::vpn;
using coreflow::fuzz::fuzzFailure;

namespace {
constexpr const char *kTarget = "fuzz_vpn_network";
// The values a reason must never quote (an unknown key's plain name may be named, §1).
const QStringList kValueKeys = {"id", "publicKey", "controlPrefix", "nodeId", "address", "from", "to"};

// Every key at any depth: an unknown plain key may be named by a reason, so a value that is part of
// one cannot be told from the key's own name.
void keysOf(const QJsonValue &value, QStringList &out)
{
    if (value.isObject()) {
        const QJsonObject o = value.toObject();
        for (auto it = o.begin(); it != o.end(); ++it) {
            out.append(it.key());
            keysOf(it.value(), out);
        }
    } else if (value.isArray()) {
        for (const QJsonValue &v : value.toArray())
            keysOf(v, out);
    }
}

void expectRefusal(const contract::Refusal &refusal, const QStringList &quiet)
{
    coreflow::fuzz::checkRefusal(kTarget, refusal, quiet);
    if (refusal.name != QLatin1String(contract::refusal::requestInvalid))
        fuzzFailure(kTarget, "a network refused under another name");
}

std::uint32_t maskOf(int length) { return length == 0 ? 0 : ~std::uint32_t(0) << (32 - length); }
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    auto input = coreflow::fuzz::objectWithQuietStrings(data, size, kValueKeys);
    if (!input)
        return 0;
    const QJsonObject &object = input->object;
    QStringList keys;
    keysOf(object, keys);
    input->quiet.removeIf([&](const QString &value) {
        return std::any_of(keys.cbegin(), keys.cend(), [&](const QString &key) { return key.contains(value); });
    });

    auto network = ClusterVpnNetwork::read(object, QStringLiteral("request.network"));
    if (!network) {
        expectRefusal(network.refusal(), input->quiet);
    } else {
        const ClusterVpnNetwork &n = network.value();
        if (n.revision() < 1 || n.prefixLength() < 1 || n.prefixLength() > 32
            || n.members().size() != object.value(QStringLiteral("members")).toArray().size()
            || n.grants().size() != object.value(QStringLiteral("grants")).toArray().size())
            fuzzFailure(kTarget, "a network read with a revision, prefix or count the document does not hold");
        for (const ClusterVpnNetwork::Member &m : n.members()) {
            if ((m.address & maskOf(n.prefixLength())) != n.prefixAddress() || m.publicKey.size() != 32)
                fuzzFailure(kTarget, "a member outside the prefix or with a key that is not 32 bytes");
            if (n.memberByKey(m.publicKey) != &m || n.memberByAddress(m.address) != &m || n.memberByNodeId(m.nodeId) != &m)
                fuzzFailure(kTarget, "a member not found again by its key, address or nodeId");
        }
        for (const ClusterVpnNetwork::Grant &g : n.grants())
            if (!n.memberByNodeId(g.from) || !n.memberByNodeId(g.to) || !n.grants(g.from, g.to))
                fuzzFailure(kTarget, "a grant between nodes that are not members");
        if (!n.sameContent(n))
            fuzzFailure(kTarget, "a network differs from itself");
        ManualClock clock;
        VpnNetworkAuthority authority(clock);
        auto first = authority.admit(n);
        auto again = authority.admit(n);
        if (!first || !first.value().firstNetwork || !again || again.value().state != VpnNetworkAuthority::State::Replayed)
            fuzzFailure(kTarget, "a network that reads is not admitted first and replayed second");
    }
    for (bool nullable : {false, true}) {
        const auto carried = ClusterVpnNetwork::readCarrier(object, QStringLiteral("request"), nullable);
        if (!carried)
            expectRefusal(carried.refusal(), input->quiet);
    }
    return 0;
}
