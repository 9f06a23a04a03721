// StopMatcher: a stream never shows part of a stop string, and the text ends before it.
#include "stop_strings.hpp"

#include <gtest/gtest.h>

namespace {

using pocket::serve::StopMatcher;

// Feeds pieces; returns what was released, with "|" between releases, and whether it stopped.
std::pair<std::string, bool> feed(std::vector<std::string> stops, std::vector<std::string> pieces) {
    StopMatcher m(std::move(stops));
    std::string out;
    for (const auto& p : pieces) {
        bool stopped = false;
        out += m.push(p, stopped) + "|";
        if (stopped) return {out, true};
    }
    return {out + m.flush(), false};
}

TEST(ServeStopStrings, TextBeforeTheStopIsKeptAndTheStopCut) {
    EXPECT_EQ(feed({"END"}, {"abc", "EN", "D", "more"}), std::make_pair(std::string("abc|||"), true));
    EXPECT_EQ(feed({"END"}, {"abcEND tail"}), std::make_pair(std::string("abc|"), true));
}

TEST(ServeStopStrings, APossibleStartIsHeldBackThenReleased) {
    // "E" and "EN" may start "END": held until "x" rules it out.
    EXPECT_EQ(feed({"END"}, {"ab", "E", "N", "x"}), std::make_pair(std::string("ab|||ENx|"), false));
    EXPECT_EQ(feed({"END"}, {"abE"}), std::make_pair(std::string("ab|E"), false)) << "flushed at the end";
}

TEST(ServeStopStrings, TheEarliestOfSeveralStopsWins) {
    EXPECT_EQ(feed({"two", "one"}, {"zero one two"}), std::make_pair(std::string("zero |"), true));
    EXPECT_EQ(feed({}, {"a", "b"}), std::make_pair(std::string("a|b|"), false));
}

TEST(ServeStopStrings, MultiByteStopsHoldWholeCharacters) {
    EXPECT_EQ(feed({"é!"}, {"caf\xc3\xa9", "!"}), std::make_pair(std::string("caf||"), true));
}

}  // namespace
