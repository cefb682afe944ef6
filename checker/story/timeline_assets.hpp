#pragma once

// timeline.html's style and script, kept as real files (checker/story/timeline.css and .js) and
// embedded at build time (cmake/EmbedText.cmake), as the strategies' Lua scripts are: a reader and
// their tools see CSS and JavaScript, and the page needs no file beside it.

#include <map>
#include <string_view>

namespace lockbench::checker {

// Generated: "timeline.css" and "timeline.js" -> their text.
const std::map<std::string_view, std::string_view>& timeline_assets();

}  // namespace lockbench::checker
