#pragma once

#include <string>
#include <string_view>

namespace lockbench {

// Text made safe inside HTML or XML, as element text and as a double-quoted attribute value: a
// scenario name or a failure message with '<' or '"' in it must not end the element or attribute
// it stands in (timeline.html, compare.html, JUnit).
inline std::string markup_escape(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            default:
                out.push_back(c);
        }
    }
    return out;
}

}  // namespace lockbench
