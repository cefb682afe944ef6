// Jepsen's EDN histories: the EDN reader on its own, and whole histories checked through EDN
// agreeing with the same histories checked as JSONL.

#include "checker/jepsen_history.hpp"

#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "checker/check.hpp"
#include "checker/edn.hpp"
#include "checker/history_generator.hpp"

namespace lockbench::checker {
namespace {

using nlohmann::json;

json read_one(const std::string& text) {
    edn::Reader reader(text);
    json out;
    EXPECT_TRUE(reader.next(out)) << text;
    json extra;
    EXPECT_FALSE(reader.next(extra)) << "more than one form in " << text;
    return out;
}

std::string edn_error_of(const std::string& text) {
    try {
        edn::Reader reader(text);
        json out;
        while (reader.next(out)) {
        }
    } catch (const edn::EdnError& e) {
        return e.what();
    }
    return "no error";
}

TEST(EdnReader, ReadsWhatHistoriesUse) {
    EXPECT_EQ(
        read_one(R"({:type :invoke, :f :cas, :value [1 4], :process 101, :time 99286665244})"),
        json::parse(R"({"type":"invoke","f":"cas","value":[1,4],"process":101,
                              "time":99286665244})"));
    EXPECT_EQ(read_one("(1 -2 +3 4N 2.5 -1e3 1.5M nil true false)"),
              json::parse("[1,-2,3,4,2.5,-1000.0,1.5,null,true,false]"));
    EXPECT_EQ(read_one(R"(#{:a "b\"c\n\u00e9" sym \x \newline})"),
              json::parse(R"(["a","b\"c\né","sym","x","\n"])"));
    EXPECT_EQ(read_one("[1 #_ 2 3 ; a comment\n #_{:x 1} 4]"), json::parse("[1,3,4]"));
    EXPECT_EQ(read_one(R"(#jepsen.history.Op{:index 0 :f :read} )"),
              json::parse(R"({"index":0,"f":"read"})"));
    EXPECT_EQ(read_one(R"({:error [:timeout "no reply"], :ns/kw :x})"),
              json::parse(R"({"error":["timeout","no reply"],"ns/kw":"x"})"));
}

TEST(EdnReader, ErrorsNameLineAndColumn) {
    EXPECT_EQ(edn_error_of("[{:a 1}\n {:b }]"), "line 2, column 6: the map key b has no value");
    EXPECT_EQ(edn_error_of("{:a 1\n"),
              "line 2, column 1: the text ends inside a map (missing '}')");
    EXPECT_EQ(edn_error_of("[1 2)"), "line 1, column 5: unexpected ')'");
    EXPECT_EQ(edn_error_of("{:a 1 :a 2}"), "line 1, column 7: the map key a appears twice");
    EXPECT_EQ(edn_error_of("\"abc"), "line 1, column 5: the text ends inside a string");
    EXPECT_EQ(edn_error_of("{1 2}"),
              "line 1, column 2: a map key must be a keyword, a symbol or a string");
    EXPECT_EQ(edn_error_of("1/2"), "line 1, column 1: ratios are not supported: 1/2");
    EXPECT_EQ(edn_error_of("99999999999999999999"),
              "line 1, column 1: integer out of the 64-bit range: 99999999999999999999");
    std::string deep(100, '[');
    EXPECT_EQ(edn_error_of(deep).rfind("line 1, column 66: nested deeper than 64 levels", 0), 0u)
        << edn_error_of(deep);
}

// EDN's \u escapes are JSON's: a character beyond U+FFFF is a UTF-16 surrogate pair, and either
// half alone is no character at all.
TEST(EdnReader, ASurrogatePairIsOneCharacterAndALoneHalfIsAnError) {
    EXPECT_EQ(read_one(R"("\uD83D\uDE00 \ud83d\ude00!")"),
              json("\xF0\x9F\x98\x80 \xF0\x9F\x98\x80!"));
    EXPECT_EQ(edn_error_of(R"(["a\uDE00"])"),
              "line 1, column 4: a low surrogate without a high surrogate before it");
    EXPECT_EQ(edn_error_of("\n \"\\uD83D x\""),
              "line 2, column 3: a high surrogate without a low surrogate after it");
    EXPECT_EQ(edn_error_of(R"("\uD83D\u0041")"),
              "line 1, column 2: a high surrogate without a low surrogate after it");
    EXPECT_EQ(edn_error_of(R"("\uD83D)"),
              "line 1, column 2: a high surrogate without a low surrogate after it");
    // A character literal names one character, however many bytes it takes.
    EXPECT_EQ(read_one("[\\\xC3\xA9 \\u00e9 \\u20AC]"),
              json::parse("[\"\xC3\xA9\", \"\xC3\xA9\", \"\xE2\x82\xAC\"]"));
    EXPECT_EQ(edn_error_of("\\uD83D"), "line 1, column 1: unknown character \\uD83D");
}

// EDN is UTF-8: a byte that is not (a Latin-1 file) is an error at its line and column, wherever
// it is, rather than text that no report could write as JSON.
TEST(EdnReader, InvalidUtf8IsAnErrorAtItsLineAndColumn) {
    EXPECT_EQ(edn_error_of("{:f :read\n :value \"caf\xE9\"}"),
              "line 2, column 13: not valid UTF-8 (byte 0xE9): EDN is UTF-8 text");
    EXPECT_EQ(edn_error_of("[:caf\xE9]"),
              "line 1, column 6: not valid UTF-8 (byte 0xE9): EDN is UTF-8 text");
    EXPECT_EQ(edn_error_of("; caf\xE9\n[]"),
              "line 1, column 6: not valid UTF-8 (byte 0xE9): EDN is UTF-8 text");
    EXPECT_EQ(edn_error_of("\"\xF0\x9F\x98\""),
              "line 1, column 2: not valid UTF-8 (byte 0xF0): EDN is UTF-8 text");
    EXPECT_EQ(edn_error_of("\"\xED\xA0\x80\""),
              "line 1, column 2: not valid UTF-8 (byte 0xED): EDN is UTF-8 text");
    // Columns count characters, not bytes: the ')' is the fifth character.
    EXPECT_EQ(edn_error_of("\"\xC3\xA9\" )"), "line 1, column 5: unexpected ')'");
}

// ##Inf, ##-Inf and ##NaN are values of their own; they used to be read as a tag that swallowed
// the next form.
TEST(EdnReader, SymbolicValuesAreValuesAndSwallowNothing) {
    EXPECT_EQ(read_one("[##Inf 1 ##-Inf 2 ##NaN]"),
              json::parse(R"(["##Inf", 1, "##-Inf", 2, "##NaN"])"));
    EXPECT_EQ(read_one("{:latency ##Inf, :f :read}"),
              json::parse(R"({"latency": "##Inf", "f": "read"})"));
    EXPECT_EQ(edn_error_of("[1 ##Infinity]"),
              "line 1, column 4: unknown symbolic value ##Infinity (EDN has ##Inf, ##-Inf, ##NaN)");
}

// A chain of discards (`#_ #_ …`, or a discard inside a discarded form) nests like any other
// form: it used to recurse once per discard, and a long one overflowed the stack.
TEST(EdnReader, DiscardsNestNoDeeperThanForms) {
    EXPECT_EQ(read_one("[#_ #_ 1 2 3]"), json::parse("[3]"));
    std::string chain;
    for (int i = 0; i < 100'000; ++i)
        chain += "#_";
    EXPECT_EQ(edn_error_of(chain + " 1"), "line 1, column 129: nested deeper than 64 levels");
    std::string nested;
    for (int i = 0; i < 100'000; ++i)
        nested += "#_[";
    const std::string inside = edn_error_of(nested);
    EXPECT_EQ(inside.rfind("line 1, column ", 0), 0u) << inside;
    EXPECT_EQ(inside.substr(inside.find(':')), ": nested deeper than 64 levels") << inside;
}

// A JSON value as EDN: null is nil, arrays are vectors.
std::string edn_of(const json& v) {
    if (v.is_null())
        return "nil";
    if (!v.is_array())
        return v.dump();
    std::string out = "[";
    for (std::size_t i = 0; i < v.size(); ++i)
        out += (i ? " " : "") + edn_of(v[i]);
    return out + "]";
}

// The same history as Jepsen would write it: keys as jepsen.independent tuples, keywords for
// types and functions, every third map over two lines, a comment now and then.
std::string as_edn(const std::string& jsonl, bool vector_of_ops) {
    std::istringstream in(jsonl);
    std::string out = vector_of_ops ? "[" : "";
    int n = 0;
    for (std::string line; std::getline(in, line); ++n) {
        const json e = json::parse(line);
        const json value = e.contains("value") ? e["value"] : json();
        out += "{:index " + e["index"].dump() + ", :type :" + e["type"].get<std::string>() +
               ", :process " + (e["process"].is_string() ? ":nemesis" : e["process"].dump()) +
               ", :f :" + e["f"].get<std::string>() + (n % 3 == 0 ? ",\n  " : ", ") + ":value " +
               (e.contains("key") ? edn_of(json::array({e["key"], value})) : edn_of(value)) +
               ", :time " + e["time"].dump();
        if (e.contains("error"))
            out += ", :error :" + e["error"].get<std::string>();
        out += "}";
        out += n % 7 == 0 ? " ; op " + std::to_string(n) + "\n" : "\n";
    }
    return out + (vector_of_ops ? "]\n" : "");
}

Report check_jsonl(const std::string& jsonl, const CheckOptions& options) {
    std::istringstream in(jsonl);
    return check_history(in, options);
}

Report check_edn(const std::string& edn_text, const CheckOptions& options) {
    const ConvertedHistory converted = jepsen_to_jsonl(edn_text);
    std::istringstream in(converted.jsonl);
    return check_history(in, options);
}

void expect_same_judgement(const Report& a, const Report& b) {
    EXPECT_EQ(a.verdict, b.verdict);
    EXPECT_EQ(a.events, b.events);
    ASSERT_NE(a.check("linearizability"), nullptr);
    ASSERT_NE(b.check("linearizability"), nullptr);
    for (const char* field : {"keys", "ops", "violations"}) {
        EXPECT_EQ(a.check("linearizability")->count(field),
                  b.check("linearizability")->count(field))
            << field;
    }
    ASSERT_EQ(a.witnesses.size(), b.witnesses.size());
    for (std::size_t i = 0; i < a.witnesses.size(); ++i)
        EXPECT_EQ(a.witnesses[i].message, b.witnesses[i].message);
}

TEST(JepsenHistory, AnEdnHistoryIsJudgedAsTheSameJsonlHistory) {
    CheckOptions options;
    options.model = Model::Register;
    for (std::uint64_t seed : {1, 2, 3}) {
        // Reads, writes and cas on two keys, with lost replies (info) and failed cas.
        const std::string jsonl = testing::RegisterHistoryGenerator(seed, 5, 2).generate(600);
        for (bool vector_of_ops : {true, false}) {
            SCOPED_TRACE("seed " + std::to_string(seed) + (vector_of_ops ? " vector" : " maps"));
            const std::string edn_text = as_edn(jsonl, vector_of_ops);
            const ConvertedHistory converted = jepsen_to_jsonl(edn_text);
            EXPECT_TRUE(converted.independent);
            const Report from_jsonl = check_jsonl(jsonl, options);
            const Report from_edn = check_edn(edn_text, options);
            EXPECT_EQ(from_jsonl.verdict, Verdict::Valid);
            EXPECT_EQ(from_edn.check("linearizability")->count("keys"), 2u);
            expect_same_judgement(from_jsonl, from_edn);
        }
    }
}

TEST(JepsenHistory, ANonLinearizableEdnHistoryFailsWithTheSameWitness) {
    CheckOptions options;
    options.model = Model::Register;
    std::string jsonl = testing::RegisterHistoryGenerator(7, 5, 2).generate(400);
    // One read sees a value nobody wrote.
    std::istringstream in(jsonl);
    std::string corrupted;
    bool done = false;
    for (std::string line; std::getline(in, line);) {
        json e = json::parse(line);
        if (!done && e["type"] == "ok" && e["f"] == "read") {
            e["value"] = 987654;
            line = e.dump();
            done = true;
        }
        corrupted += line + "\n";
    }
    jsonl = corrupted;
    ASSERT_NE(jsonl.find("987654"), std::string::npos);
    const Report from_jsonl = check_jsonl(jsonl, options);
    const Report from_edn = check_edn(as_edn(jsonl, true), options);
    EXPECT_EQ(from_jsonl.verdict, Verdict::Invalid);
    expect_same_judgement(from_jsonl, from_edn);
}

// Knossos's data: no :time, no :index, one key, nemesis ops among the client's.
constexpr const char* kFailedCasWithoutError = R"(
[{:process 0, :type :invoke, :f :write, :value 1}
 {:process 0, :type :ok, :f :write, :value 1}
 {:process :nemesis, :type :info, :f :start, :value nil}
 {:process 1, :type :invoke, :f :cas, :value [1 4]}
 {:process 1, :type :fail, :f :cas, :value [1 4]}
 {:process 2, :type :invoke, :f :read, :value nil}
 {:process 2, :type :ok, :f :read, :value 1}
 {:process :nemesis, :type :info, :f :stop, :value nil}])";

TEST(JepsenHistory, AFailedCasWithoutAnErrorDidNotHappenUnlessEveryFailObserves) {
    CheckOptions options;
    options.model = Model::Register;
    const ConvertedHistory converted = jepsen_to_jsonl(kFailedCasWithoutError);
    EXPECT_FALSE(converted.independent);
    // As Jepsen means it: the failed cas did not happen, and the read of 1 is fine.
    EXPECT_EQ(check_edn(kFailedCasWithoutError, options).verdict, Verdict::Valid);
    // Read as an observation, it says the register did not hold 1 - but it did.
    options.linearizability.every_fail_observes = true;
    const Report observed = check_edn(kFailedCasWithoutError, options);
    EXPECT_EQ(observed.verdict, Verdict::Invalid);
    ASSERT_EQ(observed.witnesses.size(), 1u);
    EXPECT_EQ(observed.witnesses[0].message,
              "not linearizable against register: process 1's cas (failed) (index 3) cannot be "
              "placed after 1 op; by then the model had the register at 1");
    // Knossos's report: the op that could not be placed, the last that was, and the path of
    // model states that led there.
    const json& lin = observed.check("linearizability")->fields;
    EXPECT_EQ(lin["valid?"], false);
    EXPECT_EQ(lin["op"]["f"], "cas");
    EXPECT_EQ(lin["op"]["process"], 1);
    EXPECT_EQ(lin["previous-ok"]["f"], "write");
    EXPECT_EQ(lin["final-paths"],
              json::parse(R"([[{"op": )" + lin["previous-ok"].dump() +
                          R"(, "model": {"value": 1}}, {"op": )" + lin["op"].dump() +
                          R"(, "model": "inconsistent"}]])"));
}

// A register that held 0 before the history began, as `--initial 0` says.
TEST(JepsenHistory, TheRegisterStartsNilUnlessTheInitialValueIsGiven) {
    const std::string cas_from_zero = R"([
 {:process 0, :type :invoke, :f :cas, :value [0 1]}  {:process 0, :type :ok, :f :cas, :value [0 1]}
 {:process 1, :type :invoke, :f :read}  {:process 1, :type :ok, :f :read, :value 1}])";
    CheckOptions options;
    options.model = Model::Register;
    EXPECT_EQ(check_edn(cas_from_zero, options).verdict, Verdict::Invalid);
    options.linearizability.initial_value = 0;
    EXPECT_EQ(check_edn(cas_from_zero, options).verdict, Verdict::Valid);
    options.linearizability.initial_value = 5;
    EXPECT_EQ(check_edn(cas_from_zero, options).verdict, Verdict::Invalid);
}

// Process 1 releases the lock process 0 took: Knossos's mutex allows it, an owner-aware one does
// not. A release of a free lock is impossible in both.
TEST(JepsenHistory, UnownedMutexIsKnossossMutex) {
    const std::string someone_elses_release = R"([
 {:process 0, :type :invoke, :f :acquire}  {:process 0, :type :ok, :f :acquire}
 {:process 1, :type :invoke, :f :release}  {:process 1, :type :ok, :f :release}
 {:process 2, :type :invoke, :f :acquire}  {:process 2, :type :ok, :f :acquire}])";
    const std::string free_release = R"([
 {:process 0, :type :invoke, :f :release}  {:process 0, :type :ok, :f :release}])";
    CheckOptions options;
    options.only = std::vector<std::string>{"linearizability"};
    options.model = Model::UnownedMutex;
    EXPECT_EQ(check_edn(someone_elses_release, options).verdict, Verdict::Valid);
    EXPECT_EQ(check_edn(free_release, options).verdict, Verdict::Invalid);
    options.model = Model::Mutex;
    EXPECT_EQ(check_edn(someone_elses_release, options).verdict, Verdict::Invalid);
    EXPECT_EQ(check_edn(free_release, options).verdict, Verdict::Invalid);

