#pragma once
// readRequestSession: request.session of a node-lane frame read as a SessionBinding with exact keys
// (docs/contract.md §4, §8.1, §8.3). Refusals: request-invalid "field request.session is missing" /
// "... is not an object", or the binding reader's own.
//
// readable and member are what frame.requestMember("session", &readable) found; the caller slices
// once and shares the slice with the binding check's fast path. When the slice is readable only that
// member is parsed (the body travels byte for byte and never needs a JSON object of its own).
#include "shared/contract/envelope.h"
#include "shared/contract/result.h"
#include "shared/contract/types.h"

#include <optional>

namespace coreflow {

contract::Result<contract::SessionBinding> readRequestSession(const contract::Frame &frame, bool readable,
                                                              const std::optional<QByteArrayView> &member);

} // namespace coreflow
