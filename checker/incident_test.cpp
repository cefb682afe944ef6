#include "checker/incident.hpp"

#include <sstream>

#include <gtest/gtest.h>

#include "checker/check.hpp"
#include "checker/history_testing.hpp"

namespace lockbench::checker {
namespace {

using nlohmann::json;

// Process 1 holds k0 from 0.5 s; process 3 is granted it at 1.204 s; process 1 releases at 1.5 s.
const char* kOverlap = R"(
{"type":"invoke","process":1,"f":"acquire","key":"k0","value":null,"time":400000000}
{"type":"ok","process":1,"f":"acquire","key":"k0","value":{"token":"c1-4","mode":"exclusive"},"time":500000000}
{"type":"invoke","process":3,"f":"acquire","key":"k0","value":null,"time":1100000000}
{"type":"ok","process":3,"f":"acquire","key":"k0","value":{"token":"c3-7","mode":"exclusive"},"time":1204000000}
{"type":"invoke","process":1,"f":"release","key":"k0","value":{"token":"c1-4"},"time":1500000000}
)";

TEST(Incident, TheCheckersIncidentReadsBackAsWrittenThroughSummaryJson) {
    std::istringstream in(testing::numbered(kOverlap));
    const Report written = check_history(in, {});
    const Report read = Report::from_json(json::parse(written.to_json().dump()));
    ASSERT_EQ(incident_count(read), 1u);
    const std::vector<Incident> incidents = listed_incidents(read);
    ASSERT_EQ(incidents.size(), 1u);
    const Incident& i = incidents[0];
    EXPECT_EQ(i.key, "k0");
    EXPECT_EQ(i.process, 1);
    EXPECT_EQ(i.token, "c1-4");
    EXPECT_EQ(i.mode, LockMode::Exclusive);
    EXPECT_EQ(i.start_ns, 500000000);
    EXPECT_EQ(i.end_ns, 1500000000);
    EXPECT_EQ(i.grants, 1u);
    EXPECT_EQ(i.processes, std::vector<std::int64_t>{3});
    EXPECT_EQ(i.first_overlap_ns, 1204000000);
    EXPECT_EQ(i.last_overlap_ns, 1204000000);
    EXPECT_EQ(i.message,
              "k0: process 1 (token c1-4) held it from 0.500 s to 1.500 s; 1 grant to "
              "process 3 overlapped it at 1.204 s");
    // Written again, it is the check's own object, field for field.
    EXPECT_EQ(i.to_json(), written.check("mutual_exclusion")->fields["incident_list"][0]);
}

TEST(Incident, AHoldOpenAtTheEndSpansToTheEndItIsGiven) {
    Incident i;
    i.start_ns = 100;
    i.last_overlap_ns = 300;
    EXPECT_EQ(i.to_json()["end_ns"], nullptr);
    EXPECT_EQ(Incident::from_json(i.to_json()).end_ns, std::nullopt);
    EXPECT_EQ(i.span(900), (std::pair<std::int64_t, std::int64_t>{100, 900}));
    i.end_ns = 200;  // ended before its last overlap was found: the overlap bounds it
    EXPECT_EQ(i.span(900), (std::pair<std::int64_t, std::int64_t>{100, 300}));
}

TEST(Incident, AFieldOfAnotherTypeReadsAsItsDefault) {
    const Incident i = Incident::from_json(
        json{{"key", 7}, {"process", "one"}, {"end_ns", "later"}, {"processes", {2, "x", 4}}});
    EXPECT_EQ(i.key, "");
    EXPECT_EQ(i.process, 0);
    EXPECT_EQ(i.end_ns, std::nullopt);
    EXPECT_EQ(i.processes, (std::vector<std::int64_t>{2, 4}));
}

}  // namespace
}  // namespace lockbench::checker