    // The final path names real processes (the search numbers them densely per key).
    const std::string high_ids = R"([
 {:process 10, :type :invoke, :f :acquire}  {:process 10, :type :ok, :f :acquire}
 {:process 11, :type :invoke, :f :release}  {:process 11, :type :ok, :f :release}])";
    options.linearizability.refute = false;  // the search's path, not lock_refutation.cpp's
    const Report r = check_edn(high_ids, options);
    const json& path = r.check("linearizability")->fields["final-paths"][0];
    ASSERT_EQ(path.size(), 2u) << path.dump();
    EXPECT_EQ(path[0]["model"], json::parse(R"({"holder": 10, "depth": 1})"));
    EXPECT_EQ(path[1]["op"]["process"], 11);
    EXPECT_EQ(path[1]["model"], "inconsistent");
}

// Every value a pair: independent only when a cas's value sits inside the pair.
TEST(JepsenHistory, ACasOnlyHistoryIsNotMistakenForAnIndependentOne) {
    EXPECT_FALSE(jepsen_to_jsonl(R"([{:process 0, :type :invoke, :f :cas, :value [1 2]}
                                      {:process 0, :type :fail, :f :cas, :value [1 2]}])")
                     .independent);
    const ConvertedHistory independent =
        jepsen_to_jsonl(R"([{:process 0, :type :invoke, :f :cas, :value [7 [1 2]]}
                            {:process 0, :type :info, :f :cas, :value [7 nil]}])");
    EXPECT_TRUE(independent.independent);
    EXPECT_NE(independent.jsonl.find(R"("key":"7","value":[1,2])"), std::string::npos)
        << independent.jsonl;
}

