#include "engine/run/result_folder.hpp"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <unistd.h>

#include "engine/servers/redis_server.hpp"

namespace lockbench {

namespace fs = std::filesystem;

namespace {

std::string utc_now(const char* strftime_format) {
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, strftime_format, &tm);
    return buf;
}

}  // namespace

std::string utc_stamp() {
    return utc_now("%Y%m%dT%H%M%SZ");
}

std::string utc_iso_now() {
    return utc_now("%Y-%m-%dT%H:%M:%SZ");
}

std::string safe_name(const std::string& name) {
    std::string out;
    for (char c : name)
        out.push_back(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ? c
                                                                                          : '_');
    return out.empty() ? "run" : out;
}

void write_atomically(const fs::path& path, const std::string& text) {
    fs::path tmp = path;
    tmp += ".tmp";
    std::error_code ec;
    {
        std::ofstream out(tmp, std::ios::binary);
        out << text;
        out.flush();
        if (!out) {
            fs::remove(tmp, ec);
            throw EnvironmentError("cannot write " + path.string() + ": " + std::strerror(errno));
        }
    }
    fs::rename(tmp, path, ec);
    if (ec) {
        std::error_code ignored;
        fs::remove(tmp, ignored);
        throw EnvironmentError("cannot write " + path.string() + ": " + ec.message());
    }
}

ResultFolder::ResultFolder(const fs::path& out_dir, std::string final_name)
    : out_dir_(out_dir), final_name_(std::move(final_name)) {
    std::error_code ec;
    fs::create_directories(out_dir_, ec);
    if (ec)
        throw EnvironmentError("cannot create " + out_dir_.string() + ": " + ec.message());
    tmp_ = out_dir_ / (".tmp-" + final_name_ + "-" + std::to_string(::getpid()));
    fs::create_directory(tmp_, ec);
    if (ec)
        throw EnvironmentError("cannot write in " + out_dir_.string() + ": " + ec.message());
}

ResultFolder::~ResultFolder() {
    if (!committed_) {
        std::error_code ec;
        fs::remove_all(tmp_, ec);
    }
}

fs::path ResultFolder::commit() {
    fs::path final_dir = out_dir_ / final_name_;
    for (int i = 2; fs::exists(final_dir); ++i)
        final_dir = out_dir_ / (final_name_ + "-" + std::to_string(i));
    std::error_code ec;
    fs::rename(tmp_, final_dir, ec);
    if (ec)
        throw EnvironmentError("cannot finish " + final_dir.string() + ": " + ec.message());
    committed_ = true;
    return final_dir;
}

}  // namespace lockbench
