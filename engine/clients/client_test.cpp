// The one mapping from a Redis error to a history outcome (Jepsen's semantics).

#include "engine/clients/client.hpp"

#include <gtest/gtest.h>

namespace lockbench {
namespace {

TEST(FailureOfTest, WhatMayHaveRunIsInfoWhatCannotHaveRunIsFail) {
    // A timeout or a reset: the server may have run it (a paused server runs it later).
    EXPECT_EQ(failure_of(TimeoutError("no reply within 50 ms")).type, EventType::Info);
    EXPECT_EQ(failure_of(ClosedError("connection reset")).type, EventType::Info);
    // Never sent: the connection was never made.
    EXPECT_EQ(failure_of(ConnectError("connect timed out")).type, EventType::Fail);
    // The server answered with an error: it refused, nothing changed.
    const Failure refused = failure_of(ReplyError("WRONGTYPE Operation against a key"));
    EXPECT_EQ(refused.type, EventType::Fail);
    EXPECT_EQ(refused.error, "WRONGTYPE Operation against a key");
}

}  // namespace
}  // namespace lockbench