TEST(JepsenHistory, ADiscardedFormLeavesTheOpLinesAlone) {
    const ConvertedHistory converted =
        jepsen_to_jsonl("[#_ [1\n 2]\n {:process 0, :type :invoke, :f :read}\n]");
    ASSERT_EQ(converted.edn_positions.size(), 1u);
    EXPECT_EQ(converted.edn_positions[0].line, 3u);
    EXPECT_EQ(converted.edn_positions[0].column, 2u);
}

TEST(JepsenHistory, AMalformedOpNamesItsEdnLineAndColumn) {
    const std::string text = "{:process 0, :type :invoke, :f :read}\n\n{:process 0, :type :ok}\n";
    try {
        jepsen_to_jsonl(text);
        FAIL() << "no error";
    } catch (const HistoryError& e) {
        EXPECT_STREQ(e.what(), "line 3, column 1: an op needs :f");
    }
    // A fault the JSONL reader finds is located on the EDN line too.
    const std::string unpaired =
        "{:process 0, :type :invoke, :f :read}\n"
        "{:process 0, :type :invoke, :f :write, :value 3}\n";
    const ConvertedHistory converted = jepsen_to_jsonl(unpaired);
    try {
        std::istringstream in(converted.jsonl);
        check_history(in, {});
        FAIL() << "no error";
    } catch (const HistoryError& e) {
        EXPECT_EQ(
            converted.locate(e),
            "line 2, column 1: process 0 invokes `write` while its `read` from line 1 is still in "
            "flight");
    }
}

