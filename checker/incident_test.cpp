#include "checker/incident.hpp"

#include <sstream>

#include <gtest/gtest.h>

#include "checker/check.hpp"
#include "checker/history_testing.hpp"

namespace lockbench::checker {
namespace {

using nlohmann::json;
using testing::kOverlap;

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
    EXPECT_EQ(i.later_processes, std::vector<std::int64_t>{});  // no grant after the first
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
    EXPECT_EQ(Incident::from_json(i.to_json(), "/list/0").end_ns, std::nullopt);
    EXPECT_EQ(i.span(900), (std::pair<std::int64_t, std::int64_t>{100, 900}));
    i.end_ns = 200;  // ended before its last overlap was found: the overlap bounds it
    EXPECT_EQ(i.span(900), (std::pair<std::int64_t, std::int64_t>{100, 300}));
}

std::string error_reading(const json& incident) {
    try {
        Incident::from_json(incident, "/list/0");
    } catch (const IncidentError& e) {
        return e.what();
    }
    return "no error";
}

TEST(Incident, AFieldOfAnotherTypeIsAnErrorNamingItsPath) {
    EXPECT_EQ(error_reading({{"key", 7}}), "/list/0/key: must be a string, not a number");
    EXPECT_EQ(error_reading({{"process", "one"}}),
              "/list/0/process: must be an integer, not a string");
    EXPECT_EQ(error_reading({{"end_ns", "later"}}),
              "/list/0/end_ns: must be an integer, not a string");
    EXPECT_EQ(error_reading({{"processes", {2, "x", 4}}}),
              "/list/0/processes/1: must be an integer, not a string");
    EXPECT_EQ(error_reading({{"grants", -1}}),
              "/list/0/grants: must be between 0 and 9223372036854775807, not -1");
    EXPECT_EQ(error_reading({{"mode", "both"}}),
              "/list/0/mode: must be one of exclusive|shared, not \"both\"");
    EXPECT_EQ(error_reading(json::array()), "/list/0: must be an object, not an array");
}

TEST(Incident, AFieldMissingOrNullReadsAsItsDefault) {
    const Incident i = Incident::from_json(json{{"key", "k0"}, {"token", nullptr}}, "/list/0");
    EXPECT_EQ(i.key, "k0");
    EXPECT_EQ(i.token, "");
    EXPECT_EQ(i.process, 0);
    EXPECT_EQ(i.end_ns, std::nullopt);
    EXPECT_EQ(i.mode, LockMode::Exclusive);
}

TEST(Incident, TheListedIncidentsNameTheirPathInSummaryJson) {
    const Report report = Report::from_json(
        json{{"valid", false},
             {"checks",
              {{"mutual_exclusion",
                {{"incidents", 2}, {"incident_list", {{{"key", "k0"}}, {{"start_ns", 1.5}}}}}}}}});
    try {
        listed_incidents(report);
        FAIL() << "a fractional start was read";
    } catch (const IncidentError& e) {
        EXPECT_STREQ(e.what(),
                     "/verdict/checks/mutual_exclusion/incident_list/1/start_ns: must be an "
                     "integer, not a number");
    }
}

// The story and timeline.html read the checks' witnesses through these readers: what the checks
// wrote reads back field for field, and writes back as the same JSON.
TEST(Incident, TheWitnessEvidenceReadsBackAsTheChecksWroteIt) {
    std::istringstream in(testing::numbered(kOverlap));
    const Report written = check_history(in, {});
    const Report read = Report::from_json(json::parse(written.to_json().dump()));
    const std::vector<OverlapEvidence> pairs = overlap_evidence(read);
    ASSERT_EQ(pairs.size(), 1u);
    const OverlapEvidence& p = pairs[0];
    EXPECT_EQ(p.key, "k0");
    EXPECT_EQ(p.first.process, 1);
    EXPECT_EQ(p.first.token, "c1-4");
    EXPECT_EQ(p.first.start_ns, 500000000);
    EXPECT_EQ(p.first.end_ns, 1500000000);
    EXPECT_EQ(p.first.start_index, 1u);
    EXPECT_EQ(p.second.process, 3);
    EXPECT_EQ(p.second.token, "c3-7");
    EXPECT_EQ(p.second.end_ns, std::nullopt);
    EXPECT_EQ(p.second.start_index, 3u);
    EXPECT_EQ(p.overlap_ns, 1500000000 - 1204000000);
    EXPECT_EQ(p.released_by, std::nullopt);
    EXPECT_EQ(p.to_json(), written.witnesses[0].evidence);
    EXPECT_TRUE(lost_update_evidence(read).empty());

    const LostUpdateEvidence lost = LostUpdateEvidence::from_json(
        json{{"key", "k0"},
             {"overwritten", {{"process", 2}, {"value", 5}, {"time_ns", 10}, {"index", 4}}},
             {"write", {{"process", 1}, {"value", 5}, {"time_ns", 20}, {"index", 9}}}},
        "/w");
    EXPECT_EQ(lost.overwritten.process, 2);
    EXPECT_EQ(lost.write.index, 9u);
    EXPECT_FALSE(lost.late.has_value());
}

TEST(Incident, WitnessEvidenceOfAnotherTypeIsAnErrorNamingItsPathInSummaryJson) {
    const Report report = Report::from_json(json{
        {"valid", false},
        {"violations",
         {{{"kind", "fencing"}, {"witness", {{"first", 1}}}},
          {{"kind", "mutual_exclusion"},
           {"witness", {{"first", {{"process", 1}}}, {"second", {{"start_index", "seven"}}}}}}}}});
    try {
        overlap_evidence(report);
        FAIL() << "a start index of words was read";
    } catch (const IncidentError& e) {
        EXPECT_STREQ(e.what(),
                     "/verdict/violations/1/witness/second/start_index: must be an integer, not "
                     "a string");
    }
    const Report no_write = Report::from_json(json{
        {"violations", {{{"kind", "resource"}, {"witness", {{"overwritten", json::object()}}}}}}});
    try {
        lost_update_evidence(no_write);
        FAIL() << "a lost update without its write was read";
    } catch (const IncidentError& e) {
        EXPECT_STREQ(e.what(), "/verdict/violations/0/witness/write: missing");
    }
}

}  // namespace
}  // namespace lockbench::checker
