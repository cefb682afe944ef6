#pragma once

// Results appear whole or not at all: a file is written beside its final name and renamed into
// place; a run's or a suite's folder is filled under a hidden name and renamed when complete. A
// crash, Ctrl-C or a full disk never leaves half of either behind.

#include <filesystem>
#include <string>

namespace lockbench {

// Now in UTC as YYYYMMDDTHHMMSSZ: result folder names sort by time.
std::string utc_stamp();

// Now in UTC as ISO 8601, YYYY-MM-DDTHH:MM:SSZ: the time a result was made, as files state it.
std::string utc_iso_now();

// `name` with everything but letters, digits, '-' and '_' turned into '_' ("run" if empty).
std::string safe_name(const std::string& name);

// Writes `path` whole or not at all (a temp file beside it, then a rename); throws
// EnvironmentError naming the file, and leaves no temp file behind.
void write_atomically(const std::filesystem::path& path, const std::string& text);

class ResultFolder {
  public:
    // Creates `<out_dir>/.tmp-<final_name>-<pid>`; throws EnvironmentError if it cannot.
    ResultFolder(const std::filesystem::path& out_dir, std::string final_name);
    // Removes the hidden folder and everything in it unless it was committed.
    ~ResultFolder();
    ResultFolder(const ResultFolder&) = delete;
    ResultFolder& operator=(const ResultFolder&) = delete;

    // Where to write meanwhile.
    const std::filesystem::path& tmp() const { return tmp_; }
    // Renames it to `<out_dir>/<final_name>` (with -2, -3, ... if that is taken) and returns that;
    // throws EnvironmentError if it cannot.
    std::filesystem::path commit();

  private:
    std::filesystem::path out_dir_;
    std::string final_name_;
    std::filesystem::path tmp_;
    bool committed_ = false;
};

}  // namespace lockbench