// Inside one vector, each op's own place: the element that is not an op, or lacks a field.
TEST(JepsenHistory, EveryMalformedOpInAVectorNamesItsLineAndColumn) {
    const std::vector<std::pair<std::string, std::string>> cases{
        {"[this]", "line 1, column 2: an op must be a map, not \"this\""},
        {"[{:type :invoke, :f :read, :process 0}\n   42]",
         "line 2, column 4: an op must be a map, not 42"},
        {"[{:type :invoke, :f :read, :process 0}\n {:f :read, :process 0}]",
         "line 2, column 2: an op needs :type (:invoke, :ok, :fail or :info)"},
        {"[{:type :invoke, :process 0}]", "line 1, column 2: an op needs :f"},
        {"  {:type :invoke, :f :read}", "line 1, column 3: an op needs :process"},
        {"{:type :invoke, :f :read, :process 0}\n [{:type :ok, :f :read, :process 0}]",
         "line 2, column 2: a history is one vector (or list) of ops, or a sequence of op maps, "
         "not both"},
    };
    for (const auto& [text, message] : cases) {
        try {
            const ConvertedHistory converted = jepsen_to_jsonl(text);
            ADD_FAILURE() << text << ": no error";
        } catch (const HistoryError& e) {
            EXPECT_EQ(e.what(), message) << text;
            // As the command line prints it: the conversion's own position, kept.
            EXPECT_EQ(ConvertedHistory{}.locate(e), message) << text;
        }
    }
}

}  // namespace
}  // namespace lockbench::checker
