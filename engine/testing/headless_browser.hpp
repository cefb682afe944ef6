#pragma once

// A self-contained page lockbench writes (timeline.html, compare.html) opened as a user opens it:
// in Debian's chromium, headless, from the file alone.

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace lockbench::testing {

inline bool chromium_installed() {
    return std::system("command -v chromium >/dev/null 2>&1") == 0;
}

class HeadlessBrowser {
  public:
    // `profile`: a folder of the test's own, so that runs never share a browser profile.
    explicit HeadlessBrowser(const std::filesystem::path& profile)
        : command_(
              "timeout 120 chromium --headless --no-sandbox --disable-gpu "
              "--hide-scrollbars --window-size=1300,900 --user-data-dir=" +
              profile.string() + " ") {}

    // The page's DOM once its scripts ran; "" when chromium could not run.
    std::string dom(const std::filesystem::path& page) const {
        return output_of(command_ + "--dump-dom 'file://" + page.string() + "' 2>/dev/null");
    }
    // Writes the page as drawn to `png`.
    void screenshot(const std::filesystem::path& page, const std::filesystem::path& png) const {
        output_of(command_ + "--screenshot=" + png.string() + " 'file://" + page.string() +
                  "' 2>/dev/null");
    }

  private:
    // Runs `command`, returning its standard output ("" when it could not run).
    static std::string output_of(const std::string& command) {
        std::string out;
        FILE* pipe = ::popen(command.c_str(), "r");
        if (!pipe)
            return out;
        char buf[4096];
        for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;)
            out.append(buf, n);
        ::pclose(pipe);
        return out;
    }

    std::string command_;
};

}  // namespace lockbench::testing
