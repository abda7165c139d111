// fuzz_route_table: RouteTable::read and readCarrier (docs/contract.md §10.5) over any JSON object. A
// table either reads (revision >= 1, as many routes as the document holds, material that is the
// table's own JSON) or is refused route-table-invalid with a reason that quotes neither a private key
// nor the name of a member the contract does not know.
#include "fuzz/jsonfuzzinput.h"
#include "service/ingress/routetable.h"
#include "shared/contract/refusalnames.h"

using namespace coreflow;
using coreflow::fuzz::fuzzFailure;

namespace {
constexpr const char *kTarget = "fuzz_route_table";
const QStringList kKnownKeys = {"routeTable", "clusterId", "revision", "computedAt", "routes", "hostname", "certificateId",
                                "targets", "nodeId", "address", "port", "certificates", "id", "hostnames",
                                "certificatePem", "privateKeyPem"};

void unknownKeys(const QJsonValue &value, QStringList &out)
{
    if (value.isObject()) {
        const QJsonObject o = value.toObject();
        for (auto it = o.begin(); it != o.end(); ++it) {
            if (!kKnownKeys.contains(it.key()))
                out.append(it.key());
            unknownKeys(it.value(), out);
        }
    } else if (value.isArray()) {
        for (const QJsonValue &v : value.toArray())
            unknownKeys(v, out);
    }
}

void expectRefusal(const contract::Refusal &refusal, const QStringList &quiet)
{
    coreflow::fuzz::checkRefusal(kTarget, refusal, quiet);
    if (refusal.name != QLatin1String(contract::refusal::routeTableInvalid))
        fuzzFailure(kTarget, "a table refused under another name");
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    auto input = coreflow::fuzz::objectWithQuietStrings(data, size, {QStringLiteral("privateKeyPem")});
    if (!input)
        return 0;
    const QJsonObject *object = &input->object;
    QStringList &quiet = input->quiet;
    unknownKeys(*object, quiet);

    const auto table = RouteTable::read(*object, QStringLiteral("request.routeTable"));
    if (!table) {
        expectRefusal(table.refusal(), quiet);
    } else {
        if (table->revision() < 1 || table->routeCount() != object->value(QStringLiteral("routes")).toArray().size())
            fuzzFailure(kTarget, "a table read with a revision or route count the document does not hold");
        if (QJsonDocument::fromJson(table->material().reveal().toByteArray()).object() != *object)
            fuzzFailure(kTarget, "a table's material is not the table read");
    }
    for (bool nullable : {false, true}) {
        const auto carried = RouteTable::readCarrier(*object, QStringLiteral("request"), nullable);
        if (!carried)
            expectRefusal(carried.refusal(), quiet);
        else if (carried.value() && RouteTable::read(*carried.value(), QStringLiteral("request.routeTable")).ok()
                 != RouteTable::read(object->value(QStringLiteral("routeTable")).toObject(), QStringLiteral("request.routeTable")).ok())
            fuzzFailure(kTarget, "the carried table is not the body's routeTable");
    }
    return 0;
}
