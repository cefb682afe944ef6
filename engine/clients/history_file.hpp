#pragma once

// history.jsonl's file, written past the page cache (O_DIRECT) where the filesystem allows it.
// A run writes its history once, at up to ~150 MB/s, and the checker reads it once, after the
// run. Copying it into the page cache on the way costs the engine's cores the copy (0.16 s of CPU
// per GB into memory the kernel has used before), and on a virtual machine that hands freed
// memory back to its host (free page reporting) a host page fault for every fresh 4 KB page as
// well: 2.4 s per GB here, against 0.06-0.1 s written direct (docs/performance.md). Where
// O_DIRECT is refused (tmpfs, some network filesystems) the file is written through the page
// cache as before. Single-threaded: the recorder's writer's.

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

namespace lockbench {

class HistoryFile {
  public:
    enum class Writes { DirectWherePossible, ThroughThePageCache };
    // Creates or truncates `path`. Throws EnvironmentError.
    explicit HistoryFile(const std::filesystem::path& path,
                         Writes writes = Writes::DirectWherePossible);
    ~HistoryFile();
    HistoryFile(const HistoryFile&) = delete;
    HistoryFile& operator=(const HistoryFile&) = delete;

    // Appends `bytes`; what does not fill a whole block waits for the next call or close().
    // Returns false with error() set when the file could not be written (e.g. the disk is full).
    bool append(std::string_view bytes);
    // Writes what is left and closes the file: false with error() set when that failed.
    bool close();
    const std::string& error() const { return error_; }
    bool direct() const { return direct_; }

  private:
    bool write_all(const char* data, std::size_t size);
    bool stop_writing_direct();

    // O_DIRECT wants the buffer's address, the length and the offset all in whole blocks; 4096
    // is a multiple of every logical block size Linux devices have.
    static constexpr std::size_t kBlock = 4096;

    int fd_ = -1;
    bool direct_ = false;
    char* staged_ = nullptr;  // kBlock-aligned: bytes not yet written, from staged_[0]
    std::size_t staged_size_ = 0;
    std::size_t staged_capacity_ = 0;
    std::string error_;
};

}  // namespace lockbench
